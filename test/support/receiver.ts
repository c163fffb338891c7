import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook receiver on loopback, as a customer would run one: it verifies every delivery
 * with the `standardwebhooks` library and keeps what arrived. `answer` picks each reply's
 * status (200 by default), so tests can make it fail, time out or say 410.
 */
export interface Received {
  readonly id: string;
  readonly type: string;
  readonly body: {
    id: string;
    type: string;
    mode: string;
    data: { object: Record<string, unknown> };
  };
  readonly headers: IncomingHttpHeaders;
  readonly verified: boolean;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
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

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    received,
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
      new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_BYTES_MAX) chunks.push(chunk);
    });
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const verified = verifies(receiver.secret, text, request.headers);
      const body = JSON.parse(text) as Received['body'];
      const delivery: Received = {
        id: body.id,
        type: body.type,
        body,
        headers: request.headers,
        verified,
      };
      const status = receiver.answer(delivery, received.length);
      received.push(delivery);
      const reply = () => {
        response.writeHead(status).end();
        for (const wake of waiters.splice(0)) wake();
      };
      if (receiver.delayMs === 0) reply();
      else setTimeout(reply, receiver.delayMs);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, { url: `http://127.0.0.1:${port}/hooks` });
}

function verifies(secret: string, body: string, headers: IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
