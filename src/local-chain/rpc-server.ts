/**
 * A local Solana JSON-RPC endpoint on loopback, backed by an in-process runtime
 * (solana-bankrun), so that the transfer worker's production code path (web3.js `Connection`
 * against `SOLANA_TEST_RPC_URL`) runs unchanged with no network (contract section 12).
 *
 * Two listeners: the HTTP port P (JSON-RPC over POST, `GET /health`) and P + 1, where web3.js
 * looks for the websocket of an endpoint with an explicit port. Both serve both protocols.
 * Loopback only; request bodies at most 1 MiB; batches at most 100 requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalChain } from './chain.js';
import { LocalWebsocketServer } from './websocket-server.js';
import { createRpcMethods, type RpcInfo } from './rpc-methods.js';
import { dispatchBody, type RpcMethods } from './rpc-protocol.js';

export const REQUEST_BODY_BYTES_MAX = 1024 * 1024;
/** An oversized body is read and dropped up to this size, then the connection is cut. */
export const DRAINED_BODY_BYTES_MAX = 16 * 1024 * 1024;
/** Tries at finding a free pair of ports (P, P + 1) when the port is chosen by the system. */
export const PORT_PAIR_ATTEMPTS_MAX = 20;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export interface LocalRpcOptions {
  host: string;
  /** 0: any free pair of ports. */
  port: number;
}

export interface LocalRpcServer {
  /** The HTTP JSON-RPC endpoint, e.g. http://127.0.0.1:41234 */
  url: string;
  /** The websocket endpoint (HTTP port + 1), as web3.js derives it from `url`. */
  wsUrl: string;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      // Past the limit the rest is read and dropped (so the client gets its 413), up to a
      // hard stop where the connection is cut.
      if (bytes > DRAINED_BODY_BYTES_MAX) request.destroy();
      else if (bytes <= REQUEST_BODY_BYTES_MAX) chunks.push(chunk);
    });
    request.on('end', () => {
      resolve(bytes > REQUEST_BODY_BYTES_MAX ? null : Buffer.concat(chunks));
    });
    request.on('error', reject);
  });
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

async function handle(
  methods: RpcMethods,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method === 'GET' && request.url === '/health') {
    reply(response, 200, 'ok');
    return;
  }
  if (request.method !== 'POST') {
    reply(response, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required');
    return;
  }
  const body = await readBody(request);
  if (body === null) {
    reply(response, 413, 'Payload Too Large');
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    reply(response, 200, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
    return;
  }
  const answer = await dispatchBody(methods, parsed);
  if (answer === undefined) {
    response.writeHead(204).end();
    return;
  }
  reply(response, 200, answer);
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => {
      resolve();
    });
    server.closeAllConnections();
  });
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startLocalRpc(
  chain: LocalChain,
  info: RpcInfo,
  options: LocalRpcOptions,
): Promise<LocalRpcServer> {
  const { host, port } = options;
  if (!LOOPBACK_HOSTS.has(host)) throw new Error(`the local RPC listens on loopback only: ${host}`);
  if (!Number.isInteger(port) || port < 0 || port > 65_534) {
    throw new RangeError(`port must be 0 or in [1, 65534], got ${port}`);
  }
  const methods = createRpcMethods(chain, info);
  const websocket = new LocalWebsocketServer(chain);
  const makeServer = () => {
    const server = createServer((request, response) => {
      handle(methods, request, response).catch(() => {
        if (!response.headersSent) reply(response, 500, 'Internal Server Error');
        else response.destroy();
      });
    });
    server.on('upgrade', (request: IncomingMessage, socket, head: Buffer) => {
      websocket.upgrade(request, socket, head);
    });
    server.keepAliveTimeout = 5_000;
    return server;
  };
  const http = makeServer();
  const ws = makeServer();
  const attempts = port === 0 ? PORT_PAIR_ATTEMPTS_MAX : 1;
  for (let attempt = 1; ; attempt += 1) {
    const httpPort = await listen(http, host, port);
    try {
      const wsPort = await listen(ws, host, httpPort + 1);
      const base = urlHost(host);
      return {
        url: `http://${base}:${httpPort}`,
        wsUrl: `ws://${base}:${wsPort}`,
        close: async () => {
          websocket.close();
          await Promise.all([closeServer(http), closeServer(ws)]);
        },
      };
    } catch (error) {
      await closeServer(http);
      if (attempt >= attempts) {
        websocket.close();
        throw error;
      }
    }
  }
}
