// Where the egress decision is made: in the function that opens each TCP
// connection. An IP literal is checked as it is; a host name is resolved once,
// inside the socket's own `lookup`, every address it resolves to is checked, and
// the socket connects to those checked addresses and nothing else. Checking in a
// separate step before connecting would resolve twice, and a DNS server that
// answers a public address the first time and 127.0.0.1 the second (DNS
// rebinding) would win. Allow-listed hosts skip the check.
import type { LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { buildConnector } from 'undici';
import { egressDenied, type ResolvedAddress, type Resolver, type SocketEgress } from './egress-port.js';
import { refusalOf } from './refused-ranges.js';

/** The CIDR blocks an operator allow-listed (PALAI_EGRESS_ALLOW_HOSTS entries with a `/`): addresses in them are reached unchecked. */
export interface AllowedRanges {
  has(address: string): boolean;
}

const NO_RANGES: AllowedRanges = { has: () => false };

/** Parses `10.1.0.0/16`, `fd00::/8`; an entry that is not a CIDR block throws, naming it. */
export function allowedRanges(cidrs: readonly string[]): AllowedRanges {
  if (cidrs.length === 0) return NO_RANGES;
  const blocks = cidrs.map((cidr) => {
    try {
      return ipaddr.parseCIDR(cidr.trim());
    } catch {
      throw new Error(`PALAI_EGRESS_ALLOW_HOSTS entry ${JSON.stringify(cidr)} is not a CIDR block`);
    }
  });
  return {
    has(address) {
      const bare = address.replace(/%.*$/, '');
      if (!ipaddr.isValid(bare)) return false;
      let ip = ipaddr.parse(bare);
      if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
      return blocks.some(([network, bits]) => network.kind() === ip.kind() && ip.match(network, bits));
    },
  };
}

/** The system resolver, as Node's own connections use it (getaddrinfo: /etc/hosts, then DNS). */
export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** A host as the URL parser writes it: lower case, IPv6 without brackets and in its shortest form. */
export function canonicalHost(host: string): string {
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  try {
    return new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return bare.toLowerCase();
  }
}

const familyOf = (family: LookupOptions['family']): 0 | 4 | 6 => (family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0);

/**
 * A `lookup` for net.connect that resolves once and refuses when any answer is
 * refused. Node asks with `all: true` when it races IPv4 and IPv6
 * (autoSelectFamily) and for one address otherwise; both are answered.
 */
export function guardedLookup(resolve: Resolver, allowed: AllowedRanges = NO_RANGES): LookupFunction {
  return (hostname, options, callback) => {
    const answer = async (): Promise<ResolvedAddress[]> => {
      const addresses = await resolve(hostname);
      for (const { address } of addresses) {
        const refusal = allowed.has(address) ? null : refusalOf(address);
        if (refusal) throw egressDenied(hostname, refusal);
      }
      const family = familyOf(options.family);
      const usable = addresses.filter((a) => family === 0 || a.family === family);
      if (usable.length === 0)
        throw Object.assign(new Error(`${hostname} has no ${family === 0 ? '' : `IPv${family} `}address`), { code: 'ENOTFOUND', hostname });
      return usable;
    };
    answer().then(
      (usable) => (options.all ? callback(null, usable) : callback(null, usable[0].address, usable[0].family)),
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** The guard for clients that open their own sockets (SocketEgress in egress-port.ts). */
export function socketEgress(allowHosts: readonly string[], resolve: Resolver = systemResolver): SocketEgress {
  const ranges = allowedRanges(allowHosts.filter((entry) => entry.includes('/')));
  const allowed = new Set(allowHosts.filter((entry) => !entry.includes('/')).map(canonicalHost));
  const lookup = guardedLookup(resolve, ranges);
  return {
    connectOptions(hostname) {
      const host = canonicalHost(hostname);
      if (allowed.has(host) || (isIP(host) && ranges.has(host))) return {};
      if (isIP(host)) {
        const refusal = refusalOf(host);
        if (refusal) throw egressDenied(host, refusal);
      }
      return { lookup };
    },
  };
}

/**
 * undici's connector with the egress check in front of (IP literals) and inside
 * (names) every connection. In two steps, since undici loads at the first call
 * (guarded-fetch.ts): the allow list is read (and a wrong entry throws) now; the
 * connector is built from undici's `buildConnector` when it is there.
 */
export function guardedConnector(
  allowHosts: readonly string[],
  resolve: Resolver = systemResolver,
): (build: typeof buildConnector) => buildConnector.connector {
  const guard = socketEgress(allowHosts, resolve);
  const lookup = guardedLookup(resolve, allowedRanges(allowHosts.filter((entry) => entry.includes('/'))));
  return (build) => {
    const checked = build({ lookup });
    const unchecked = build({});
    return (options, callback) => {
      // undici passes the URL's host name, IPv6 without brackets.
      let decided;
      try {
        decided = guard.connectOptions(options.hostname);
      } catch (error) {
        return callback(error as Error, null);
      }
      return decided.lookup ? checked(options, callback) : unchecked(options, callback);
    };
  };
}
