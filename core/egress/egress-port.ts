// The egress port: the one way Palai makes an outbound HTTP call (model SDKs,
// tools, and later webhooks, A2A push, MCP servers, Slack). A caller can name
// any URL, so without a guard a caller could make the server reach what only
// the server can: its loopback, the private network, the cloud metadata
// service. The guard decides on the address the connection is actually made
// to (checked after DNS resolution, on the connection itself, so a name that
// resolves differently the second time cannot slip past), and it never follows
// a redirect, since a redirect is a second, unchecked destination.
//
// Reading order: this file (the contract), refused-ranges.ts (what is refused),
// guarded-connector.ts (where the check happens), guarded-fetch.ts (the fetch).
import type { LookupFunction } from 'node:net';
import { PalaiError } from '../errors/palai-error.js';
import type { Refusal } from './refused-ranges.js';

/**
 * A fetch that refuses destinations the egress policy forbids. Differences from
 * the standard fetch: only http and https; redirects are returned, never followed
 * (`redirect` is always 'manual', so a 3xx arrives as the response); a refused
 * destination rejects with PalaiError `egress-denied` naming the host.
 */
export interface EgressFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Closes the pooled connections. */
  close(): Promise<void>;
}

/**
 * The guard for any client that opens its own sockets (a Kafka client, the AWS
 * SDK's HTTP handler): `connectOptions(host)` are the options to open a socket
 * to `host` with, a checking `lookup` unless the host is allow-listed; a
 * refused IP literal throws egress-denied (net.connect skips `lookup` for one).
 */
export interface SocketEgress {
  connectOptions(host: string): { lookup?: LookupFunction };
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to. Injectable, so a test can play a DNS server that changes its answer. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface EgressOptions {
  /**
   * Hosts reached without the address check (PALAI_EGRESS_ALLOW_HOSTS): a name or
   * an IP literal, matched as written in the URL. Default none.
   */
  allowHosts: readonly string[];
  /** How host names are resolved. Default: the system resolver (getaddrinfo, as Node's own connections use). */
  resolve?: Resolver;
}

/** The problem a refused destination is: it names the host, the address and its block, and the way to allow it. */
export function egressDenied(host: string, refusal: Refusal): PalaiError {
  const where = refusal.address === host ? host : `${host} (${refusal.address})`;
  return new PalaiError(
    'egress-denied',
    `Outbound call to ${where} refused: ${refusal.address}, ${refusal.name} (${refusal.range}), may not be reached from this server. ` +
      `An operator can allow the host with PALAI_EGRESS_ALLOW_HOSTS.`,
  );
}

/** The guard's refusal inside whatever wrapped it (fetch's "fetch failed", an SDK's connection error); null if none. */
export function egressRefusalIn(error: unknown): PalaiError | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof PalaiError) return current;
  }
  return null;
}
