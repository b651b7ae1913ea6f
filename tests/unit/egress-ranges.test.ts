// The egress guard's refused addresses: every block of the table refuses an
// address inside it and names itself; ordinary public addresses pass; an
// IPv4-mapped address is judged by the IPv4 address it maps, in either spelling;
// and this host's own interface addresses are refused.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { REFUSED_IPV4, REFUSED_IPV6, refusalOf } from '../../core/egress/refused-ranges.js';

/** One address inside each block of the table, and the block it must be refused by. */
const INSIDE: [address: string, cidr: string][] = [
  ['0.1.2.3', '0.0.0.0/8'],
  ['0.0.0.0', '0.0.0.0/32'],
  ['10.20.30.40', '10.0.0.0/8'],
  ['100.64.0.1', '100.64.0.0/10'],
  ['100.127.255.254', '100.64.0.0/10'],
  ['127.0.0.1', '127.0.0.0/8'],
  ['127.255.255.254', '127.0.0.0/8'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['172.16.0.1', '172.16.0.0/12'],
  ['172.31.255.255', '172.16.0.0/12'],
  ['192.0.0.9', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['192.168.1.1', '192.168.0.0/16'],
  ['198.18.0.1', '198.18.0.0/15'],
  ['198.19.255.255', '198.18.0.0/15'],
  ['198.51.100.7', '198.51.100.0/24'],
  ['203.0.113.9', '203.0.113.0/24'],
  ['224.0.0.251', '224.0.0.0/4'],
  ['239.255.255.250', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4'],
  ['255.255.255.254', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
  ['::', '::/128'],
  ['::1', '::1/128'],
  ['::7f00:1', '::/96'],
  ['::127.0.0.1', '::/96'],
  ['::8.8.8.8', '::/96'],
  ['64:ff9b::808:808', '64:ff9b::/96'],
  ['64:ff9b::8.8.8.8', '64:ff9b::/96'],
  ['64:ff9b:1::a00:1', '64:ff9b:1::/48'],
  ['100::1', '100::/64'],
  ['100:0:0:1::1', '100:0:0:1::/64'],
  ['2001::1', '2001::/23'],
  ['2001:1ff:ffff::1', '2001::/23'],
  ['2001:db8::1', '2001:db8::/32'],
  ['2002:7f00:1::1', '2002::/16'],
  ['2002:808:808::1', '2002::/16'],
  ['3fff::1', '3fff::/20'],
  ['5f00::1', '5f00::/16'],
  ['fc00::1', 'fc00::/7'],
  ['fd12:3456:789a::1', 'fc00::/7'],
  ['fe80::1', 'fe80::/10'],
  ['fe80::1%eth0', 'fe80::/10'],
  ['fec0::1', 'fec0::/10'],
  ['ff02::1', 'ff00::/8'],
];

/** Globally reachable addresses, several just outside a refused block. */
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.255',
  '192.31.196.1',
  '192.175.48.1',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '2a00:1450:4001::1',
  '64:ff9a:ffff::1',
];

const NO_INTERFACES = {};

test('every block of the table refuses an address inside it, and the refusal names the block', () => {
  const names = new Map([...REFUSED_IPV4, ...REFUSED_IPV6].map((r) => [r.cidr, r.name]));
  for (const [address, cidr] of INSIDE) {
    const refusal = refusalOf(address, NO_INTERFACES);
    assert.deepEqual(refusal, { address, range: cidr, name: names.get(cidr) }, address);
  }
  const covered = new Set(INSIDE.map(([, cidr]) => cidr));
  for (const cidr of names.keys()) assert.ok(covered.has(cidr), `no address of ${cidr} is tested`);
});

test('the refusal names what the block is, so an error can say "127.0.0.1, loopback"', () => {
  assert.equal(refusalOf('127.0.0.1', NO_INTERFACES)?.name, 'loopback');
  assert.equal(refusalOf('::1', NO_INTERFACES)?.name, 'loopback');
  assert.match(refusalOf('169.254.169.254', NO_INTERFACES)!.name, /link-local/);
  assert.match(refusalOf('10.0.0.1', NO_INTERFACES)!.name, /private/);
});

test('ordinary public addresses may be reached', () => {
  for (const address of PUBLIC) assert.equal(refusalOf(address, NO_INTERFACES), null, address);
});

test('an IPv4-mapped address is judged by the IPv4 address it maps, written dotted or in hex', () => {
  for (const [mapped, cidr] of [
    ['::ffff:127.0.0.1', '127.0.0.0/8'],
    ['::ffff:7f00:1', '127.0.0.0/8'],
    ['::ffff:169.254.169.254', '169.254.0.0/16'],
    ['::ffff:a9fe:a9fe', '169.254.0.0/16'],
    ['::ffff:10.0.0.1', '10.0.0.0/8'],
    ['::ffff:a00:1', '10.0.0.0/8'],
    ['0:0:0:0:0:ffff:c0a8:101', '192.168.0.0/16'],
  ]) {
    assert.equal(refusalOf(mapped, NO_INTERFACES)?.range, cidr, mapped);
  }
  assert.equal(refusalOf('::ffff:8.8.8.8', NO_INTERFACES), null);
  assert.equal(refusalOf('::ffff:808:808', NO_INTERFACES), null);
});

test("this host's own interface addresses are refused, whatever block they are in", () => {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((entry) => entry && !entry.internal);
  for (const entry of own) assert.notEqual(refusalOf(entry!.address), null, `${entry!.address} is this host's own`);

  // An interface with a public address: refused as this host's own, though no block holds it.
  const interfaces = {
    eth9: [
      { address: '8.8.4.4', netmask: '255.255.255.0', family: 'IPv4' as const, mac: '02:00:00:00:00:01', internal: false, cidr: '8.8.4.4/24' },
      {
        address: '2001:4860:4860::8844',
        netmask: 'ffff:ffff:ffff:ffff::',
        family: 'IPv6' as const,
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: null,
        scopeid: 0,
      },
    ],
  };
  assert.deepEqual(refusalOf('8.8.4.4', interfaces), { address: '8.8.4.4', range: 'interface eth9', name: "this host's own address" });
  assert.equal(refusalOf('::ffff:8.8.4.4', interfaces)?.range, 'interface eth9');
  assert.equal(refusalOf('2001:4860:4860:0:0:0:0:8844', interfaces)?.range, 'interface eth9');
  assert.equal(refusalOf('8.8.8.8', interfaces), null);
});

test('what is not an IP address is refused', () => {
  for (const text of ['', 'localhost', '127.1', '0x7f000001', '1.2.3.4.5']) assert.equal(refusalOf(text, NO_INTERFACES)?.name, 'not an IP address', text);
});
