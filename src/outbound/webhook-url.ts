import { SpendgateError, assert } from '../core/index.js';

import { isAllowedAddress } from './address-policy.js';
import { LOOKUP_ADDRESSES_MAX, systemLookup, type LookupFn } from './lookup.js';

/*
 * The registration-time check of a webhook endpoint URL (contract section 13). Refusing a bad
 * URL when it is registered gives the client a clear 400 instead of a silent string of failed
 * deliveries; the same address policy is applied again at every connection (send.ts), because
 * a name that resolves to a public address today may resolve to 127.0.0.1 tomorrow.
 *
 * The host, whether an IP literal or a name, must be or resolve only to addresses the mode may
 * reach (address-policy.ts). Live mode: https only, public addresses only. Test mode: http or
 * https, and loopback too, so a developer can point an endpoint at a receiver on localhost;
 * never a private, link-local or metadata address, in either mode.
 */

export type OutboundMode = 'test' | 'live';

/** Longest URL accepted, in UTF-16 code units of the raw string. */
export const URL_CHARS_MAX = 2_048;
/** How long registration waits for the resolver before refusing the URL. */
export const LOOKUP_TIMEOUT_MS_MAX = 5_000;
/** How much of a client-supplied host a refusal message echoes. */
const ECHO_CHARS_MAX = 100;

export interface CheckWebhookUrlOptions {
  readonly lookup?: LookupFn;
  /** Defaults to LOOKUP_TIMEOUT_MS_MAX. */
  readonly lookupTimeoutMs?: number;
}

/**
 * Parses and checks `raw` for `mode`; resolves to the URL (any #fragment removed, since it is
 * never sent) or throws `SpendgateError('parameter_invalid', reason, 'url')`.
 */
export async function checkWebhookUrl(
  raw: string,
  mode: OutboundMode,
  options: CheckWebhookUrlOptions = {},
): Promise<URL> {
  assert(mode === 'test' || mode === 'live', 'mode is test or live');
  const lookupTimeoutMs = options.lookupTimeoutMs ?? LOOKUP_TIMEOUT_MS_MAX;
  assert(
    Number.isInteger(lookupTimeoutMs) &&
      lookupTimeoutMs > 0 &&
      lookupTimeoutMs <= LOOKUP_TIMEOUT_MS_MAX,
    'lookupTimeoutMs is a positive integer within LOOKUP_TIMEOUT_MS_MAX',
  );

  const url = parseWebhookUrl(raw);
  if (mode === 'live' && url.protocol !== 'https:') refuse('url must use https in live mode.');

  const host = hostOf(url);
  const shown = echo(host);
  const forbidden = FORBIDDEN_REASON[mode];
  if (isIpLiteral(host)) {
    if (!isAllowedAddress(host, mode)) refuse(`url host ${shown} is ${forbidden}.`);
    return url;
  }
  // RFC 6761: localhost and *.localhost always mean this machine, whatever a resolver says; the
  // sender checks what the name resolves to when it connects.
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    if (mode === 'live') refuse(`url host ${shown} is ${forbidden}.`);
    return url;
  }

  const addresses = await resolveBounded(options.lookup ?? systemLookup, host, lookupTimeoutMs);
  if (addresses === 'timeout') {
    refuse(`url host ${shown} did not resolve within ${lookupTimeoutMs} ms.`);
  }
  if (addresses === 'failed' || addresses.length === 0) {
    refuse(`url host ${shown} does not resolve.`);
  }
  if (addresses.length > LOOKUP_ADDRESSES_MAX) {
    refuse(`url host ${shown} resolves to more than ${LOOKUP_ADDRESSES_MAX} addresses.`);
  }
  // Every address must pass: the connection may go to any of them.
  if (addresses.some(({ address }) => !isAllowedAddress(address, mode))) {
    refuse(`url host ${shown} resolves to ${forbidden}.`);
  }
  return url;
}

/** Why an address is refused, by mode: what the mode would have allowed is named. */
const FORBIDDEN_REASON: Readonly<Record<OutboundMode, string>> = {
  live: 'a loopback, private, link-local or reserved address, which live mode refuses',
  test: 'a private, link-local or reserved address, which is refused (test mode allows public and loopback addresses only)',
};

/** The syntax checks shared by both modes. */
function parseWebhookUrl(raw: string): URL {
  if (typeof raw !== 'string' || raw.length === 0) refuse('url must be a non-empty string.');
  if (raw.length > URL_CHARS_MAX) refuse(`url must be at most ${URL_CHARS_MAX} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse('url is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    refuse('url must use http or https.');
  }
  // Credentials in a URL end up in logs and dashboards; receivers authenticate by signature.
  if (url.username !== '' || url.password !== '') {
    refuse('url must not contain credentials (user:password@).');
  }
  if (hostOf(url) === '') refuse('url must have a host.');
  url.hash = '';
  assert(url.href.length <= URL_CHARS_MAX * 4, 'a parsed URL stays bounded');
  return url;
}

/** The host as an address or name: `[::1]` becomes `::1`. */
export function hostOf(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True for a host that `hostOf` returned as an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  // After WHATWG parsing an IPv4 host is dotted-decimal (0x7f.1 became 127.0.0.1), and an IPv6
  // host was bracketed; a name has at least one letter or hyphen and no colon.
  return host.includes(':') || /^[0-9.]+$/.test(host);
}

async function resolveBounded(
  lookup: LookupFn,
  host: string,
  timeoutMs: number,
): Promise<readonly { address: string }[] | 'timeout' | 'failed'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout');
    }, timeoutMs);
  });
  try {
    return await Promise.race([lookup(host).catch(() => 'failed' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function echo(host: string): string {
  const shown = host.length > ECHO_CHARS_MAX ? `${host.slice(0, ECHO_CHARS_MAX)}…` : host;
  return JSON.stringify(shown);
}

function refuse(message: string): never {
  throw new SpendgateError('parameter_invalid', message, 'url');
}
