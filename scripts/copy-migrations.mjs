#!/usr/bin/env node
// Part of `npm run build`: the migrations' SQL files go into dist/ beside the runner that
// reads them. The folder's old .sql files are removed first: a migration renamed or
// renumbered in src/ must not stay behind in dist/, where the runner would read both and
// refuse to start ("out of sequence"). Plain Node; run from the package's root, as npm runs it.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';

const FROM = 'src/store/migrations';
const TO = 'dist/store/migrations';

mkdirSync(TO, { recursive: true });
for (const file of readdirSync(TO)) if (file.endsWith('.sql')) rmSync(`${TO}/${file}`);
cpSync(FROM, TO, { recursive: true, filter: (path) => !path.endsWith('.ts') });
