import { ERROR_CATALOGUE, type ErrorCode } from '../core/index.js';

/** The common error body of contract section 3. */
export interface ErrorBody {
  readonly error: {
    readonly type: string;
    readonly code: ErrorCode;
    readonly message: string;
    readonly param?: string;
    readonly requestId: string;
  };
}

export function errorBody(
  code: ErrorCode,
  requestId: string,
  message?: string,
  param?: string,
): ErrorBody {
  const entry = ERROR_CATALOGUE[code];
  return {
    error: {
      type: entry.type,
      code,
      message: message ?? entry.message,
      ...(param === undefined ? {} : { param }),
      requestId,
    },
  };
}
