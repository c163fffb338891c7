import {
  createSpendgateClient,
  type SpendgateClient,
  type SpendgateErrorBody,
} from '../../src/client/index.js';

/**
 * A client of the REST API typed from the OpenAPI document (`npm run openapi` generates
 * src/client/api-types.ts from docs/openapi.json): paths, path and query parameters, request bodies
 * and answers are checked at compile time, and every operation's `default` answer is the
 * contract's error body (section 3), so `error.error.code` is typed too.
 *
 * The document declares no header parameters, so `Idempotency-Key` and `X-Two-Factor-Code`
 * go in a call's `headers` option: `client.POST(path, { body, headers: { 'Idempotency-Key': k } })`.
 */
export type TypedClient = SpendgateClient;

/** The published client (src/client, `@spendgate/client`), as the tests use it. */
export function typedClient(base: string, key: string): TypedClient {
  return createSpendgateClient({ baseUrl: base, apiKey: key });
}

/** The contract's error body (section 3), as the OpenAPI document types it. */
export type ErrorBody = SpendgateErrorBody;

/** A call's answer as openapi-fetch gives it: data on success, the error body otherwise. */
interface Answer<T> {
  readonly data?: T;
  readonly error?: { readonly error: ErrorBody };
  readonly response: Response;
}

/**
 * The success body of a call; throws (failing the test) with the error body otherwise, or when
 * the response lacks its `Request-Id` header (contract section 3: every response carries one).
 */
export function dataOf<T>(answer: Answer<T>): T {
  if (answer.data === undefined) {
    throw new Error(
      `expected a success, got ${answer.response.status}: ${JSON.stringify(answer.error)}`,
    );
  }
  const requestId = answer.response.headers.get('request-id') ?? '';
  if (!/^req_[0-9a-f]{32}$/.test(requestId)) {
    throw new Error(`a success without a Request-Id header: ${JSON.stringify(requestId)}`);
  }
  return answer.data;
}

/**
 * The refusal of a call: its status with the error body's type, code and param. Throws
 * (failing the test) on a success, or when the `Request-Id` header is not the body's
 * `requestId` (contract section 3 says every response carries both, the same).
 */
export function refusalOf(answer: Answer<unknown>): {
  status: number;
  type: ErrorBody['type'];
  code: ErrorBody['code'];
  param: string | undefined;
} {
  const body = answer.error?.error;
  if (body === undefined) {
    throw new Error(`expected a refusal, got ${answer.response.status} with a success body`);
  }
  const header = answer.response.headers.get('request-id');
  if (header !== body.requestId || !body.requestId.startsWith('req_')) {
    throw new Error(`Request-Id ${String(header)} differs from the body's ${body.requestId}`);
  }
  return { status: answer.response.status, type: body.type, code: body.code, param: body.param };
}
