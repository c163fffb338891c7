import { SpendgateError, type Metadata } from '../core/index.js';

/** Metadata keys an object may have (contract section 1). */
export const METADATA_KEYS_MAX = 50;

/** A metadata update: a key set to a string is set, a key set to null is removed. */
export type MetadataChanges = Readonly<Record<string, string | null>>;

/**
 * `current` with `changes` applied (contract section 1: in an update, a key set to null is
 * removed), refused with `parameter_invalid` at `metadata` when the result has more than 50
 * keys. One rule for every object that carries metadata, so vaults and cards never differ.
 */
export function applyMetadataChanges(
  current: Metadata,
  changes: MetadataChanges | undefined,
  kind: string,
): Metadata {
  const merged = Object.entries({ ...current, ...changes });
  const metadata = Object.fromEntries(
    merged.filter((entry): entry is [string, string] => entry[1] !== null),
  );
  if (Object.keys(metadata).length > METADATA_KEYS_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `A ${kind} has at most ${METADATA_KEYS_MAX} metadata keys.`,
      'metadata',
    );
  }
  return metadata;
}
