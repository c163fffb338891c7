/**
 * A real webhook receiver on a loopback port for the outbound tests: it records every request
 * and counts TCP connections, so a test can prove that a refused delivery never connected.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface Receiver {
  readonly port: number;
  readonly url: (path: string) => string;
  readonly received: Received[];
  /** TCP connections accepted so far. */
  connections: number;
  readonly close: () => Promise<void>;
}

export async function startReceiver(routes: Record<string, Handler> = {}): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const handler = routes[path.split('?')[0] ?? ''];
      if (handler === undefined) {
        res.statusCode = 200;
        res.end('ok');
      } else {
        handler(req, res);
      }
    });
  });
  const receiver: Receiver = {
    port: 0,
    url: (path) => `http://127.0.0.1:${receiver.port}${path}`,
    received,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(receiver, { port: (server.address() as AddressInfo).port });
  return receiver;
}
