import http from 'node:http';
import https from 'node:https';
import type { LookupAddress as DnsLookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

import { assert } from '../core/index.js';

import { isAllowedAddress } from './address-policy.js';
import { LOOKUP_ADDRESSES_MAX, systemLookup, type LookupFn } from './lookup.js';
import { hostOf, isIpLiteral, URL_CHARS_MAX, type OutboundMode } from './webhook-url.js';

/*
 * One webhook delivery attempt: a bounded POST whose only product is the receiver's status code.
 * The worker records every attempt, so this never throws for anything the network or the
 * receiver does; it answers `{ statusCode: null, error }` instead. It throws only on a caller
 * bug (an assertion).
 *
 * SSRF: in both modes the address policy (address-policy.ts: public addresses, and loopback in
 * test mode) is applied where the socket is opened, inside the `lookup` hook that `net.connect`
 * calls, so the address that was checked is the address that is connected to; a DNS answer that
 * changes between registration and delivery (DNS rebinding) cannot slip through. IP-literal
 * hosts never reach `lookup` (node connects to them directly), so they are checked before the
 * request; a literal cannot change. Redirects are never followed (node's http client does not
 * follow them; a 3xx is returned like any other non-2xx status).
 *
 * A failure is reported as one of a few classes (`DELIVERY_FAILURES`), never as the socket's
 * error text: "connection reset" against "connection refused" would tell an endpoint's owner
 * which ports of an address answer, and the delivery records are theirs to read.
 *
 * Headers and body carry the Standard Webhooks signature: they are never logged nor put in a
 * result or an error string.
 */

/** The worker passes 15,000 (contract section 13); nothing may wait longer than this. */
export const TIMEOUT_MS_MAX = 60_000;
/** An event body is one resource; anything near this is a bug upstream. */
export const REQUEST_BODY_BYTES_MAX = 1_048_576;
export const REQUEST_HEADERS_COUNT_MAX = 32;
/** Only the status matters: read at most this much of the answer, then hang up. */
export const RESPONSE_BODY_BYTES_MAX = 65_536;
/**
 * What a failed attempt reports, all it reports: the URL could not be used; the address is
 * not one the mode may reach; no connection or no complete answer (refused, reset, unresolved,
 * closed early: one class, so that they cannot be told apart); no answer in time; the TLS
 * handshake failed; the receiver answered a status other than 2xx.
 */
export const DELIVERY_FAILURES = [
  'invalid_url',
  'address_forbidden',
  'connection_failed',
  'timeout',
  'tls_error',
  'http_status',
] as const;
export type DeliveryFailure = (typeof DELIVERY_FAILURES)[number];

/**
 * Keep-alive agents, one per mode and protocol. A burst of deliveries to one receiver (the usual
 * shape: an outbox drained in order) then reuses a connection instead of paying a TCP and a TLS
 * handshake each time. The address policy still holds: every new socket is opened through the
 * checking `lookup`, and a reused socket is connected to an address that passed that check when
 * it was opened. Live and test never share an agent, so a socket a test-mode delivery opened to
 * a private address can never be handed to a live-mode delivery. Pools are bounded; idle sockets
 * are closed after FREE_SOCKET_IDLE_MS, below the 5 s keep-alive timeout common servers use
 * (node's own included), which keeps the race with the receiver closing an idle socket rare.
 */
const SOCKETS_PER_HOST_MAX = 64;
const SOCKETS_TOTAL_MAX = 256;
const FREE_SOCKETS_PER_HOST_MAX = 16;
const FREE_SOCKET_IDLE_MS = 4_000;
const agentOptions = {
  keepAlive: true,
  maxSockets: SOCKETS_PER_HOST_MAX,
  maxTotalSockets: SOCKETS_TOTAL_MAX,
  maxFreeSockets: FREE_SOCKETS_PER_HOST_MAX,
  timeout: FREE_SOCKET_IDLE_MS,
  scheduling: 'lifo',
} as const;
const agents = {
  live: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
  test: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
} as const;

export interface WebhookRequest {
  readonly url: string;
  readonly mode: OutboundMode;
  /** Signature headers and the like; `content-type` and `content-length` are set here. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Bounds the whole exchange: resolution, connection, request and response. */
  readonly timeoutMs: number;
}

export interface WebhookResult {
  /** The receiver's status; null when no complete answer arrived. */
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** The failure's class when statusCode is null (never `http_status`: that is the caller's). */
  readonly error: DeliveryFailure | null;
}

