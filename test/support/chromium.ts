import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';
const INSTALL = 'apt-get install -y chromium';

/**
 * Chromium is a system package, not an npm one (playwright-core brings no browser): installed
 * here when the machine allows it, as .ci/run does, else the test says what to run.
 */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const root = process.getuid?.() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (as root: ${INSTALL}).`);
  }
  execFileSync('apt-get', ['update'], { stdio: 'ignore', timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', 'chromium'], {
    stdio: 'ignore',
    timeout: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!existsSync(CHROMIUM)) throw new Error(`${INSTALL} did not install ${CHROMIUM}.`);
}
