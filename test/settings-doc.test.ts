import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../src/config/env.js';
import { SETTINGS_DOC, settingsDocument } from '../src/config/settings-doc.js';

/**
 * docs/settings.md is written from src/config/settings-doc.ts (`npm run settings-doc`): every
 * setting the service reads has its row, every row names settings the service reads, and the
 * page is what the rows make.
 */
// Read outside the config schema: the master keys by the store's key loader, the connection
// timeout by the pg driver itself, the exporter's headers by the OpenTelemetry exporter.
const READ_ELSEWHERE = [
  'SPENDGATE_MASTER_KEY',
  'SPENDGATE_MASTER_KEY_DECRYPT_ONLY',
  'PGCONNECT_TIMEOUT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
];

describe('docs/settings.md', () => {
  it('has one row for every setting the service reads, and none for another', () => {
    const documented = SETTINGS_DOC.flatMap((row) => row.names);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...SETTING_NAMES, ...READ_ELSEWHERE].sort());
  });

  it('is what src/config/settings-doc.ts makes (npm run settings-doc)', async () => {
    const path = fileURLToPath(new URL('../docs/settings.md', import.meta.url));
    const options = (await resolveConfig(path)) ?? {};
    const expected = await format(settingsDocument(), { ...options, filepath: path });
    expect(readFileSync(path, 'utf8')).toBe(expected);
  });
});
