/**
 * The websocket half of the local endpoint, so that web3.js `Connection.confirmTransaction`
 * works unchanged: it subscribes with `signatureSubscribe` and only asks
 * `getSignatureStatuses` once the subscription is acknowledged. web3.js connects to the HTTP
 * port + 1 (its convention for an endpoint with an explicit port); the server listens on both.
 *
 * A minimal RFC 6455 server over node:http's `upgrade` (no dependency): unfragmented text
 * frames, ping/pong, close; no extensions. Methods: signatureSubscribe/Unsubscribe (one-shot,
 * notified when the signature lands, at once if it already has), slotSubscribe/Unsubscribe.
 * Bounded: frame size, connections, subscriptions per connection.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LocalChain, SignatureStatus } from './chain.js';
import {
  configParam,
  dispatch,
  invalidParam,
  stringParam,
  type RpcHandler,
  type RpcMethods,
} from './rpc-protocol.js';

export const WEBSOCKET_FRAME_BYTES_MAX = 1024 * 1024;
export const WEBSOCKET_CONNECTIONS_MAX = 64;
export const SUBSCRIPTIONS_PER_CONNECTION_MAX = 1_000;

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const OPCODE_CONTINUATION = 0x0;
const OPCODE_TEXT = 0x1;
const OPCODE_BINARY = 0x2;
const OPCODE_CLOSE = 0x8;
const OPCODE_PING = 0x9;

export function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  let header: Buffer;
  if (length < 126) {
    header = Buffer.from([0x80 | opcode, length]);
  } else if (length < 65_536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

interface Frame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
  /** Bytes of the buffer the frame took. */
  size: number;
}

/** The first complete frame in `buffer`; null if incomplete; throws on a protocol violation. */
export function decodeFrame(buffer: Buffer): Frame | null {
  if (buffer.length < 2) return null;
  const first = buffer[0] ?? 0;
  const second = buffer[1] ?? 0;
  if ((second & 0x80) === 0) throw new Error('client frames must be masked');
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    const long = buffer.readBigUInt64BE(2);
    if (long > BigInt(WEBSOCKET_FRAME_BYTES_MAX)) throw new Error('frame too large');
    length = Number(long);
    offset = 10;
  }
  if (length > WEBSOCKET_FRAME_BYTES_MAX) throw new Error('frame too large');
  if (buffer.length < offset + 4 + length) return null;
  const mask = buffer.subarray(offset, offset + 4);
  const payload = Buffer.from(buffer.subarray(offset + 4, offset + 4 + length));
  for (let i = 0; i < payload.length; i += 1) {
    payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
  }
  return { fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload, size: offset + 4 + length };
}

interface Connection {
  socket: Duplex;
  signatureSubscriptions: Map<number, string>;
  slotSubscriptions: Set<number>;
}

export class LocalWebsocketServer {
  readonly #chain: LocalChain;
  readonly #connections = new Set<Connection>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #nextSubscriptionId = 1;
  readonly #onLanded: (signature: string, status: SignatureStatus) => void;
  readonly #onSlot: (slot: number) => void;

