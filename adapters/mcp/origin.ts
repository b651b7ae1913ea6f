// DNS-rebinding defence. A browser page may only reach /mcp from Palai's own
// origin (hosts that are not browsers send no Origin header and pass). And a
// Palai listening on a loopback address answers only requests addressed to a
// loopback name: a page on evil.example whose name was rebound to 127.0.0.1
// sends `Host: evil.example`. A request a proxy forwarded (X-Forwarded-For or
// Forwarded) carries the name the proxy serves, so only the Origin rule applies
// to it. Either way every request still needs the project's key.
import { isIP } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { refuse, TRANSPORT_ERROR } from './http-answers.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));

/** The host name of a Host header, without its port. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1).toLowerCase();
  const name = host.split(':')[0].toLowerCase();
  return isIP(name) === 6 ? `[${name}]` : name;
}

export function checkOrigin(req: Request, res: Response, next: NextFunction): void {
  const host = req.get('host') ?? '';
  const proxied = req.get('x-forwarded-for') !== undefined || req.get('forwarded') !== undefined;
  if (!proxied && isLoopbackAddress(req.socket.localAddress) && !LOOPBACK_NAMES.has(hostName(host))) {
    return refuse(res, 403, TRANSPORT_ERROR, `Host ${JSON.stringify(host)} is not this server's (it listens on loopback).`);
  }
  const origin = req.get('origin');
  if (origin === undefined) return next();
  let originHost: string | null;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = null;
  }
  if (originHost !== null && originHost === host) return next();
  refuse(res, 403, TRANSPORT_ERROR, `Origin ${JSON.stringify(origin)} may not use this server.`);
}
