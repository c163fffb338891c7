import { BlockList, isIP } from 'node:net';

import { assert } from '../core/index.js';

/*
 * Which IP addresses a webhook may connect to (contract section 13). Webhook URLs are chosen by
 * API clients, so without this a client could make spendgate POST into its own network or a
 * cloud metadata service (SSRF), and read from the failure which ports answer there.
 *
 * Every address is one of three classes: public; loopback (127/8, ::1 and its IPv4-mapped
 * form), which test mode allows so that a developer can point an endpoint at a receiver on the
 * same machine; and forbidden (private, link-local, metadata, carrier-grade NAT and every other
 * special-purpose range), which neither mode may reach. Live mode allows public addresses only.
 *
 * One judgement, used at registration (webhook-url.ts) and at connection time (send.ts). It
 * fails closed: anything that is not a plain IPv4 or IPv6 literal is forbidden. IPv6 forms that
 * embed an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) are judged by the IPv4 address they carry, so `::ffff:10.0.0.1` is as
 * forbidden as `10.0.0.1`; only the IPv4-mapped form of a loopback address, which the kernel
 * connects to that loopback address itself, is loopback, the others reach some other host.
 */

/** Longest textual IPv6 address (with an embedded IPv4 tail) is 45 characters; be generous. */
export const ADDRESS_CHARS_MAX = 64;

/** [network, prefix length, why] for IPv4: the special-purpose ranges of RFC 6890 and kin. */
const IPV4_FORBIDDEN: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local, incl. cloud metadata 169.254.169.254'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation TEST-NET-1'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation TEST-NET-2'],
  ['203.0.113.0', 24, 'documentation TEST-NET-3'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved, incl. broadcast 255.255.255.255'],
];

/**
 * IPv6 ranges forbidden outright. `::`, `::1`, `::ffff:0:0/96`, `::/96`, `64:ff9b::/96` and
 * `2002::/16` are not here: they embed an IPv4 address and are judged by it (see below).
 */
const IPV6_FORBIDDEN: readonly (readonly [string, number, string])[] = [
  ['64:ff9b:1::', 48, 'local-use NAT64 (RFC 8215)'],
  ['100::', 64, 'discard-only (RFC 6666)'],
  ['2001::', 32, 'Teredo: its IPv4 address is obfuscated, so it cannot be judged'],
  ['2001:10::', 28, 'ORCHID'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation (RFC 9637)'],
  ['fc00::', 7, 'unique local, incl. AWS metadata fd00:ec2::254'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

const ipv4Forbidden = new BlockList();
for (const [network, prefix] of IPV4_FORBIDDEN) ipv4Forbidden.addSubnet(network, prefix, 'ipv4');
const ipv6Forbidden = new BlockList();
for (const [network, prefix] of IPV6_FORBIDDEN) ipv6Forbidden.addSubnet(network, prefix, 'ipv6');

export type AddressClass = 'public' | 'loopback' | 'forbidden';
export type AddressMode = 'test' | 'live';

/** 127.0.0.0/8: this machine. */
const ipv4Loopback = new BlockList();
ipv4Loopback.addSubnet('127.0.0.0', 8, 'ipv4');

/**
 * The class of `ip`. Anything that does not parse as an IP literal (a hostname, a zone-scoped
 * `fe80::1%eth0`, an empty string, an octal-looking `010.0.0.1`) is forbidden.
 */
export function classifyAddress(ip: string): AddressClass {
  if (typeof ip !== 'string' || ip.length === 0 || ip.length > ADDRESS_CHARS_MAX)
    return 'forbidden';
  // A zone index only ever names a local interface; never a public destination.
  if (ip.includes('%')) return 'forbidden';
  const version = isIP(ip);
  if (version === 4) {
    if (ipv4Loopback.check(ip, 'ipv4')) return 'loopback';
    return ipv4Forbidden.check(ip, 'ipv4') ? 'forbidden' : 'public';
  }
  if (version === 6) {
    const hextets = parseIpv6(ip);
    if (hextets === null) return 'forbidden';
    return classifyIpv6(hextets);
  }
  return 'forbidden';
}

/** True when `mode` may connect to `ip`: a public address, or loopback in test mode. */
export function isAllowedAddress(ip: string, mode: AddressMode): boolean {
  assert(mode === 'test' || mode === 'live', 'mode is test or live');
  const found = classifyAddress(ip);
  return found === 'public' || (found === 'loopback' && mode === 'test');
}

/** True when live mode must not connect to `ip`: anything but a public address. */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}

function classifyIpv6(h: readonly number[]): AddressClass {
  assert(h.length === 8, 'an IPv6 address has eight hextets');
  const at = (i: number): number => h[i] ?? 0;
  const zeroUpTo = (end: number): boolean => h.slice(0, end).every((x) => x === 0);
  const embedded = (hi: number, lo: number): string =>
    `${hi >>> 8}.${hi & 0xff}.${lo >>> 8}.${lo & 0xff}`;
  // Any embedded IPv4 address but a mapped one reaches another host than this one: a loopback
  // address there is forbidden, not loopback.
  const judgedBy = (ipv4: string): AddressClass =>
    classifyAddress(ipv4) === 'public' ? 'public' : 'forbidden';

  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped): the kernel connects to a.b.c.d itself.
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyAddress(embedded(at(6), at(7)));
  // ::ffff:0:a.b.c.d (IPv4-translated).
  if (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0) return judgedBy(embedded(at(6), at(7)));
  // ::a.b.c.d (IPv4-compatible, deprecated); `::` lands in 0.0.0.0/8, forbidden.
  if (zeroUpTo(6)) return judgedBy(embedded(at(6), at(7)));
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix): the translator connects to the IPv4 address.
  if (at(0) === 0x64 && at(1) === 0xff9b && h.slice(2, 6).every((x) => x === 0)) {
    return judgedBy(embedded(at(6), at(7)));
  }
  // 2002:aabb:ccdd::/48 (6to4): the relay tunnels to aa.bb.cc.dd.
  if (at(0) === 0x2002) return judgedBy(embedded(at(1), at(2)));

  const canonical = h.map((x) => x.toString(16)).join(':');
  return ipv6Forbidden.check(canonical, 'ipv6') ? 'forbidden' : 'public';
}

/**
 * Expands an IPv6 literal that `isIP` has accepted into its eight 16-bit hextets, or null.
 * Handles `::` compression and a dotted IPv4 tail (`::ffff:1.2.3.4`).
 */
function parseIpv6(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const toHextets = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const groups = part.split(':');
    for (const [index, group] of groups.entries()) {
      if (group.includes('.')) {
        if (index !== groups.length - 1 || isIP(group) !== 4) return null;
        const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
        out.push(parseInt(group, 16));
      }
    }
    return out;
  };
  const head = toHextets(halves[0] ?? '');
  const tail = halves.length === 2 ? toHextets(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const hextets = [...head, ...new Array<number>(missing).fill(0), ...tail];
  assert(hextets.length === 8, 'an expanded IPv6 address has eight hextets');
  assert(
    hextets.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff),
    'hextets are 16-bit',
  );
  return hextets;
}
