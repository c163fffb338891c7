/**
 * `text` as a whole number from `min` to `max`, or an error naming `name` (an environment
 * setting or a flag): a typo stops the run before it starts rather than running a bench of
 * another size than the one asked for.
 */
export function boundedInteger(text: string, min: number, max: number, name: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

/** A bench's whole-number setting from the environment: `fallback` when unset. */
export function integerSetting(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name];
  return text === undefined ? fallback : boundedInteger(text, min, max, name);
}
