import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { frameAnswer, KeepAliveSockets, postRequest } from '../bench/keep-alive-sockets.js';

/** The open loop's client: what bench:http's paced figures are measured with. */
describe("the open loop's keep-alive sockets", () => {
  const answer = (head: string, body = '') => Buffer.from(`${head}\r\n\r\n${body}`);

  it('frames an answer by its Content-Length, and waits for the rest of one cut short', () => {
    const whole = answer(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 14',
      '{"approved":1}',
    );
    expect(frameAnswer(whole)).toEqual({
      status: 200,
      body: '{"approved":1}',
      bytes: whole.length,
    });
    expect(frameAnswer(whole.subarray(0, whole.length - 1))).toBeNull();
    expect(frameAnswer(whole.subarray(0, 20))).toBeNull();
    // The length counts bytes, not characters.
    const euro = answer('HTTP/1.1 429 Too Many Requests\r\nContent-Length: 3', '€');
    expect(frameAnswer(euro)).toEqual({ status: 429, body: '€', bytes: euro.length });
  });

  it('refuses what it cannot frame rather than guess', () => {
    expect(() => frameAnswer(answer('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked'))).toThrow(
      /without Content-Length/,
    );
    expect(() => frameAnswer(answer('SPDY 200\r\ncontent-length: 0'))).toThrow(/status line/);
    expect(() => frameAnswer(Buffer.alloc(20_000, 'a'))).toThrow(/past its bound/);
  });

  it('writes a POST with its headers and the byte length of its body', () => {
    const request = postRequest(new URL('http://127.0.0.1:8080'), '/v1/x', { 'x-a': 'b' }, 'é');
    expect(request.toString()).toBe(
      'POST /v1/x HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nx-a: b\r\ncontent-length: 2\r\n\r\né',
    );
  });

  let server: http.Server | undefined;
  let sockets: KeepAliveSockets | undefined;
  afterEach(async () => {
    sockets?.close();
    const closing = server;
    if (closing !== undefined) await new Promise((resolve) => closing.close(resolve));
    server = undefined;
    sockets = undefined;
  });

  /** A server answering each POST with its body, in two writes, or as `special` says. */
  async function echoServer(
    special: (
      body: string,
      response: http.ServerResponse,
      request: http.IncomingMessage,
    ) => boolean = () => false,
  ) {
    const connections = { opened: 0 };
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (special(body, response, request)) return;
        const bytes = Buffer.from(body);
        response.writeHead(200, { 'content-length': bytes.length });
        // The body a moment after the head: the client must wait for it.
        response.write(bytes.subarray(0, 1));
        setTimeout(() => response.end(bytes.subarray(1)), 2);
      });
    });
    server.on('connection', () => {
      connections.opened += 1;
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return { url, connections };
  }

  function sendAll(pool: KeepAliveSockets, url: URL, bodies: readonly string[]) {
    return Promise.all(
      bodies.map(
        (body) =>
          new Promise<{ status: number | null; body: string }>((resolve) => {
            pool.send(postRequest(url, '/echo', {}, body), (status, answered) => {
              resolve({ status, body: answered });
            });
          }),
      ),
    );
  }

  it('answers each request with its own answer, on at most its connections', async () => {
    const { url, connections } = await echoServer();
    sockets = new KeepAliveSockets(url, 3, 5000);
    const bodies = Array.from({ length: 40 }, (_, index) => `{"n":${index}}`);
    const answers = await sendAll(sockets, url, bodies);
    expect(answers).toEqual(bodies.map((body) => ({ status: 200, body })));
    expect(connections.opened).toBe(3);
  });

  it('fails the request of a socket that closes, and goes on with a new socket', async () => {
    const { url, connections } = await echoServer((body, _response, request) => {
      if (body !== 'cut') return false;
      // The request's socket: a response's is not set yet while the one before it finishes.
      request.socket.destroy();
      return true;
    });
    sockets = new KeepAliveSockets(url, 1, 5000);
    const answers = await sendAll(sockets, url, ['a', 'cut', 'b', 'c']);
    expect(answers).toEqual([
      { status: 200, body: 'a' },
      { status: null, body: '' },
      { status: 200, body: 'b' },
      { status: 200, body: 'c' },
    ]);
    expect(connections.opened).toBe(2);
  });

  it('fails a request unanswered past its timeout', async () => {
    const { url } = await echoServer((body) => body === 'never');
    sockets = new KeepAliveSockets(url, 2, 200);
    const startedMs = performance.now();
    const answers = await sendAll(sockets, url, ['never', 'soon']);
    expect(answers).toEqual([
      { status: null, body: '' },
      { status: 200, body: 'soon' },
    ]);
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(200);
  });

  it('fails a request whose answer it cannot frame', async () => {
    const { url } = await echoServer((body, response) => {
      if (body !== 'chunked') return false;
      response.writeHead(200, { 'transfer-encoding': 'chunked' });
      response.end('x');
      return true;
    });
    sockets = new KeepAliveSockets(url, 1, 5000);
    const answers = await sendAll(sockets, url, ['chunked', 'after']);
    expect(answers).toEqual([
      { status: null, body: '' },
      { status: 200, body: 'after' },
    ]);
  });
});
