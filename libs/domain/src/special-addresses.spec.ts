import { describe, expect, it } from 'vitest';
import { AddressPolicy, SPECIAL_IPV4_RANGES, SPECIAL_IPV6_RANGES, parseIpAddress, specialPurposeRange } from './special-addresses.js';

describe('specialPurposeRange', () => {
  it.each<[string, string | null]>([
    // IPv4: every registry range, probed at its first and last address where that differs.
    ['0.0.0.0', '"this network"'],
    ['0.255.255.255', '"this network"'],
    ['10.0.0.1', 'private-use'],
    ['10.255.255.255', 'private-use'],
    ['100.64.0.0', 'shared address space (carrier-grade NAT)'],
    ['100.127.255.255', 'shared address space (carrier-grade NAT)'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['172.16.0.1', 'private-use'],
    ['172.31.255.255', 'private-use'],
    ['192.0.0.1', 'IETF protocol assignments'],
    ['192.0.0.170', 'IETF protocol assignments'],
    ['192.0.2.10', 'documentation (TEST-NET-1)'],
    ['192.31.196.1', 'AS112-v4'],
    ['192.52.193.1', 'AMT'],
    ['192.88.99.1', 'deprecated 6to4 relay anycast'],
    ['192.168.1.1', 'private-use'],
    ['192.175.48.1', 'direct delegation AS112 service'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation (TEST-NET-2)'],
    ['203.0.113.9', 'documentation (TEST-NET-3)'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['240.0.0.1', 'reserved (and limited broadcast)'],
    ['255.255.255.255', 'reserved (and limited broadcast)'],
    // IPv4: public neighbours of the ranges stay reachable.
    ['9.255.255.255', null],
    ['11.0.0.0', null],
    ['100.63.255.255', null],
    ['100.128.0.0', null],
    ['126.255.255.255', null],
    ['128.0.0.0', null],
    ['172.15.255.255', null],
    ['172.32.0.0', null],
    ['192.0.1.0', null],
    ['192.167.255.255', null],
    ['192.169.0.0', null],
    ['198.17.255.255', null],
    ['198.20.0.0', null],
    ['223.255.255.255', null],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
    // IPv6.
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::7f00:1', 'deprecated IPv4-compatible'],
    ['::127.0.0.1', 'deprecated IPv4-compatible'],
    ['::8.8.8.8', 'deprecated IPv4-compatible'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::ffff:10.0.0.1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['64:ff9b::7f00:1', 'IPv4-IPv6 translation (NAT64)'],
    ['64:ff9b::10.0.0.1', 'IPv4-IPv6 translation (NAT64)'],
    ['64:ff9b:1::a00:1', 'IPv4-IPv6 local-use translation'],
    ['100::1', 'discard-only'],
    ['100:0:0:1::1', 'dummy IPv6 prefix'],
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:1::1', 'IETF protocol assignments'],
    ['2001:2::1', 'benchmarking'],
    ['2001:3::1', 'AMT'],
    ['2001:4:112::1', 'AS112-v6'],
    ['2001:10::1', 'deprecated ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['2001:30::1', 'drone remote ID'],
    ['2001:1ff:ffff::1', 'IETF protocol assignments'],
    ['2001:db8::1', 'documentation'],
    ['2002:7f00:1::1', '6to4'],
    ['2002:c0a8:101::1', '6to4'],
    ['2620:4f:8000::1', 'direct delegation AS112 service'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'segment routing (SRv6) SIDs'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local unicast'],
    ['febf:ffff::1', 'link-local unicast'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['4000::1', 'reserved IPv6 space outside global unicast'],
    ['1::1', 'reserved IPv6 space outside global unicast'],
    ['fec0::1', 'reserved IPv6 space outside global unicast'],
    ['2001:200::1', null],
    ['2001:4860:4860::8888', null],
    ['2606:4700::1111', null],
    ['2a00:1450:4001:80b::200e', null],
    ['2003::1', null],
    // Not literals: host names are checked on the addresses they resolve to.
    ['example.com', null],
    ['localhost', null],
  ])('%s → %s', (address, expected) => {
    expect(specialPurposeRange(address)).toBe(expected);
  });

  it('has every registry range refuse its own network address', () => {
    for (const range of [...SPECIAL_IPV4_RANGES, ...SPECIAL_IPV6_RANGES]) {
      expect(specialPurposeRange(range.cidr.split('/')[0]!), range.cidr).not.toBeNull();
    }
  });
});

describe('parseIpAddress', () => {
  it.each<[string, bigint | null]>([
    ['1.2.3.4', 0x01020304n],
    ['255.255.255.255', 0xffffffffn],
    ['256.1.1.1', null],
    ['01.2.3.4', null],
    ['1.2.3', null],
    ['1.2.3.4.5', null],
    ['::', 0n],
    ['::1', 1n],
    ['1::', 1n << 112n],
    ['1:2:3:4:5:6:7:8', 0x00010002000300040005000600070008n],
    ['::ffff:1.2.3.4', 0xffff01020304n],
    ['1:2:3:4:5:6:7:8:9', null],
    ['1::2::3', null],
    ['12345::', null],
    ['1.2.3.4::', null],
    ['fe80::1%eth0', null],
    ['example.com', null],
  ])('%s', (text, expected) => {
    expect(parseIpAddress(text)?.value ?? null).toBe(expected);
  });
});

describe('AddressPolicy', () => {
  it.each<[string[], string, boolean]>([
    [[], '127.0.0.1', false],
    [[], '8.8.8.8', true],
    [['127.0.0.1'], '127.0.0.1', true],
    [['127.0.0.1'], '127.0.0.2', false],
    [['10.0.0.0/8'], '10.9.9.9', true],
    [['10.0.0.0/8'], '::ffff:10.9.9.9', true],
    [['10.0.0.0/8'], '11.0.0.1', true],
    [['10.0.0.0/8'], '192.168.0.1', false],
    [['fd00::/8'], 'fd00::5', true],
    [['fd00::/8'], 'fc00::5', false],
    [['::1'], '::1', true],
    [['internal.example'], '10.0.0.1', false],
  ])('allow-list %j: %s reachable %s', (allowList, address, reachable) => {
    const refusal = new AddressPolicy(allowList).refusal(address);
    expect(refusal === null).toBe(reachable);
    if (refusal) expect(refusal).toMatch(/KAIROS_HTTP_ALLOWLIST/);
  });

  it('allows host names the list names, in any case', () => {
    const policy = new AddressPolicy(['Internal.Example']);
    expect(policy.hostAllowed('internal.example')).toBe(true);
    expect(policy.hostAllowed('other.example')).toBe(false);
  });
});

describe('AddressPolicy.urlRefusal', () => {
  it.each<[string[], string, boolean]>([
    [[], 'http://127.0.0.1:8080/hook', false],
    [[], 'http://[::1]/hook', false],
    [[], 'http://[::ffff:169.254.169.254]/latest', false],
    [[], 'http://[64:ff9b::a9fe:a9fe]/', false],
    [[], 'http://2130706433/', false],
    [[], 'http://0x7f.1/', false],
    [[], 'https://example.com/hook', true],
    [[], 'http://localhost:3000/hook', true],
    [['127.0.0.1'], 'http://127.0.0.1:8080/hook', true],
    [['localhost'], 'http://LOCALHOST/hook', true],
  ])('allow-list %j: %s callable %s', (allowList, url, callable) => {
    expect(new AddressPolicy(allowList).urlRefusal(url) === null).toBe(callable);
  });
});