export interface SendWebhookOptions {
  /** Name resolution; tests inject one. Defaults to the system resolver. */
  readonly lookup?: LookupFn;
}

/** Thrown inside the lookup hook; recognised when it surfaces as the request's error. */
class ForbiddenAddressError extends Error {
  override readonly name = 'ForbiddenAddressError';
}

export async function sendWebhook(
  request: WebhookRequest,
  options: SendWebhookOptions = {},
): Promise<WebhookResult> {
  const { mode, headers, body, timeoutMs } = request;
  assert(mode === 'test' || mode === 'live', 'mode is test or live');
  assert(
    Number.isInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX,
    'timeoutMs is a positive integer within TIMEOUT_MS_MAX',
  );
  const bodyBytes = Buffer.byteLength(body, 'utf8');
  assert(bodyBytes <= REQUEST_BODY_BYTES_MAX, 'the webhook body is within REQUEST_BODY_BYTES_MAX');
  assert(
    Object.keys(headers).length <= REQUEST_HEADERS_COUNT_MAX,
    'the webhook headers are within REQUEST_HEADERS_COUNT_MAX',
  );

  const startMs = performance.now();
  const target = targetOf(request.url, mode);
  if (typeof target === 'string') return failedResult(startMs, target);
  const { url, host, secure } = target;

  const outgoing: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) outgoing[name.toLowerCase()] = value;
  outgoing['content-type'] = 'application/json';
  outgoing['content-length'] = bodyBytes;

  const requestOptions: https.RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    host,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: outgoing,
    agent: secure ? agents[mode].https : agents[mode].http,
    lookup: checkingLookup(mode, options.lookup ?? systemLookup),
    // Idle bound on the socket; the timer in `exchange` bounds the whole exchange.
    timeout: timeoutMs,
  };
  return exchange(secure, requestOptions, request, startMs);
}

/** Where an attempt goes: the parts of its URL a request is made of. */
interface Target {
  readonly url: URL;
  /** Without the brackets of an IPv6 literal. */
  readonly host: string;
  readonly secure: boolean;
}

/** The target of `urlText`, or the class of why the mode may not send to it. */
function targetOf(
  urlText: string,
  mode: OutboundMode,
): Target | Extract<DeliveryFailure, 'invalid_url' | 'address_forbidden'> {
  // The URL was checked at registration; check the parts that matter again, it costs nothing.
  let url: URL;
  try {
    if (urlText.length > URL_CHARS_MAX) return 'invalid_url';
    url = new URL(urlText);
  } catch {
    return 'invalid_url';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'invalid_url';
  if (mode === 'live' && url.protocol !== 'https:') return 'invalid_url';
  if (url.username !== '' || url.password !== '') return 'invalid_url';
  const host = hostOf(url);
  if (host === '') return 'invalid_url';
  if (isIpLiteral(host) && !isAllowedAddress(host, mode)) return 'address_forbidden';
  return { url, host, secure: url.protocol === 'https:' };
}

function elapsedMs(startMs: number): number {
  return Math.max(0, Math.round(performance.now() - startMs));
}

function failedResult(startMs: number, error: DeliveryFailure): WebhookResult {
  return { statusCode: null, durationMs: elapsedMs(startMs), error };
}

/**
 * The request and its answer, settled once: by the answer, by the first failure, or by the
 * timer, which bounds the whole exchange (the socket's own timeout bounds only idleness).
 */
function exchange(
  secure: boolean,
  requestOptions: https.RequestOptions,
  request: WebhookRequest,
  startMs: number,
): Promise<WebhookResult> {
  const { mode, body, timeoutMs } = request;
  return new Promise<WebhookResult>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const settle = (result: WebhookResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      settle(failedResult(startMs, 'timeout'));
      req?.destroy();
    }, timeoutMs);

    try {
      req = (secure ? https : http).request(requestOptions);
    } catch (error) {
      // Invalid header names or values are refused synchronously; report the class only.
      settle(failedResult(startMs, failureOf(error)));
      return;
    }
    const started = req;
    started.on('error', (error) => {
      settle(failedResult(startMs, failureOf(error)));
    });
    started.on('timeout', () => {
      settle(failedResult(startMs, 'timeout'));
      started.destroy();
    });
    started.on('socket', (socket) => {
      verifyRemote(socket, mode, () => {
        settle(failedResult(startMs, 'address_forbidden'));
        started.destroy();
      });
    });
    started.on('response', (res) => {
      readAnswer(res, started, settle, startMs);
    });
    started.end(body);
  });
}

