import net from 'node:net';

/**
 * The open loop's HTTP/1.1 client: keep-alive sockets, one request in flight on each, the
 * request written as one prebuilt buffer and the answer framed by its Content-Length.
 *
 * Why not node:http or undici: the client shares the machine's two cores with the service it
 * measures, so its own cost is the service's latency. At 1,000 requests a second, on this
 * machine, http.request and undici (Pool.request and Pool.dispatch alike) each cost 235-275 us
 * of client CPU a request, and this client 115-127 us (the same requests to the same server,
 * measured side by side, docs/performance.md "The open loop's client"); the libraries arm a
 * timer and run stream machinery per request, and each wakeup they add costs tens of
 * microseconds on a virtual machine. Timeouts here are one sweep a second over the requests
 * in flight, not a timer each.
 *
 * What it does not do, because the service never answers so: chunked bodies, 1xx answers,
 * pipelining. An answer without Content-Length fails its request and closes its socket.
 */

/** One answer: its status and its body as text; or null status when the request failed. */
export type Answer = (status: number | null, body: string) => void;

/** Bytes of an answer's head at most: a head longer than this is not an answer we expect. */
const HEAD_BYTES_MAX = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.1 (\d{3}) /;
const CONTENT_LENGTH = /\r\ncontent-length: *(\d{1,9})\r\n/i;

/**
 * Frames one answer at the start of `buffer`: its status, body and length in bytes, null
 * while incomplete. Throws on what is not a Content-Length-framed HTTP/1.1 answer.
 */
export function frameAnswer(
  buffer: Buffer,
): { readonly status: number; readonly body: string; readonly bytes: number } | null {
  const headEnd = buffer.indexOf(HEAD_END);
  if (headEnd < 0) {
    if (buffer.length > HEAD_BYTES_MAX) throw new Error('an answer head past its bound');
    return null;
  }
  // The header block up to and with the blank line's first CRLF, so every header line ends
  // in CRLF for the pattern.
  const head = buffer.toString('latin1', 0, headEnd + 2);
  const status = STATUS_LINE.exec(head)?.[1];
  if (status === undefined) throw new Error(`not an HTTP/1.1 status line: ${head.slice(0, 40)}`);
  const length = CONTENT_LENGTH.exec(head)?.[1];
  if (length === undefined) throw new Error('an answer without Content-Length');
  const bodyStart = headEnd + HEAD_END.length;
  const bytes = bodyStart + Number(length);
  if (buffer.length < bytes) return null;
  return { status: Number(status), body: buffer.toString('utf8', bodyStart, bytes), bytes };
}

interface InFlight {
  readonly answer: Answer;
  readonly sentMs: number;
}

/** A socket of the pool, with the answer it waits for and the bytes of it read so far. */
class Connection {
  readonly socket: net.Socket;
  inFlight: InFlight | null = null;
  #received: Buffer = Buffer.alloc(0);

  constructor(
    url: URL,
    private readonly onIdle: (connection: Connection) => void,
    private readonly onClosed: (connection: Connection) => void,
  ) {
    this.socket = net.connect(Number(url.port), url.hostname);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => {
      this.#read(chunk);
    });
    // 'close' follows 'error': the request in flight fails once, on close.
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.#settle(null, '');
      this.onClosed(this);
    });
  }

  send(request: Buffer, answer: Answer): void {
    this.inFlight = { answer, sentMs: performance.now() };
    this.socket.write(request);
  }

  /** Ends the request in flight as failed and the socket with it (a timeout). */
  fail(): void {
    this.socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#received = this.#received.length === 0 ? chunk : Buffer.concat([this.#received, chunk]);
    let framed: ReturnType<typeof frameAnswer>;
    try {
      framed = frameAnswer(this.#received);
    } catch {
      this.socket.destroy();
      return;
    }
    if (framed === null) return;
    // One request in flight: anything past its answer is a protocol error.
    if (framed.bytes !== this.#received.length || this.inFlight === null) {
      this.socket.destroy();
      return;
    }
    this.#received = Buffer.alloc(0);
    this.#settle(framed.status, framed.body);
    this.onIdle(this);
  }

  #settle(status: number | null, body: string): void {
    const inFlight = this.inFlight;
    this.inFlight = null;
    inFlight?.answer(status, body);
  }
}

/**
 * Up to `connectionsMax` keep-alive sockets to `url`, opened as requests need them. A request
 * finding them all busy waits for the first to be free (the wait is in its latency: the
 * caller times from its own schedule); a request unanswered `timeoutMs` after it was written
 * fails, and so does each request of a socket that closes or answers out of protocol.
 */
export class KeepAliveSockets {
  readonly #idle: Connection[] = [];
  readonly #all = new Set<Connection>();
  readonly #waiting: { request: Buffer; answer: Answer }[] = [];
  readonly #sweep: NodeJS.Timeout;

  constructor(
    private readonly url: URL,
    private readonly connectionsMax: number,
    private readonly timeoutMs: number,
  ) {
    if (!Number.isInteger(connectionsMax) || connectionsMax < 1 || connectionsMax > 10_000) {
      throw new Error(`1 to 10,000 connections, not ${connectionsMax}`);
    }
    this.#sweep = setInterval(
      () => {
        this.#timeOut();
      },
      Math.min(1000, timeoutMs),
    );
  }

  /** Sends `request` (a whole HTTP/1.1 request) and calls `answer` once with its answer. */
  send(request: Buffer, answer: Answer): void {
    const connection = this.#idle.pop() ?? this.#open();
    if (connection === null) this.#waiting.push({ request, answer });
    else connection.send(request, answer);
  }

  /** Closes every socket; requests still in flight fail. */
  close(): void {
    clearInterval(this.#sweep);
    for (const { answer } of this.#waiting.splice(0)) answer(null, '');
    for (const connection of this.#all) connection.socket.destroy();
  }

  #open(): Connection | null {
    if (this.#all.size >= this.connectionsMax) return null;
    const connection = new Connection(
      this.url,
      (idle) => {
        this.#release(idle);
      },
      (closed) => {
        this.#all.delete(closed);
        const index = this.#idle.indexOf(closed);
        if (index >= 0) this.#idle.splice(index, 1);
        // A waiting request gets the place the closed socket left.
        const next = this.#waiting.shift();
        if (next !== undefined) this.send(next.request, next.answer);
      },
    );
    this.#all.add(connection);
    return connection;
  }

  #release(connection: Connection): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#idle.push(connection);
    else connection.send(next.request, next.answer);
  }

  #timeOut(): void {
    const oldestMs = performance.now() - this.timeoutMs;
    for (const connection of this.#all) {
      if (connection.inFlight !== null && connection.inFlight.sentMs < oldestMs) connection.fail();
    }
  }
}

/** A POST of `body` to `path` as one buffer, the connection kept alive. */
export function postRequest(
  url: URL,
  path: string,
  headers: Readonly<Record<string, string>>,
  body: string,
): Buffer {
  const lines = [`POST ${path} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
