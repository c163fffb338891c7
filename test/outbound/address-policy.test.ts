import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { classifyAddress, isAllowedAddress, isForbiddenAddress } from '../../src/outbound/index.js';

/** Public addresses, including the ones just outside a forbidden range. */
const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '1.0.0.0',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '191.255.255.255',
  '192.0.1.0',
  '192.0.3.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.99.255',
  '198.51.101.0',
  '203.0.112.255',
  '203.0.114.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '::8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
  '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:db9::',
  'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fe00::',
  'fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
];

const FORBIDDEN = [
  // 0.0.0.0/8
  '0.0.0.0',
  '0.255.255.255',
  // 10/8
  '10.0.0.0',
  '10.1.2.3',
  '10.255.255.255',
  // 100.64/10
  '100.64.0.0',
  '100.127.255.255',
  // 127/8
  '127.0.0.1',
  '127.0.0.0',
  '127.255.255.255',
  // 169.254/16
  '169.254.0.0',
  '169.254.169.254',
  '169.254.255.255',
  // 172.16/12
  '172.16.0.0',
  '172.31.255.255',
  // 192.0.0/24, 192.0.2/24
  '192.0.0.0',
  '192.0.0.255',
  '192.0.2.0',
  '192.0.2.255',
  // 192.168/16
  '192.168.0.0',
  '192.168.1.1',
  '192.168.255.255',
  // 198.18/15
  '198.18.0.0',
  '198.19.255.255',
  // documentation
  '198.51.100.0',
  '198.51.100.255',
  '203.0.113.0',
  '203.0.113.255',
  // multicast, reserved, broadcast
  '224.0.0.0',
  '239.255.255.255',
  '240.0.0.0',
  '255.255.255.254',
  '255.255.255.255',
  // IPv6
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  'fc00::',
  'fd00::1',
  'fd00:ec2::254',
  'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fe80::',
  'fe80::1',
  'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'ff00::',
  'ff02::1',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:db8::',
  '2001:db8::1',
  '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
  // embedded IPv4
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::FFFF:7F00:1',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:192.168.1.1',
  '::ffff:0:127.0.0.1',
  '::127.0.0.1',
  '::10.0.0.1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::10.0.0.1',
  '2002:7f00:1::',
  '2002:a00:1::1',
];

const GARBAGE = [
  '',
  ' ',
  'localhost',
  'example.com',
  '127.0.0.1 ',
  ' 8.8.8.8',
  '8.8.8',
  '8.8.8.8.8',
  '256.1.1.1',
  '010.0.0.1',
  '0x7f.0.0.1',
  '2130706433',
  '::ffff:999.0.0.1',
  '1::2::3',
  'fe80::1%eth0',
  '8.8.8.8%1',
  '[::1]',
  '2606:4700:4700::1111:1:2:3:4',
  'gggg::1',
  'x'.repeat(10_000),
];

describe('isForbiddenAddress', () => {
  it.each(ALLOWED)('allows %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });

  it.each(FORBIDDEN)('forbids %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(GARBAGE.map((g) => [JSON.stringify(g.slice(0, 40)), g]))(
    'forbids the unparsable %s',
    (_name, garbage) => {
      expect(isForbiddenAddress(garbage)).toBe(true);
    },
  );

  it('forbids a non-string that slipped past the types', () => {
    expect(isForbiddenAddress(undefined as unknown as string)).toBe(true);
    expect(isForbiddenAddress(2130706433 as unknown as string)).toBe(true);
  });
});

const octet = fc.integer({ min: 0, max: 255 });
const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
const inRange = (first: number[], rest: number) =>
  fc.array(octet, { minLength: rest, maxLength: rest }).map((o) => [...first, ...o].join('.'));

function hexMapped(ip: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
  return `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

describe('isForbiddenAddress, properties', () => {
  it('forbids every address in 127/8, 10/8 and 192.168/16', () => {
    fc.assert(
      fc.property(fc.oneof(inRange([127], 3), inRange([10], 3), inRange([192, 168], 2)), (ip) => {
        expect(isForbiddenAddress(ip)).toBe(true);
        expect(isForbiddenAddress(`::ffff:${ip}`)).toBe(true);
        expect(isForbiddenAddress(hexMapped(ip))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('judges ::ffff:a.b.c.d, its hex form and 64:ff9b::a.b.c.d as a.b.c.d', () => {
    fc.assert(
      fc.property(ipv4, (ip) => {
        const expected = isForbiddenAddress(ip);
        expect(isForbiddenAddress(`::ffff:${ip}`)).toBe(expected);
        expect(isForbiddenAddress(hexMapped(ip))).toBe(expected);
        expect(isForbiddenAddress(`64:ff9b::${ip}`)).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('classifyAddress and isAllowedAddress: test mode allows loopback only', () => {
  it.each(['127.0.0.1', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1'])(
    '%s is loopback: test mode only',
    (ip) => {
      expect(classifyAddress(ip)).toBe('loopback');
      expect([isAllowedAddress(ip, 'test'), isAllowedAddress(ip, 'live')]).toEqual([true, false]);
    },
  );

  // Private, link-local and metadata addresses, and IPv6 forms that carry a loopback address to a host
  // other than this one (a translator, a relay): neither mode reaches them.
  it.each([
    '169.254.169.254',
    '10.0.0.1',
    '192.168.0.1',
    '100.64.0.1',
    'fd00:ec2::254',
    '0.0.0.0',
    '::',
    '::127.0.0.1',
    '64:ff9b::127.0.0.1',
    '::ffff:0:127.0.0.1',
    '2002:7f00:1::',
    '::ffff:10.0.0.1',
  ])('%s is forbidden in both modes', (ip) => {
    expect(classifyAddress(ip)).toBe('forbidden');
    expect([isAllowedAddress(ip, 'test'), isAllowedAddress(ip, 'live')]).toEqual([false, false]);
  });

  it.each(ALLOWED)('%s is public: both modes', (ip) => {
    expect(classifyAddress(ip)).toBe('public');
    expect([isAllowedAddress(ip, 'test'), isAllowedAddress(ip, 'live')]).toEqual([true, true]);
  });

  it('is forbidden in live mode exactly when it is not public', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          ipv4,
          ipv4.map((ip) => `::ffff:${ip}`),
          fc.ipV6(),
        ),
        (ip) => {
          expect(isForbiddenAddress(ip)).toBe(classifyAddress(ip) !== 'public');
          expect(isAllowedAddress(ip, 'live')).toBe(classifyAddress(ip) === 'public');
          expect(isAllowedAddress(ip, 'test')).toBe(classifyAddress(ip) !== 'forbidden');
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