/**
 * A backstop to the checking `lookup`: whatever the socket connected to must have passed the
 * policy, or `refuse` is called.
 */
function verifyRemote(socket: Socket, mode: OutboundMode, refuse: () => void): void {
  const verify = (): void => {
    const remote = socket.remoteAddress;
    if (remote === undefined || !isAllowedAddress(remote, mode)) refuse();
  };
  if (socket.connecting) socket.once('connect', verify);
  else verify();
}

/** Settles with the answer's status once it is complete or RESPONSE_BODY_BYTES_MAX is read. */
function readAnswer(
  res: http.IncomingMessage,
  started: http.ClientRequest,
  settle: (result: WebhookResult) => void,
  startMs: number,
): void {
  const statusCode = res.statusCode ?? null;
  let bodyBytesRead = 0;
  const answered = (): void => {
    settle({ statusCode, durationMs: elapsedMs(startMs), error: null });
  };
  res.on('data', (chunk: Buffer) => {
    bodyBytesRead += chunk.length;
    if (bodyBytesRead > RESPONSE_BODY_BYTES_MAX) {
      // Enough: the status is known and the rest is discarded unread.
      answered();
      res.destroy();
      started.destroy();
    }
  });
  res.on('end', answered);
  res.on('error', () => {
    settle(failedResult(startMs, 'connection_failed'));
  });
  res.on('close', () => {
    if (res.complete) answered();
    else settle(failedResult(startMs, 'connection_failed'));
  });
}

/**
 * The `lookup` hook `net.connect` calls for a host name. Every address the name resolves to
 * must pass the mode's policy, or none is connected to (the same rule as registration).
 * Node asks with `all: true` when it will try several addresses (autoSelectFamily), with
 * `all: false` when it wants one; both are answered from the checked list.
 */
function checkingLookup(mode: OutboundMode, lookup: LookupFn): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const done = (error: NodeJS.ErrnoException | null, addresses: DnsLookupAddress[]): void => {
      if (error !== null) {
        callback(error, '', undefined);
        return;
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', undefined);
        return;
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    };
    lookup(hostname).then(
      (found) => {
        if (found.length > LOOKUP_ADDRESSES_MAX) {
          done(Object.assign(new Error('too many addresses'), { code: 'ETOOMANY' }), []);
          return;
        }
        if (found.some(({ address }) => !isAllowedAddress(address, mode))) {
          done(new ForbiddenAddressError('address forbidden'), []);
          return;
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = found
          .filter((a) => family === 0 || a.family === family)
          .map(({ address, family: f }) => ({ address, family: f }));
        done(null, usable);
      },
      (error: unknown) => {
        const code = (error as { code?: unknown }).code;
        done(
          Object.assign(new Error('lookup failed'), {
            code: typeof code === 'string' ? code : 'ENOTFOUND',
          }),
          [],
        );
      },
    );
  };
}

/**
 * The class of an error node raised; never its text. TLS failures (a certificate refused, a
 * handshake that failed, a port that does not speak TLS) are told apart because a receiver's
 * owner can act on them; every other network failure is `connection_failed`.
 */
function failureOf(error: unknown): DeliveryFailure {
  if (error instanceof ForbiddenAddressError) return 'address_forbidden';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TLS_ERROR.test(code)) return 'tls_error';
  return 'connection_failed';
}

/** OpenSSL's and node's TLS error codes (certificate checks, handshake, protocol). */
const TLS_ERROR =
  /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$|ERR_OSSL_)/;
