import type { FastifyError } from 'fastify';
import { formatPath, SpendgateError } from '../core/index.js';

/**
 * A request that fails its zod schema becomes the contract's 400: `parameter_missing` when the
 * field is absent, `parameter_invalid` otherwise, with `param` the field's path
 * (`metadata.costCenter`, `limit`). The first issue is reported, as a client fixes one at a time.
 */
export function validationError(
  error: FastifyError,
  request: { body: unknown; query: unknown; params: unknown; headers: unknown },
): SpendgateError {
  const issue = error.validation?.[0];
  const path = (issue?.instancePath ?? '')
    .split('/')
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const part = error.validationContext ?? 'body';
  const source =
    part === 'querystring'
      ? request.query
      : part === 'params'
        ? request.params
        : part === 'headers'
          ? request.headers
          : request.body;
  let node: unknown = source;
  for (const key of path)
    node =
      typeof node === 'object' && node !== null
        ? (node as Record<string | number, unknown>)[key]
        : undefined;
  const param = path.length === 0 ? undefined : formatPath(path);
  const message = issue?.message ?? 'is invalid';
  if (param !== undefined && node === undefined) {
    return new SpendgateError('parameter_missing', `${param} is required.`, param);
  }
  return new SpendgateError(
    'parameter_invalid',
    param === undefined ? `The ${part} is invalid: ${message}` : `${param}: ${message}`,
    param,
  );
}
