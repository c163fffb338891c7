import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * The one webhook receiver of the tests and the benchmarks: an HTTP server on loopback, as a
 * customer would run one. It keeps every request that arrived (with the time it arrived),
 * verifies each with the `standardwebhooks` library once `secret` is set (timing the check),
 * and counts TCP connections, so a test can prove that a refused delivery never connected.
 * `answer` picks each reply's status (200 by default) and `delayMs` how long it waits, so tests
 * can make it fail, time out or say 410; a route of `routes` answers its path by hand instead
 * (a redirect, a stall, a flood).
 */
export interface WebhookEvent {
  id: string;
  type: string;
  mode: string;
  createdAt: string;
  data: { object: Record<string, unknown> };
}

export interface Received {
  /** The event's id and type, from the body ('' where it has none). */
  readonly id: string;
  readonly type: string;
  /** The body as JSON (`{}` where it is not a JSON object), and as it was sent. */
  readonly body: WebhookEvent;
  readonly raw: string;
  readonly method: string;
  /** The request's path, with its query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Whether its signature verified with `secret` (never, while `secret` is ''). */
  readonly verified: boolean;
  /** The time spent verifying it, in ms. */
  readonly verifyMs: number;
  /** When its body had arrived, by this process's clock (epoch ms). */
  readonly receivedAtMs: number;
}

/** Answers a request by hand; it is called once the request's body has been read. */
export type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export interface ReceiverOptions {
  /** The path of `url`: `/hooks` unless said. */
  readonly path?: string;
  /** Handlers by path (without the query), in place of `answer` for their path. */
  readonly routes?: Readonly<Record<string, Handler>>;
  /**
   * How long an idle kept-alive connection stays open: 1 s unless said. Node's agent lets an
   * idle socket go 1 s before the server's hint, so at 1 s every request has a connection of
   * its own; 5 s (Node's default, as a customer's server would have) lets the sender reuse one.
   */
  readonly keepAliveTimeoutMs?: number;
}

export interface Receiver {
  /** The URL to register: the receiver's origin and `options.path`. */
  readonly url: string;
  readonly port: number;
  /** The URL of another path on the receiver. */
  at(path: string): string;
  readonly received: Received[];
  /** TCP connections accepted so far. */
  connections: number;
  /** Set once the endpoint is created: deliveries are verified with it. */
  secret: string;
  answer: (delivery: Received, index: number) => number;
  /** How long each answer waits, to play a slow endpoint. */
  delayMs: number;
  /** Resolves once `count` deliveries of `type` (any, if omitted) have arrived. */
  until(count: number, type?: string, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

const BODY_BYTES_MAX = 1024 * 1024;

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  let verifier: { secret: string; webhook: Webhook | null } = { secret: '', webhook: null };
  /** The verifier for the current `secret`, made again only when it changes. */
  const verifierOf = (secret: string): Webhook | null => {
    if (verifier.secret !== secret) {
      let webhook: Webhook | null = null;
      try {
        webhook = secret === '' ? null : new Webhook(secret);
      } catch {
        // A secret the library refuses verifies nothing.
      }
      verifier = { secret, webhook };
    }
    return verifier.webhook;
  };
  const receiver: Receiver = {
    url: '',
    port: 0,
    at: (path) => `http://127.0.0.1:${receiver.port}${path}`,
    received,
    connections: 0,
    secret: '',
    answer: () => 200,
    delayMs: 0,
    async until(count, type, timeoutMs = 20_000) {
      const matching = () =>
        received.filter((delivery) => type === undefined || delivery.type === type);
      const deadline = Date.now() + timeoutMs;
      while (matching().length < count) {
        if (Date.now() > deadline) {
          throw new Error(`${matching().length} of ${count} ${type ?? 'deliveries'} arrived`);
        }
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return matching();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_BYTES_MAX) chunks.push(chunk);
    });
    request.on('end', () => {
      const receivedAtMs = Date.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      const { body, verified, verifyMs } = read(raw, request.headers, verifierOf(receiver.secret));
      const path = request.url ?? '';
      const delivery: Received = {
        id: typeof body.id === 'string' ? body.id : '',
        type: typeof body.type === 'string' ? body.type : '',
        body,
        raw,
        method: request.method ?? '',
        path,
        headers: request.headers,
        verified,
        verifyMs,
        receivedAtMs,
      };
      const handler = options.routes?.[path.split('?')[0] ?? ''];
      if (handler !== undefined) {
        received.push(delivery);
        handler(request, response);
        wake();
        return;
      }
      const status = receiver.answer(delivery, received.length);
      received.push(delivery);
      const reply = () => {
        if (!response.destroyed) response.writeHead(status).end();
        wake();
      };
      if (receiver.delayMs === 0) reply();
      else setTimeout(reply, receiver.delayMs);
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1000;
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    port,
    url: `http://127.0.0.1:${port}${options.path ?? '/hooks'}`,
  });
}

/** The body as JSON, and whether `webhook` verifies it (the library parses it when it does). */
function read(
  raw: string,
  headers: IncomingHttpHeaders,
  webhook: Webhook | null,
): { body: WebhookEvent; verified: boolean; verifyMs: number } {
  let parsed: unknown;
  let verified = false;
  let verifyMs = 0;
  if (webhook !== null) {
    const started = performance.now();
    try {
      parsed = webhook.verify(raw, headers as Record<string, string>);
      verified = true;
    } catch {
      // Not verified: parsed below.
    }
    verifyMs = performance.now() - started;
  }
  if (!verified) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = {};
    }
  }
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as WebhookEvent;
  return { body, verified, verifyMs };
}

/**
 * A loopback port that takes every connection and resets it at once: something listening that
 * is not an HTTP server. (A port that refuses connections is `freePort()` of processes.ts.)
 */
export async function resettingPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = createTcpServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
}
