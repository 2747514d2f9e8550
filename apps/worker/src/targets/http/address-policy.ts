/**
 * Which addresses an HTTP target may reach. Loopback, private, link-local, carrier-grade NAT and
 * unspecified addresses are refused (a scheduler must not become a way into the private network)
 * unless the configured allow-list names the host, the address or a CIDR range containing it.
 */
import { BlockList, isIP } from 'node:net';

const FORBIDDEN: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
];

export class AddressPolicy {
  private readonly forbidden = new BlockList();
  private readonly allowed = new BlockList();
  private readonly allowedHosts = new Set<string>();

  /** `allowList` entries: host names, IP addresses, or CIDR ranges ("10.0.0.0/8"). */
  constructor(allowList: readonly string[]) {
    for (const [network, prefix, type] of FORBIDDEN) this.forbidden.addSubnet(network, prefix, type);
    for (const entry of allowList) {
      const [address, prefix] = entry.split('/');
      const family = isIP(address ?? '');
      if (family === 0) this.allowedHosts.add(entry.toLowerCase());
      else if (prefix === undefined) this.allowed.addAddress(address!, family === 4 ? 'ipv4' : 'ipv6');
      else this.allowed.addSubnet(address!, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  hostAllowed(host: string): boolean {
    return this.allowedHosts.has(host.toLowerCase());
  }

  /** Null when `address` may be reached, else why not. */
  refusal(address: string): string | null {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const ip = mapped ?? address;
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.allowed.check(ip, type)) return null;
    return this.forbidden.check(ip, type)
      ? `${address} is a loopback, private or link-local address; allow it with KAIROS_HTTP_ALLOWLIST if this is intended`
      : null;
  }
}
