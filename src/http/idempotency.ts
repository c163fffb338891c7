import type { FastifyReply, FastifyRequest } from 'fastify';
import { SpendgateError } from '../core/index.js';
import type { MessageSubject, Store, StoreOperations } from '../store/store.js';
import { authOf } from './auth.js';
import { errorBody } from './error-body.js';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * Runs a mutating route's effect, with its idempotency record when the request carries an
 * `Idempotency-Key` (contract section 5): the record is written in the effect's transaction,
 * a replay answers the stored status and body with `Idempotent-Replayed: true`, and a refusal
 * other than a 400 is stored as the error body it answered.
 */
export async function respond<Body>(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  /** The success status, or how the effect's answer gives it (202 for work it queued). */
  status: number | ((body: Body) => number),
  effect: (operations: StoreOperations) => Promise<Body>,
  options: {
    /**
     * What the record keeps to replay, when the answer holds what must not be stored (Create
     * Webhook's signing secret): this request is answered in full, a replay with the rest.
     */
    readonly forReplay?: (body: Body) => unknown;
    /** A lifecycle message, and what it is about: run by Store.message when there is no key. */
    readonly message?: MessageSubject;
  } = {},
): Promise<FastifyReply> {
  const statusOf = typeof status === 'number' ? () => status : status;
  const header = request.headers['idempotency-key'];
  if (header === undefined) {
    const body = await (options.message === undefined
      ? store.transaction(effect)
      : store.message(effect, options.message));
    return reply.code(statusOf(body)).send(body);
  }
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw new SpendgateError(
      'parameter_invalid',
      'Idempotency-Key must be 1 to 255 printable ASCII characters.',
      'Idempotency-Key',
    );
  }
  const { scope } = authOf(request);
  // The effect's own answer, when it ran and was not refused: what this request is answered.
  const answered: { ran: boolean; body?: Body } = { ran: false };
  const result = await store.idempotent(
    scope,
    {
      key: header,
      method: request.method,
      path: request.url,
      body: bodyText(request.body),
    },
    async (operations) => {
      const body = await effect(operations);
      answered.ran = true;
      answered.body = body;
      return {
        status: statusOf(body),
        body: options.forReplay === undefined ? body : options.forReplay(body),
      };
    },
    // A refusal is an answer to keep, except a 400 (the request itself was wrong: it may be
    // corrected and sent again with the same key) and a 5xx (nothing was decided).
    (error) =>
      error.status === 400 || error.status >= 500
        ? null
        : {
            status: error.status,
            body: errorBody(error.code, request.id, error.message, error.param),
          },
  );
  // Not replayed and the effect ran: its answer, whole. Otherwise (a replay, or a refusal the
  // record keeps) what the record holds.
  const body = !result.replayed && answered.ran ? answered.body : result.response.body;
  if (result.replayed) markReplay(request, reply, body);
  return reply.code(result.response.status).send(body);
}

/**
 * A replay's headers. A stored refusal is replayed whole, its requestId the first request's
 * (section 5), and the Request-Id header names the same id as the body (section 3): the one
 * the client quotes finds the request that was decided. This request's own id stays in the log.
 */
function markReplay(request: FastifyRequest, reply: FastifyReply, body: unknown): void {
  void reply.header('Idempotent-Replayed', 'true');
  const originalId = storedRequestId(body);
  if (originalId === undefined) return;
  void reply.header('Request-Id', originalId);
  request.log.info({ replayOf: originalId }, 'replayed a stored refusal');
}

/** The requestId of a stored error body (contract section 3); undefined for any other body. */
function storedRequestId(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined;
  const { error } = body;
  if (typeof error !== 'object' || error === null || !('requestId' in error)) return undefined;
  return typeof error.requestId === 'string' ? error.requestId : undefined;
}

/**
 * The body as the record's hash reads it. JSON.stringify recurses: a body nested deeper than
 * the stack left to this handler (the parser takes a few thousand levels) would throw a
 * RangeError, a 500, so it is refused as the malformed body it is.
 */
function bodyText(body: unknown): string {
  try {
    return JSON.stringify(body ?? null);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new SpendgateError('invalid_json', 'The request body is nested too deeply.');
  }
}