  constructor(chain: LocalChain) {
    this.#chain = chain;
    this.#onLanded = (signature, status) => {
      for (const connection of this.#connections) {
        for (const [id, awaited] of connection.signatureSubscriptions) {
          if (awaited !== signature) continue;
          connection.signatureSubscriptions.delete(id);
          this.#notifySignature(connection, id, status);
        }
      }
    };
    this.#onSlot = (slot) => {
      for (const connection of this.#connections) {
        for (const id of connection.slotSubscriptions) {
          this.#send(connection, {
            jsonrpc: '2.0',
            method: 'slotNotification',
            params: {
              result: { parent: Math.max(slot - 1, 0), root: slot, slot },
              subscription: id,
            },
          });
        }
      }
    };
    chain.on('landed', this.#onLanded);
    chain.on('slot', this.#onSlot);
  }

  /** Handles an HTTP upgrade request: completes the handshake or refuses it. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const key = request.headers['sec-websocket-key'];
    const isWebsocket = request.headers.upgrade?.toLowerCase() === 'websocket';
    if (!isWebsocket || typeof key !== 'string' || key.length > 64) {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    if (this.#connections.size >= WEBSOCKET_CONNECTIONS_MAX) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    const accept = createHash('sha1')
      .update(key + WEBSOCKET_GUID)
      .digest('base64');
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    const connection: Connection = {
      socket,
      signatureSubscriptions: new Map(),
      slotSubscriptions: new Set(),
    };
    this.#connections.add(connection);
    let buffered: Buffer = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      try {
        for (let frame = decodeFrame(buffered); frame !== null; frame = decodeFrame(buffered)) {
          buffered = buffered.subarray(frame.size);
          this.#onFrame(connection, frame);
        }
      } catch {
        this.#close(connection, 1002);
      }
    };
    socket.on('data', onData);
    socket.on('error', () => {
      this.#connections.delete(connection);
    });
    socket.on('close', () => {
      this.#connections.delete(connection);
    });
    if (buffered.length > 0) onData(Buffer.alloc(0));
  }

  /** Closes every connection and stops listening to the chain. */
  close(): void {
    this.#chain.off('landed', this.#onLanded);
    this.#chain.off('slot', this.#onSlot);
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const connection of this.#connections) connection.socket.destroy();
    this.#connections.clear();
  }

  #close(connection: Connection, code: number): void {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code, 0);
    if (connection.socket.writable) connection.socket.end(encodeFrame(OPCODE_CLOSE, payload));
    this.#connections.delete(connection);
  }

  #onFrame(connection: Connection, frame: Frame): void {
    if (frame.opcode === OPCODE_CLOSE) {
      this.#close(connection, 1000);
      return;
    }
    if (frame.opcode === OPCODE_PING) {
      connection.socket.write(encodeFrame(0xa, frame.payload));
      return;
    }
    if (frame.opcode === OPCODE_TEXT || frame.opcode === OPCODE_BINARY) {
      if (!frame.fin) throw new Error('fragmented messages are not supported');
      void this.#onMessage(connection, frame.payload.toString('utf8'));
      return;
    }
    if (frame.opcode === OPCODE_CONTINUATION) throw new Error('unexpected continuation');
    // Pong and reserved opcodes: nothing to do.
  }

  async #onMessage(connection: Connection, text: string): Promise<void> {
    let request: unknown;
    try {
      request = JSON.parse(text);
    } catch {
      this.#send(connection, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error' },
      });
      return;
    }
    const response = await dispatch(this.#methods(connection), request);
    if (response !== undefined) this.#send(connection, response);
  }

  #send(connection: Connection, message: unknown): void {
    if (!connection.socket.writable) return;
    connection.socket.write(encodeFrame(OPCODE_TEXT, Buffer.from(JSON.stringify(message))));
  }

  #notifySignature(connection: Connection, id: number, status: SignatureStatus): void {
    this.#send(connection, {
      jsonrpc: '2.0',
      method: 'signatureNotification',
      params: {
        result: { context: { slot: status.slot }, value: { err: status.err } },
        subscription: id,
      },
    });
  }

  #subscriptionId(connection: Connection): number {
    const count = connection.signatureSubscriptions.size + connection.slotSubscriptions.size;
    if (count >= SUBSCRIPTIONS_PER_CONNECTION_MAX) {
      throw invalidParam(`at most ${SUBSCRIPTIONS_PER_CONNECTION_MAX} subscriptions`);
    }
    const id = this.#nextSubscriptionId;
    this.#nextSubscriptionId += 1;
    return id;
  }

  #methods(connection: Connection): RpcMethods {
    const signatureSubscribe: RpcHandler = async (params) => {
      const signature = stringParam(params, 0, 'signature');
      configParam(params, 1);
      const id = this.#subscriptionId(connection);
      const status = await this.#chain.status(signature);
      if (status === null) {
        connection.signatureSubscriptions.set(id, signature);
      } else {
        // Landed already: notify just after the subscription is acknowledged.
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          this.#notifySignature(connection, id, status);
        }, 10);
        this.#timers.add(timer);
      }
      return id;
    };
    const slotSubscribe: RpcHandler = () => {
      const id = this.#subscriptionId(connection);
      connection.slotSubscriptions.add(id);
      return Promise.resolve(id);
    };
    const unsubscribe: RpcHandler = (params) => {
      const id = params[0];
      if (typeof id !== 'number') throw invalidParam('subscription id must be a number');
      const removed =
        connection.signatureSubscriptions.delete(id) || connection.slotSubscriptions.delete(id);
      return Promise.resolve(removed);
    };
    return new Map<string, RpcHandler>([
      ['signatureSubscribe', signatureSubscribe],
      ['signatureUnsubscribe', unsubscribe],
      ['slotSubscribe', slotSubscribe],
      ['slotUnsubscribe', unsubscribe],
    ]);
  }
}
