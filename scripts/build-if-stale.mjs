#!/usr/bin/env node
// `npm start`'s prestart: builds dist/ only when it is older than what it is built from, and
// says so on stderr; a start on a current build goes straight on, instead of spending the
// 15 to 40 s of a build each time. Plain Node, no dependencies: it runs before anything is built.
//
// What counts as a change: any file or folder under src/ and console/ (the console's sources,
// built by Vite into dist/console; a folder's time changes when a file in it is added, renamed
// or deleted, which a file's time alone would miss), tsconfig.json,
// tsconfig.build.json and package.json, newer than the last build. The last build's time is
// when it began, from dist/.build-stamp, written here after a build (so that a file saved
// during a build counts as a change), as long as dist/cli/main.js is still the one that build
// wrote; after any other build (`npm run build`, `prepare`), the time dist/cli/main.js was
// written. Run from the package's root, as npm runs scripts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import process from 'node:process';

const ROOT = process.cwd();
const STAMP = join(ROOT, 'dist', '.build-stamp');
const ENTRY = join(ROOT, 'dist', 'cli', 'main.js');
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];
const SOURCE_FOLDERS = ['src', 'console'];
// A source tree this large is not this package's: build rather than walk further.
const ENTRIES_MAX = 20_000;

const say = (message) => process.stderr.write(`spendgate: ${message}\n`);

function mtimeMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest input, as { path, mtimeMs }, or null when the walk passed ENTRIES_MAX. */
function newestInput() {
  let newest = { path: 'package.json', mtimeMs: 0 };
  const consider = (path) => {
    const time = mtimeMs(path);
    if (time > newest.mtimeMs) newest = { path, mtimeMs: time };
  };
  for (const file of INPUT_FILES) consider(join(ROOT, file));
  const folders = SOURCE_FOLDERS.map((folder) => join(ROOT, folder)).filter((path) =>
    existsSync(path),
  );
  let seen = 0;
  while (folders.length > 0) {
    const folder = folders.pop();
    consider(folder);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      seen += 1;
      if (seen > ENTRIES_MAX) return null;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(path);
      else consider(path);
    }
  }
  return newest;
}

function build(reason) {
  say(`${reason}: building dist/ (npm run build, 15 to 40 s)...`);
  const began = Date.now();
  // npm sets npm_execpath for the scripts it runs: the same npm builds, on any platform.
  const npm = process.env.npm_execpath;
  const result =
    npm === undefined
      ? spawnSync('npm', ['run', 'build'], {
          stdio: ['ignore', 2, 2],
          shell: process.platform === 'win32',
        })
      : spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    say('the build failed (above); dist/ is not started');
    process.exit(result.status ?? 1);
  }
  writeFileSync(STAMP, `${JSON.stringify({ beganMs: began, entryMtimeMs: mtimeMs(ENTRY) })}\n`);
  say(`built in ${((Date.now() - began) / 1000).toFixed(1)} s`);
}

if (!existsSync(join(ROOT, 'src'))) {
  // An installed package: dist/ is all there is.
  process.exit(0);
}
/** When the build that wrote dist/cli/main.js began, as well as known; 0 when there is none. */
function lastBuildMs() {
  const entryMs = mtimeMs(ENTRY);
  try {
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
    if (stamp.entryMtimeMs === entryMs && Number.isFinite(stamp.beganMs)) return stamp.beganMs;
  } catch {
    // No stamp, or not one of ours: the entry's own time.
  }
  return entryMs;
}

const builtMs = lastBuildMs();
if (builtMs === 0) {
  build('no build in dist/ yet');
} else {
  const newest = newestInput();
  if (newest === null) build(`more than ${ENTRIES_MAX} entries under src/ and console/`);
  else if (newest.mtimeMs > builtMs)
    build(`${relative(ROOT, newest.path)} changed since the last build`);
  else say('dist/ is current with src/ and console/: no build needed');
}
