/**
 * Which IP addresses an HTTP target may reach. Every range of the IANA IPv4 and IPv6
 * Special-Purpose Address Registries is refused, with IPv4 multicast (224.0.0.0/4), IPv6 multicast
 * (ff00::/8), the deprecated IPv4-compatible IPv6 form (::a.b.c.d) and every IPv6 address outside
 * global unicast (2000::/3) besides: a scheduler must not become a way into the private network,
 * nor through an address that embeds or translates to one (IPv4-mapped, NAT64, 6to4, Teredo). An
 * allow-list of addresses and CIDR ranges lifts the refusal for what an operator means to reach.
 */

export interface AddressRange {
  cidr: string;
  name: string;
}

/** IANA IPv4 Special-Purpose Address Registry, plus multicast (a registry of its own). */
export const SPECIAL_IPV4_RANGES: readonly AddressRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network"' },
  { cidr: '10.0.0.0/8', name: 'private-use' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local' },
  { cidr: '172.16.0.0/12', name: 'private-use' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4' },
  { cidr: '192.52.193.0/24', name: 'AMT' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private-use' },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved (and limited broadcast)' },
];

/** IANA IPv6 Special-Purpose Address Registry, plus multicast, IPv4-compatible and non-global-unicast space. */
export const SPECIAL_IPV6_RANGES: readonly AddressRange[] = [
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'deprecated IPv4-compatible' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped' },
  { cidr: '64:ff9b::/96', name: 'IPv4-IPv6 translation (NAT64)' },
  { cidr: '64:ff9b:1::/48', name: 'IPv4-IPv6 local-use translation' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '100:0:0:1::/64', name: 'dummy IPv6 prefix' },
  { cidr: '2001::/23', name: 'IETF protocol assignments' },
  { cidr: '2001::/32', name: 'Teredo' },
  { cidr: '2001:2::/48', name: 'benchmarking' },
  { cidr: '2001:3::/32', name: 'AMT' },
  { cidr: '2001:4:112::/48', name: 'AS112-v6' },
  { cidr: '2001:10::/28', name: 'deprecated ORCHID' },
  { cidr: '2001:20::/28', name: 'ORCHIDv2' },
  { cidr: '2001:30::/28', name: 'drone remote ID' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '2002::/16', name: '6to4' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs' },
  { cidr: 'fc00::/7', name: 'unique-local' },
  { cidr: 'fe80::/10', name: 'link-local unicast' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

interface ParsedRange {
  version: 4 | 6;
  network: bigint;
  bits: number;
  name: string;
}

interface ParsedAddress {
  version: 4 | 6;
  value: bigint;
}

/** The address as a number, or null when it is not an IPv4 or IPv6 literal (host names, zones). */
export function parseIpAddress(text: string): ParsedAddress | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return { version: 4, value: v4 };
  const v6 = parseIpv6(text);
  return v6 === null ? null : { version: 6, value: v6 };
}

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || text.split('::').length > 2) return null;
  const [head, tail] = text.split('::') as [string, string | undefined];
  const split = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const words: bigint[] = [];
  const expand = (parts: string[]): bigint[] | null => {
    const out: bigint[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIpv4(part);
        if (v4 === null) return null;
        out.push(v4 >> 16n, v4 & 0xffffn);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) out.push(BigInt(`0x${part}`));
      else return null;
    }
    return out;
  };
  if (tail === undefined) {
    const all = expand(split(head));
    if (all === null || all.length !== 8) return null;
    words.push(...all);
  } else {
    const left = expand(split(head));
    const right = expand(split(tail));
    if (left === null || right === null || left.length + right.length > 7) return null;
    // A dotted quad may only end the address.
    if (split(head).some((p) => p.includes('.'))) return null;
    words.push(...left, ...Array<bigint>(8 - left.length - right.length).fill(0n), ...right);
  }
  return words.reduce((acc, word) => (acc << 16n) | word, 0n);
}

/** Parses "a.b.c.d/n", "x::/n" or a bare address (a range of one). */
export function parseCidr(text: string, name = text): ParsedRange | null {
  const [address, prefix, extra] = text.split('/');
  if (extra !== undefined || address === undefined) return null;
  const parsed = parseIpAddress(address);
  if (parsed === null) return null;
  const width = parsed.version === 4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return null;
  const bits = prefix === undefined ? width : Number(prefix);
  if (bits > width) return null;
  return { version: parsed.version, network: parsed.value >> BigInt(width - bits), bits, name };
}

function contains(range: ParsedRange, address: ParsedAddress): boolean {
  const width = address.version === 4 ? 32 : 128;
  return range.version === address.version && address.value >> BigInt(width - range.bits) === range.network;
}

// Marked pure: a bundle that checks no address (the SDK's) drops the ranges with the parsing.
const IPV4_MAPPED = /* @__PURE__ */ parseCidr('::ffff:0:0/96')!;
const GLOBAL_UNICAST = /* @__PURE__ */ parseCidr('2000::/3')!;
const SPECIAL_RANGES: readonly ParsedRange[] = /* @__PURE__ */ [...SPECIAL_IPV4_RANGES, ...SPECIAL_IPV6_RANGES].map((r) => parseCidr(r.cidr, r.name)!);

/** An IPv4-mapped IPv6 address is the IPv4 address it carries (for the allow-list as for the refusal). */
function unmapped(address: ParsedAddress): ParsedAddress {
  return address.version === 6 && contains(IPV4_MAPPED, address) ? { version: 4, value: address.value & 0xffffffffn } : address;
}

/** The special-purpose range `address` falls in (its name), or null for an ordinary public address or a non-literal. */
export function specialPurposeRange(address: string): string | null {
  const parsed = parseIpAddress(address);
  if (parsed === null) return null;
  const special = SPECIAL_RANGES.filter((range) => contains(range, parsed)).sort((a, b) => b.bits - a.bits)[0];
  if (special) return special.name;
  if (parsed.version === 6 && !contains(GLOBAL_UNICAST, parsed)) return 'reserved IPv6 space outside global unicast';
  return null;
}

/** Refuses special-purpose addresses unless the allow-list names the host, the address or a range holding it. */
export class AddressPolicy {
  private readonly allowedRanges: ParsedRange[] = [];
  private readonly allowedHosts = new Set<string>();

  /** `allowList` entries: host names, IP addresses, or CIDR ranges ("10.0.0.0/8"). */
  constructor(allowList: readonly string[]) {
    for (const entry of allowList) {
      const range = parseCidr(entry);
      if (range) this.allowedRanges.push(range);
      else this.allowedHosts.add(entry.toLowerCase());
    }
  }

  hostAllowed(host: string): boolean {
    return this.allowedHosts.has(host.toLowerCase());
  }

  /**
   * Why a URL whose host is an address literal may not be called, or null. Host names pass here:
   * they are checked on the addresses they resolve to, when the call is made.
   */
  urlRefusal(url: string): string | null {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return this.hostAllowed(host) ? null : this.refusal(host);
  }

  /** Null when `address` may be reached, else why not (a sentence naming the range and the way out). */
  refusal(address: string): string | null {
    const parsed = parseIpAddress(address);
    if (parsed === null) return null;
    const plain = unmapped(parsed);
    if (this.allowedRanges.some((range) => contains(range, plain) || contains(range, parsed))) return null;
    const range = specialPurposeRange(address);
    return range === null ? null : `${address} is a ${range} address; allow it with KAIROS_HTTP_ALLOWLIST if this is intended`;
  }
}
