// The egress guard: outbound HTTP that Palai makes on someone's behalf (tools,
// later webhooks and push) may not reach loopback, private, link-local or cloud
// metadata addresses unless the operator allow-listed the host.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { PalaiError } from './errors/palai-error.js';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

function isBlockedAddress(address: string): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  return blocked.check(address, family);
}

/** Throws unless `url` is http(s) and every address its host resolves to may be reached. */
export async function assertEgressAllowed(url: string, allowHosts: readonly string[]): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PalaiError('invalid-request', `Not a URL: ${JSON.stringify(url)}.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new PalaiError('invalid-request', `Only http and https URLs may be called, not ${parsed.protocol}.`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (allowHosts.includes(host)) return parsed;
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  const refused = addresses.find(isBlockedAddress);
  if (refused) {
    throw new PalaiError('forbidden', `${host} resolves to ${refused}, a private or local address; allow it with PALAI_EGRESS_ALLOW_HOSTS.`);
  }
  return parsed;
}
