import type { ErrorCode } from '../../core/index.js';

/** An error example of an operation: the code, and the message and param it answers with. */
export interface ErrorExample {
  readonly code: ErrorCode;
  readonly message: string;
  readonly param?: string;
}

export interface OperationDoc {
  readonly summary: string;
  /** CommonMark, as the reference page renders it. */
  readonly description: string;
  /** The description of the success response. */
  readonly returns: string;
  /** A code alone is shown with its example of `ERROR_EXAMPLES`. */
  readonly errors: readonly (ErrorCode | ErrorExample)[];
  /** The success response's body. */
  readonly example: unknown;
  /** The request body, for an operation that takes one. */
  readonly requestExample?: unknown;
}
