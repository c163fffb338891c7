import type { z } from 'zod';
import { SpendgateError } from '../../core/index.js';

/**
 * Reads a processor's message (or a part of it) as `shape`, or refuses it as malformed:
 * `parameter_invalid`, naming the first field at fault, as `param` places it in the message
 * (Stripe's objects sit under `data.object`). Each adapter says what it read (`what`).
 */
export function readShape<T>(
  shape: z.ZodType<T>,
  value: unknown,
  what: string,
  param: (at: string) => string | undefined = (at) => (at === '' ? undefined : at),
): T {
  const parsed = shape.safeParse(value);
  if (parsed.success) return parsed.data;
  const at = parsed.error.issues[0]?.path.join('.') ?? '';
  throw new SpendgateError(
    'parameter_invalid',
    `${what} is malformed${at === '' ? '' : ` at ${at}`}.`,
    param(at),
  );
}
