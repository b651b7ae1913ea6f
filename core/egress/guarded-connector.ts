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
import { buildConnector } from 'undici';
import { egressDenied, type ResolvedAddress, type Resolver } from './egress-port.js';
import { refusalOf } from './refused-ranges.js';

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
export function guardedLookup(resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    const answer = async (): Promise<ResolvedAddress[]> => {
      const addresses = await resolve(hostname);
      for (const { address } of addresses) {
        const refusal = refusalOf(address);
        if (refusal) throw egressDenied(hostname, refusal);
      }
      const family = familyOf(options.family);
      const usable = addresses.filter((a) => family === 0 || a.family === family);
      if (usable.length === 0) throw Object.assign(new Error(`${hostname} has no ${family === 0 ? '' : `IPv${family} `}address`), { code: 'ENOTFOUND', hostname });
      return usable;
    };
    answer().then(
      (usable) => (options.all ? callback(null, usable) : callback(null, usable[0].address, usable[0].family)),
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** undici's connector with the egress check in front of (IP literals) and inside (names) every connection. */
export function guardedConnector(allowHosts: readonly string[], resolve: Resolver = systemResolver): buildConnector.connector {
  const allowed = new Set(allowHosts.map(canonicalHost));
  const checked = buildConnector({ lookup: guardedLookup(resolve) });
  const unchecked = buildConnector({});
  return (options, callback) => {
    // undici passes the URL's host name, IPv6 without brackets.
    const host = canonicalHost(options.hostname);
    if (allowed.has(host)) return unchecked(options, callback);
    if (isIP(host)) {
      // net.connect does not call `lookup` for an IP literal, so it is checked here.
      const refusal = refusalOf(host);
      if (refusal) return callback(egressDenied(host, refusal), null);
    }
    return checked(options, callback);
  };
}
