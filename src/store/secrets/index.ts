/* Secrets at rest: envelope encryption under per-vault data keys, the master key, API key hashes. */

export { API_KEY_HASH_HEX_LENGTH, hashApiKey } from './api-key-hash.js';
export {
  DecryptionError,
  decryptText,
  encryptText,
  ENVELOPE_VERSION,
  generateDataKey,
  IV_BYTES,
  KEY_BYTES,
  TAG_BYTES,
  unwrapDataKey,
  vaultKeyAad,
  wrapDataKey,
} from './envelope.js';
export { DECRYPT_ONLY_KEYS_MAX, Keyring, type MasterKeys } from './keyring.js';
export {
  beginMasterKeyFileRotation,
  finishMasterKeyFileRotation,
  loadMasterKey,
  loadMasterKeys,
  MASTER_KEY_DECRYPT_ONLY_ENV,
  MASTER_KEY_ENV,
  MASTER_KEY_FILE,
  PREVIOUS_MASTER_KEY_FILE,
  type MasterKeyOptions,
} from './master-key.js';
