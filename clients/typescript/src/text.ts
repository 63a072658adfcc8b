/**
 * What text may hold (no NUL, no lone UTF-16 surrogate) and how long it is, as the host counts.
 *
 * @module
 */

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** The number of characters (code points) in `text`, as the host counts them. */
export function characters(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** Whether `text` has more than `limit` characters; constant time for short text. */
export function longerThan(text: string, limit: number): boolean {
  return text.length > limit && characters(text) > limit;
}

/** What makes `text` unusable (a NUL, a lone surrogate), or `undefined` when it is fine. */
export function textProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "holds a NUL character (U+0000)";
  const found = LONE_SURROGATE.exec(text);
  if (found === null) return undefined;
  const code = found[0].charCodeAt(0).toString(16).toUpperCase();
  return `holds a lone surrogate (U+${code}), which is not text`;
}

/** A value as the messages quote it: JSON, non-ASCII kept, a lone surrogate escaped. */
export function quoted(value: string): string {
  return JSON.stringify(value);
}
