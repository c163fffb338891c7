import { formatPath, SpendgateError, type Mode } from '../core/index.js';
import { DISPLAY_ORIGINS_MAX } from '../store/store.js';

/*
 * The origins an account lets frame its card display page (issue 18): each becomes a source
 * of the page's CSP `frame-ancestors`, so each must be an origin alone, exactly as a browser
 * writes it (scheme, host, port when not the scheme's own), and nothing CSP would read as
 * more: no path, no wildcard, no credentials, no quote or space.
 */

/** The longest origin taken: a host name is at most 253 characters, with room for a port. */
export const DISPLAY_ORIGIN_LENGTH_MAX = 300;

/** Hosts that are this machine's: framed over plain http in test mode only (local work). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The origin as browsers write it, or the reason it is refused. https always; http for a
 * loopback host in test mode, so that a page on a developer's machine can embed a test card.
 */
function originOf(text: string, mode: Mode): { origin: string } | { refusal: string } {
  if (text.length > DISPLAY_ORIGIN_LENGTH_MAX)
    return { refusal: `is longer than ${DISPLAY_ORIGIN_LENGTH_MAX} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { refusal: 'is not a URL origin such as https://app.example.com' };
  }
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && mode === 'test')) {
    return {
      refusal:
        mode === 'test'
          ? 'must be https (or http on localhost, 127.0.0.1 or [::1])'
          : 'must be https (http on loopback is for test mode only)',
    };
  }
  // The whole text must be the origin: a path, query, fragment or credentials would be
  // dropped by URL's origin, and a framing page is matched on its origin alone.
  if (url.origin !== text.replace(/\/$/, '').toLowerCase() || url.hostname.includes('*')) {
    return { refusal: 'must be an origin alone: scheme, host and port, no path or wildcard' };
  }
  return { origin: url.origin };
}

/**
 * The origins of a Set Display Origins body, normalised (lower case, no trailing slash) and
 * distinct, in the order given. Fails: parameter_invalid at the first refused origin, naming
 * it by place (`origins[2]`), never echoing it.
 */
export function checkDisplayOrigins(texts: readonly string[], mode: Mode): string[] {
  if (texts.length > DISPLAY_ORIGINS_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `At most ${DISPLAY_ORIGINS_MAX} origins may be registered.`,
      'origins',
    );
  }
  const origins: string[] = [];
  for (const [index, text] of texts.entries()) {
    const checked = originOf(text, mode);
    const param = formatPath(['origins', index]);
    if ('refusal' in checked)
      throw new SpendgateError('parameter_invalid', `The origin ${checked.refusal}.`, param);
    if (!origins.includes(checked.origin)) origins.push(checked.origin);
  }
  return origins;
}
