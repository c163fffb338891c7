import { writeFileSync } from 'node:fs';
import { settingsDocument } from '../src/config/settings-doc.js';

// Writes docs/settings.md from src/config/settings-doc.ts (npm run settings-doc).
writeFileSync(new URL('../docs/settings.md', import.meta.url), settingsDocument());
