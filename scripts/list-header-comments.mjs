#!/usr/bin/env node
// Lists, for each TypeScript file under the folders given (default: src), the first JSDoc
// comment (`/** ... */`) and the declaration TypeScript attaches it to, so that a module
// header sitting on the wrong symbol (an editor then shows it on a constant or a type) can be
// found and moved. A review aid, not a check: whether a comment describes its declaration or
// the module is a judgement, so it prints and never fails. Not wired into CI.
//
//   node scripts/list-header-comments.mjs [--all] [folder ...]
//
// By default only the files where the first JSDoc sits on the first declaration after the
// imports are printed (where a misplaced module header hides); --all prints every file.
//
// The convention it serves: a comment on the whole module is a plain block comment (`/* ... */`,
// never `/**`) right after the imports, so no tool attaches it to a symbol; a comment on the
// module's main export is that export's JSDoc.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import ts from 'typescript';

/** Folders another engineer's work owns; skipped unless named. */
const SKIPPED = ['src/solana', 'src/local-chain'];
const FILES_MAX = 10_000;

const args = process.argv.slice(2);
const all = args.includes('--all');
const roots = args.filter((arg) => arg !== '--all');
if (roots.length === 0) roots.push('src');

function filesUnder(dir, found) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (SKIPPED.includes(path) && !roots.includes(path)) continue;
    if (statSync(path).isDirectory()) filesUnder(path, found);
    else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) found.push(path);
    if (found.length > FILES_MAX) throw new Error(`more than ${FILES_MAX} files`);
  }
  return found;
}

function declarationName(statement) {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.map((d) => d.name.getText()).join(', ');
  }
  return statement.name?.getText() ?? ts.SyntaxKind[statement.kind];
}

function firstLine(comment) {
  const line = comment
    .replace(/^\/\*\*\s*/, '')
    .split('\n')
    .map((part) => part.replace(/^\s*\*\s?/, '').trim())
    .find((part) => part.length > 0);
  return (line ?? '').slice(0, 100);
}

for (const file of roots.flatMap((root) =>
  statSync(root).isDirectory() ? filesUnder(root, []) : [root],
)) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const statements = source.statements;
  const firstDeclaration = statements.findIndex(
    (statement) => !ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement),
  );
  for (const [index, statement] of statements.entries()) {
    // `jsDoc` is the parser's own field (not in its public types): the JSDoc comments before a
    // statement, which is what an editor shows for the declaration.
    const docs = statement.jsDoc ?? [];
    const doc = docs[0];
    if (doc === undefined) continue;
    if (all || index === firstDeclaration) {
      const kind = ts.SyntaxKind[statement.kind].replace(/Declaration|Statement/, '');
      const lineCount = doc.getText().split('\n').length;
      process.stdout.write(
        `${file}\t${kind} ${declarationName(statement)}\t${lineCount} lines\t${firstLine(doc.getText())}\n`,
      );
    }
    break;
  }
}
