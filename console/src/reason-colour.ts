/*
 * A decline reason's colour, from its name alone: the same reason has the same colour on every
 * visit and whatever the other reasons are (a colour by rank changed as the ranks did).
 */

/** The colour of the declines summed as "other". */
export const OTHER_COLOUR = '#64748b';

/** FNV-1a of the name, as a hue; saturation and lightness fixed, readable on white. */
export function reasonColour(reason: string): string {
  if (reason === 'other') return OTHER_COLOUR;
  let hash = 0x811c9dc5;
  for (let index = 0; index < reason.length; index += 1) {
    hash ^= reason.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `hsl(${String(hash % 360)}, 65%, 40%)`;
}
