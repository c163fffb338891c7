import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Store } from '../store/store.js';

/*
 * The embedded database beside a running server. PGlite is one process's database: a running
 * `spendgate serve` holds `<dataDir>/pglite` (data-folder-lock.ts), so `keys` and `reserves`
 * could not open it. The server instead listens on a Unix socket in the data folder,
 * `<dataDir>/admin.sock` (the folder is 0700, the socket 0600: only the user who runs the
 * server reaches it), and the CLI calls the few store methods those commands use through it.
 * Why not serve PGlite itself over a socket (@electric-sql/pglite-socket): it is not a
 * dependency, and a second client would share the server's one connection, its transactions
 * included; an allow-list of store methods keeps each call one of the store's own transactions.
 *
 * One JSON line each way per connection: `{"method","args"}`, then `{"result"}` or
 * `{"error":{"name","message"}}`. Only the methods below are served.
 */

export const ADMIN_SOCKET = 'admin.sock';

const ADMIN_METHODS = [
  'findOrCreateAccount',
  'findAccountByName',
  'createApiKey',
  'listApiKeys',
  'revokeApiKey',
  'latestReserveRuns',
  'unsentExternalTransfers',
  'requestReserveRun',
  'reserveRunRequestOpen',
  'closeReserveRunRequests',
] as const;
type AdminMethod = (typeof ADMIN_METHODS)[number];

/** A request or answer larger than this is refused: the served methods take and give little. */
const MESSAGE_BYTES_MAX = 1024 * 1024;
/** A call that takes longer than this is abandoned by the CLI (a server stuck or stopping). */
const CALL_MS_MAX = 30_000;

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET);
}

function isAdminMethod(value: unknown): value is AdminMethod {
  return (ADMIN_METHODS as readonly unknown[]).includes(value);
}

/** Reads one line from the socket, at most MESSAGE_BYTES_MAX. */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end));
      else if (text.length > MESSAGE_BYTES_MAX) reject(new Error('admin message too large'));
    });
    socket.on('error', reject);
    socket.on('end', () => {
      reject(new Error('the admin socket closed before answering'));
    });
  });
}

async function answer(store: Store, line: string): Promise<unknown> {
  const request = JSON.parse(line) as { method?: unknown; args?: unknown };
  if (!isAdminMethod(request.method) || !Array.isArray(request.args)) {
    throw new Error('not an admin request');
  }
  // Each method is called with the arguments the CLI gave; the allow-list above limits which.
  const methods = store as unknown as Record<AdminMethod, (...args: unknown[]) => Promise<unknown>>;
  return methods[request.method](...(request.args as unknown[]));
}

/** Serves the store's admin methods on `<dataDir>/admin.sock`, replacing a stale socket. */
export async function listenAdminSocket(dataDir: string, store: Store): Promise<Server> {
  const path = adminSocketPath(dataDir);
  // A socket file left by a server that was killed: this process holds the data folder's lock
  // now, so no other server answers on it.
  if (existsSync(path)) unlinkSync(path);
  const server = createServer((socket) => {
    readLine(socket)
      .then((line) => answer(store, line))
      .then(
        (result) => JSON.stringify({ result: result ?? null }),
        (error: unknown) =>
          JSON.stringify({
            error: {
              name: error instanceof Error ? error.name : 'Error',
              message: error instanceof Error ? error.message : String(error),
            },
          }),
      )
      .then((text) => socket.end(`${text}\n`))
      .catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  // The file goes with the process, however it stops (a SIGKILL leaves it: see above).
  process.once('exit', () => {
    if (server.listening) unlinkSync(path);
  });
  return server;
}

/** One call through the socket; rejects with the server's error, by name and message. */
function call(path: string, method: AdminMethod, args: unknown[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.setTimeout(CALL_MS_MAX, () => {
      socket.destroy(new Error(`the running server did not answer within ${CALL_MS_MAX} ms`));
    });
    socket.once('connect', () => socket.write(`${JSON.stringify({ method, args })}\n`));
    readLine(socket).then((line) => {
      socket.end();
      const reply = JSON.parse(line) as {
        result?: unknown;
        error?: { name: string; message: string };
      };
      if (reply.error !== undefined) {
        const error = new Error(reply.error.message);
        error.name = reply.error.name;
        reject(error);
      } else resolve(reply.result);
    }, reject);
  });
}

/** Whether a server answers on the data folder's admin socket (a stale file does not). */
export async function adminSocketAnswers(dataDir: string): Promise<boolean> {
  const path = adminSocketPath(dataDir);
  if (!existsSync(path)) return false;
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

/**
 * The running server's store, as far as `keys` and `reserves` use it: each method a call
 * through the admin socket. `close` has nothing to close (each call is its own connection).
 */
export function remoteStore(dataDir: string): Store & { close(): Promise<void> } {
  const path = adminSocketPath(dataDir);
  const target = { close: () => Promise.resolve() };
  return new Proxy(target, {
    get(object, property) {
      if (property === 'close') return object.close;
      // Not a thenable (`await` looks for `then`), and nothing but the served methods.
      if (!isAdminMethod(property)) return undefined;
      return (...args: unknown[]) => call(path, property, args);
    },
  }) as unknown as Store & { close(): Promise<void> };
}
