/*
 * The console's one way to show a moment: the reader's local time, the UTC instant on hover
 * (and in `dateTime` for machines). Every timestamp of the API goes through here, so that no
 * page shows a raw ISO string beside a formatted one.
 */

const LOCAL = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** `2026-11-20 14:30:00 UTC`: what the hover says. */
export function utcText(iso: string): string {
  return `${iso.replace('T', ' ').slice(0, 19)} UTC`;
}

export function localText(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : LOCAL.format(ms);
}

export function Time({ at }: { at: string }) {
  return (
    <time dateTime={at} title={utcText(at)}>
      {localText(at)}
    </time>
  );
}
