import { useRef } from 'preact/hooks';
import type { Problem } from '../policy-check';

/*
 * The policy's JSON in a plain textarea (keyboard and screen readers work as everywhere),
 * with a gutter of line numbers that marks the lines with a problem, and the problems listed
 * below it, each a button that puts the caret on its line.
 */

export function PolicyText({
  text,
  problems,
  onText,
}: {
  text: string;
  problems: readonly Problem[];
  onText: (text: string) => void;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLPreElement>(null);
  const bad = new Set(problems.map((problem) => problem.line));
  const lines = text.split('\n').length;
  const toLine = (line: number): void => {
    const element = area.current;
    if (element === null) return;
    let offset = 0;
    for (let current = 1; current < line; current += 1) offset = text.indexOf('\n', offset) + 1;
    element.focus();
    element.setSelectionRange(offset, offset);
  };
  return (
    <>
      <div class="editor">
        <pre class="gutter" aria-hidden="true" ref={gutter}>
          {Array.from({ length: lines }, (_, index) => (
            <span key={index} class={bad.has(index + 1) ? 'bad' : undefined}>
              {index + 1}
              {'\n'}
            </span>
          ))}
        </pre>
        <textarea
          id="policy-json"
          ref={area}
          spellcheck={false}
          autocapitalize="off"
          rows={Math.min(Math.max(lines, 12), 30)}
          aria-label="Policy JSON"
          aria-invalid={problems.length > 0 ? 'true' : 'false'}
          aria-describedby="policy-problems"
          value={text}
          onInput={(event) => {
            onText(event.currentTarget.value);
          }}
          onScroll={(event) => {
            if (gutter.current !== null) gutter.current.scrollTop = event.currentTarget.scrollTop;
          }}
        />
      </div>
      <div id="policy-problems" aria-live="polite">
        {problems.length === 0 ? (
          <p class="ok">No problem found.</p>
        ) : (
          <ol class="problems" data-testid="problems">
            {problems.map((problem, index) => (
              <li key={index}>
                {problem.line === null ? (
                  problem.message
                ) : (
                  <button
                    type="button"
                    class="link"
                    onClick={() => {
                      if (problem.line !== null) toLine(problem.line);
                    }}
                  >
                    Line {problem.line}: {problem.message}
                  </button>
                )}
              </li>
            ))}
          </ol>
        )}
      </div>
    </>
  );
}
