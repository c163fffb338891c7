import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** A function longer than this many lines must say why just above itself. */
export const FUNCTION_LINES_MAX = 70;
/** The words a comment just above a long function must hold (any case). */
export const EXPLANATION = /long because/i;
/** Files read, at most: the walk stops loudly rather than run away on a wrong root. */
export const SOURCE_FILES_MAX = 10_000;

export interface LongFunction {
  /** Relative to the working directory, with the 1-based line of the function's first token. */
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
  /** Whether a comment containing "long because" sits immediately above it. */
  readonly explained: boolean;
}

function sourceFiles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, found);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(path);
    if (found.length > SOURCE_FILES_MAX) {
      throw new Error(`more than ${SOURCE_FILES_MAX} source files below ${dir}`);
    }
  }
  return found;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line;
}

/**
 * The node a comment about the function sits above: the function itself, or what holds it and
 * starts on its line (`export const f = () => {`, `name: async (params) => {`).
 */
function headOf(node: FunctionNode, source: ts.SourceFile): ts.Node {
  const line = lineOf(source, node.getStart(source));
  let head: ts.Node = node;
  while (
    !ts.isSourceFile(head.parent) &&
    !ts.isBlock(head.parent) &&
    lineOf(source, head.parent.getStart(source)) === line
  ) {
    head = head.parent;
  }
  return head;
}

function nameOf(node: FunctionNode, source: ts.SourceFile): string {
  const text = (name: ts.Node) => name.getText(source);
  if (ts.isConstructorDeclaration(node)) return `${classNameOf(node)}.constructor`;
  if (node.name !== undefined) {
    const own = text(node.name);
    return ts.isClassLike(node.parent) ? `${classNameOf(node)}.${own}` : own;
  }
  const holder = node.parent;
  if (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder)) return text(holder.name);
  if (ts.isPropertyDeclaration(holder)) return `${classNameOf(holder)}.${text(holder.name)}`;
  if (ts.isCallExpression(holder)) return `${text(holder.expression).slice(0, 40)}(<callback>)`;
  return '<anonymous>';
}

function classNameOf(member: ts.Node): string {
  const owner = member.parent;
  return ts.isClassLike(owner) && owner.name !== undefined ? owner.name.text : '<class>';
}

/**
 * Whether the comments right above `head` (touching it and each other, no blank line between)
 * hold the explanation.
 */
function isExplained(head: ts.Node, source: ts.SourceFile): boolean {
  const text = source.getFullText();
  const comments = ts.getLeadingCommentRanges(text, head.getFullStart()) ?? [];
  let below = lineOf(source, head.getStart(source));
  for (let index = comments.length - 1; index >= 0; index -= 1) {
    const comment = comments[index] as ts.CommentRange;
    if (lineOf(source, comment.end) < below - 1) break;
    if (EXPLANATION.test(text.slice(comment.pos, comment.end))) return true;
    below = lineOf(source, comment.pos);
  }
  return false;
}

/** Every function, method, accessor and arrow function in `file` longer than the bound. */
export function longFunctionsIn(file: string, root: string): LongFunction[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body !== undefined) {
      const first = lineOf(source, node.getStart(source));
      const lines = lineOf(source, node.getEnd()) - first + 1;
      if (lines > FUNCTION_LINES_MAX) {
        const head = headOf(node, source);
        found.push({
          file: relative(root, file),
          line: first + 1,
          name: nameOf(node, source),
          lines,
          explained: isExplained(head, source),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Lists every function over FUNCTION_LINES_MAX lines below the folders given (default: src),
 * as `file:line  N lines  explained|UNEXPLAINED  name`, and exits 1 when one of them has no
 * comment saying why it must be long ("long because ...") immediately above it. Not yet part of
 * `npm run lint`: it joins once every long function in src is split or explained.
 *
 *   npx tsx scripts/long-functions.ts [folder ...]
 *
 * Lengths count every line from the function's first token to its closing brace, nested
 * functions included, so an outer function answers for what it holds.
 */
export function main(folders: readonly string[]): number {
  const root = process.cwd();
  const roots = folders.length === 0 ? ['src'] : folders;
  const found = roots
    .flatMap((folder) => sourceFiles(resolve(root, folder)))
    .sort()
    .flatMap((file) => longFunctionsIn(file, root));
  for (const entry of found) {
    const mark = (entry.explained ? 'explained' : 'UNEXPLAINED').padEnd(11);
    console.log(
      `${`${entry.file}:${entry.line}`.padEnd(48)} ${String(entry.lines).padStart(4)} lines  ${mark}  ${entry.name}`,
    );
  }
  const unexplained = found.filter((entry) => !entry.explained).length;
  console.log(
    `${found.length} functions over ${FUNCTION_LINES_MAX} lines in ${roots.join(', ')}; ` +
      `${unexplained} without a "long because" comment.`,
  );
  return unexplained === 0 ? 0 : 1;
}

// Run as a script, not when imported (a test may hold a fixture to `longFunctionsIn`).
const script = process.argv[1];
if (script !== undefined && import.meta.url === pathToFileURL(resolve(script)).href) {
  process.exitCode = main(process.argv.slice(2));
}
