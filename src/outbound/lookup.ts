import { lookup as dnsLookup } from 'node:dns/promises';

/*
 * Name resolution for outbound webhooks, behind one small seam. Production resolves with the
 * operating system's resolver (`dns.lookup`, the one `http.request` uses), asking for every
 * address so that a host with one public and one private address is judged by both. Tests
 * inject a `LookupFn` so that they need neither the internet nor a DNS server, and so that DNS
 * rebinding (a public answer at registration, a private one at delivery) can be played out.
 */

export interface LookupAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Every address `hostname` resolves to; rejects when it does not resolve. */
export type LookupFn = (hostname: string) => Promise<readonly LookupAddress[]>;

/** A resolver answering with more addresses than this is refused rather than judged. */
export const LOOKUP_ADDRESSES_MAX = 64;

export const systemLookup: LookupFn = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, verbatim: true });
  return addresses.map(({ address, family }) => ({ address, family }));
};
