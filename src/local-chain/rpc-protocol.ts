/**
 * JSON-RPC 2.0 framing shared by the HTTP endpoint and the websocket endpoint: the error type
 * (codes as Solana nodes use them), parameter readers that answer -32602 like a node does, and
 * dispatch of a single request or a bounded batch to a table of method handlers.
 */
import { PublicKey } from '@solana/web3.js';

/** Requests in one batch, at most. */
export const BATCH_REQUESTS_MAX = 100;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Solana: preflight simulation of sendTransaction failed. */
export const SEND_TRANSACTION_PREFLIGHT_FAILURE = -32002;
/** Solana: a signature does not verify. */
export const TRANSACTION_SIGNATURE_VERIFICATION_FAILURE = -32003;

export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
}

export type RpcHandler = (params: readonly unknown[]) => Promise<unknown>;
export type RpcMethods = ReadonlyMap<string, RpcHandler>;

export type RpcId = string | number | null;

export type RpcResponse =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown }
  | { jsonrpc: '2.0'; id: RpcId; error: { code: number; message: string; data?: unknown } };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function errorResponse(id: RpcId, error: RpcError): RpcResponse {
  return {
    jsonrpc: '2.0',
    id,
    error:
      error.data === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, data: error.data },
  };
}

function idOf(request: Record<string, unknown>): RpcId {
  const id = request.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** One request object to its response; undefined for a notification (no id). */
export async function dispatch(
  methods: RpcMethods,
  request: unknown,
): Promise<RpcResponse | undefined> {
  if (!isRecord(request) || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
    return errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request'));
  }
  const id = idOf(request);
  const isNotification = !('id' in request);
  const handler = methods.get(request.method);
  if (handler === undefined) {
    return isNotification
      ? undefined
      : errorResponse(id, new RpcError(METHOD_NOT_FOUND, 'Method not found'));
  }
  const params = request.params ?? [];
  if (!Array.isArray(params)) {
    return errorResponse(id, new RpcError(INVALID_PARAMS, 'Invalid params: expected an array'));
  }
  try {
    const result = await handler(params);
    return isNotification ? undefined : { jsonrpc: '2.0', id, result };
  } catch (error) {
    if (error instanceof RpcError) return errorResponse(id, error);
    const message = error instanceof Error ? error.message : String(error);
    return errorResponse(id, new RpcError(INTERNAL_ERROR, `Internal error: ${message}`));
  }
}

/** A parsed body (single request or batch) to what to answer; undefined: nothing. */
export async function dispatchBody(methods: RpcMethods, body: unknown): Promise<unknown> {
  if (!Array.isArray(body)) return dispatch(methods, body);
  if (body.length === 0) {
    return errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request: empty batch'));
  }
  if (body.length > BATCH_REQUESTS_MAX) {
    return errorResponse(
      null,
      new RpcError(INVALID_REQUEST, `Invalid request: more than ${BATCH_REQUESTS_MAX} in a batch`),
    );
  }
  const responses: RpcResponse[] = [];
  // One at a time: the batch order is the order state changes apply in.
  for (const request of body) {
    const response = await dispatch(methods, request);
    if (response !== undefined) responses.push(response);
  }
  return responses.length === 0 ? undefined : responses;
}

export function invalidParam(message: string): RpcError {
  return new RpcError(INVALID_PARAMS, `Invalid param: ${message}`);
}

export function stringParam(params: readonly unknown[], index: number, what: string): string {
  const value = params[index];
  if (typeof value !== 'string') throw invalidParam(`${what} must be a string`);
  return value;
}

export function pubkeyParam(params: readonly unknown[], index: number): PublicKey {
  const text = stringParam(params, index, 'address');
  if (text.length > 44) throw invalidParam('address is too long');
  try {
    return new PublicKey(text);
  } catch {
    throw invalidParam('Invalid');
  }
}

export function integerParam(
  params: readonly unknown[],
  index: number,
  what: string,
  max: number,
): number {
  const value = params[index];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw invalidParam(`${what} must be an integer in [0, ${max}]`);
  }
  return value;
}

/** The optional config object at `index` ({} if absent or null). */
export function configParam(params: readonly unknown[], index: number): Record<string, unknown> {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw invalidParam('config must be an object');
  return value;
}
