// The addresses an outbound call may not reach, as data. The blocks come from
// IANA's IPv4 and IPv6 Special-Purpose Address Registries: every block that is
// not globally reachable, plus multicast, 240.0.0.0/4, broadcast, and the IPv6
// blocks that carry an IPv4 address inside (IPv4-compatible, NAT64, 6to4,
// Teredo), since through them any IPv4 address, a private one included, could
// be reached. An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address it
// maps, so that address is judged instead. This host's own interface addresses
// are refused as well: a server calling its own public address still calls itself.
import { isIP } from 'node:net';
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import ipaddr from 'ipaddr.js';

export interface RefusedRange {
  cidr: string;
  /** What the block is, for the refusal's message ("127.0.0.1, loopback"). */
  name: string;
}

export const REFUSED_IPV4: readonly RefusedRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network"' },
  { cidr: '0.0.0.0/32', name: 'unspecified' },
  { cidr: '10.0.0.0/8', name: 'private-use' },
  { cidr: '100.64.0.0/10', name: 'shared address space, carrier-grade NAT' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local, cloud metadata' },
  { cidr: '172.16.0.0/12', name: 'private-use' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation, TEST-NET-1' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private-use' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation, TEST-NET-2' },
  { cidr: '203.0.113.0/24', name: 'documentation, TEST-NET-3' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast' },
];

export const REFUSED_IPV6: readonly RefusedRange[] = [
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'deprecated IPv4-compatible' },
  { cidr: '64:ff9b::/96', name: 'NAT64 IPv4/IPv6 translation' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '100:0:0:1::/64', name: 'dummy prefix' },
  { cidr: '2001::/23', name: 'IETF protocol assignments, Teredo among them' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '2002::/16', name: '6to4' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'SRv6 segment identifiers' },
  { cidr: 'fc00::/7', name: 'unique-local' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'deprecated site-local' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

/** Why an address may not be reached: which block (or interface) it is in. */
export interface Refusal {
  address: string;
  /** The refused block (`127.0.0.0/8`), or `interface eth0`. */
  range: string;
  name: string;
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;
const compiled = [...REFUSED_IPV4, ...REFUSED_IPV6].map((range) => ({ ...range, block: ipaddr.parseCIDR(range.cidr) }));

/**
 * The address as ipaddr.js should see it. IPv6 text goes through the WHATWG URL
 * parser first: ipaddr.js reads `::1.2.3.4` as IPv4-mapped, but it is IPv4-compatible.
 */
function parse(address: string): Parsed | null {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return ipaddr.IPv4.parse(bare);
  if (family === 6) return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  return null;
}

/** The most specific refused block holding `ip` (so `::1` is loopback, not IPv4-compatible). */
function refusedBlock(ip: Parsed): RefusedRange | null {
  let best: (typeof compiled)[number] | null = null;
  for (const range of compiled) {
    const [network, bits] = range.block;
    if (network.kind() !== ip.kind() || !ip.match(network, bits)) continue;
    if (!best || bits > best.block[1]) best = range;
  }
  return best && { cidr: best.cidr, name: best.name };
}

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

function ownInterface(ip: Parsed, interfaces: Interfaces): string | null {
  const text = ip.toNormalizedString();
  for (const [name, addresses] of Object.entries(interfaces)) {
    for (const entry of addresses ?? []) {
      const own = parse(entry.address);
      if (own && own.kind() === ip.kind() && own.toNormalizedString() === text) return name;
    }
  }
  return null;
}

/**
 * Null when `address` (an IP literal) may be reached; otherwise the block that
 * refuses it. Not an IP: refused. `interfaces` defaults to this host's, read at
 * every call: interfaces come and go (a VPN, a container network).
 */
export function refusalOf(address: string, interfaces: Interfaces = networkInterfaces()): Refusal | null {
  let ip = parse(address);
  if (!ip) return { address, range: address, name: 'not an IP address' };
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const block = refusedBlock(ip);
  if (block) return { address, range: block.cidr, name: block.name };
  const own = ownInterface(ip, interfaces);
  if (own) return { address, range: `interface ${own}`, name: "this host's own address" };
  return null;
}
