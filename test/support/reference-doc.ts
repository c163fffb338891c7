import { readFileSync } from 'node:fs';

/**
 * docs/reference.md, the project's own statement of its error codes and event types, read as a
 * client would read it. Tests hold the catalogue, the event list and the OpenAPI document to it,
 * so none of them can change without the page that clients read.
 */
export interface DocumentedError {
  readonly status: number;
  readonly type: string;
  readonly message: string;
}

function referenceText(): string {
  return readFileSync(new URL('../../docs/reference.md', import.meta.url), 'utf8');
}

function section(text: string, heading: string): string {
  const start = text.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`docs/reference.md has no "## ${heading}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The error table: code, status, type and default message, in the page's order. */
export function documentedErrors(): Map<string, DocumentedError> {
  const table = new Map<string, DocumentedError>();
  for (const line of section(referenceText(), 'Errors').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const code = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (code === undefined) continue;
    table.set(code, { status: Number(cells[2]), type: cells[3] ?? '', message: cells[4] ?? '' });
  }
  return table;
}

/** The event types, in the page's order. */
export function documentedEventTypes(): string[] {
  return [...section(referenceText(), 'Events').matchAll(/^- `([a-z]+\.[a-z]+)`$/gm)].map(
    (match) => match[1] as string,
  );
}
