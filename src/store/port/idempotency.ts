/** A request sent with an Idempotency-Key (contract section 5; ops/idempotency.ts keeps them). */
export interface IdempotentRequest {
  readonly key: string;
  readonly method: string;
  readonly path: string;
  /** The request body as received; only its SHA-256 is kept. */
  readonly body: string;
}

/** The response kept for the key, answered again to a replay. */
export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
}
