/*
 * The console's one way to the API: the key lives in this tab's sessionStorage only (never a
 * cookie, never a URL), and goes in the Authorization header of each request. An error answer
 * becomes an ApiError carrying the contract's error body (code, message, param).
 */

const KEY_ITEM = 'spendgate.console.key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY_ITEM);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; param?: string };
}

async function errorOf(response: Response): Promise<ApiError> {
  let body: ErrorBody = {};
  try {
    body = (await response.json()) as ErrorBody;
  } catch {
    // Not the contract's body (a proxy's page): the status alone.
  }
  return new ApiError(
    response.status,
    body.error?.code ?? 'http_error',
    body.error?.message ?? `The server answered ${String(response.status)}.`,
    body.error?.param ?? null,
  );
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly key?: string;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** One request; the parsed JSON answer, or an ApiError. */
export async function api<T>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const key = options.key ?? storedKey();
  if (key === null) throw new ApiError(401, 'missing_api_key', 'Sign in with an API key.', null);
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...options.headers };
  const init: RequestInit = { method, headers, cache: 'no-store' };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  if (options.signal !== undefined) init.signal = options.signal;
  const response = await fetch(path, init);
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** A fresh Idempotency-Key for a mutating request the user may retry. */
export function idempotencyKey(): Record<string, string> {
  return { 'idempotency-key': crypto.randomUUID() };
}

export interface Page<T> {
  readonly data: T[];
  readonly hasMore: boolean;
}

/** A query string of the filters that are set. */
export function query(filters: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A message for any failure, for the page's alert. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
