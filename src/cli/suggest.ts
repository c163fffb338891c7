/*
 * "did you mean ...?" for a mistyped command or flag: the known word nearest by edit distance,
 * when it is near enough (at most a third of the word's letters, at least one) to be a typo
 * rather than another word. Words are short (a command line's arguments), and each is cut at
 * WORD_LENGTH_MAX so that the distance table has a limit.
 */

const WORD_LENGTH_MAX = 64;

/** Levenshtein distance (insertions, deletions, substitutions, adjacent swaps). */
export function editDistance(left: string, right: string): number {
  const a = left.slice(0, WORD_LENGTH_MAX);
  const b = right.slice(0, WORD_LENGTH_MAX);
  const width = b.length + 1;
  // One flat table, (a.length + 1) rows of `width`; the first row and column are the distances
  // from the empty word.
  const table = new Uint8Array((a.length + 1) * width);
  const at = (i: number, j: number): number => table[i * width + j] ?? 0;
  for (let j = 0; j <= b.length; j++) table[j] = j;
  for (let i = 1; i <= a.length; i++) {
    table[i * width] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      table[i * width + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known word nearest to `word`, or null when none is near enough to be its typo. */
export function nearest(word: string, known: readonly string[]): string | null {
  const distanceMax = Math.max(1, Math.floor(word.length / 3));
  let best: string | null = null;
  let bestDistance = distanceMax + 1;
  for (const candidate of known) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `unknown WHAT "word"`, with the nearest known word when there is one. */
export function unknownWord(what: string, word: string, known: readonly string[]): string {
  const shown = word.slice(0, WORD_LENGTH_MAX);
  const guess = nearest(word, known);
  return guess === null
    ? `spendgate: unknown ${what} "${shown}"; ${what}s: ${known.join(', ')}`
    : `spendgate: unknown ${what} "${shown}"; did you mean ${guess}?`;
}
