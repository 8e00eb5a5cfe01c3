/**
 * Characters a destination URL may not contain anywhere: the WHATWG parser silently drops
 * tabs and newlines and trims control characters and spaces, so a URL with them would be
 * stored as something other than what was sent; bidirectional controls make a URL read
 * differently from what it is; a lone surrogate is not text at all.
 */
const forbidden =
  /[\p{Control}\p{White_Space}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Surrogate}]/u;

export interface ForbiddenCharacter {
  /** As Unicode writes it, `U+001B`: the character itself is never echoed. */
  readonly codePoint: string;
  readonly kind: string;
  /** Counted in characters (code points) from 1. */
  readonly position: number;
}

/** The first forbidden character of `text`, or null when there is none. */
export function firstForbiddenCharacter(text: string): ForbiddenCharacter | null {
  const match = forbidden.exec(text);
  if (match === null) return null;
  const codePoint = match[0].codePointAt(0) ?? 0;
  return {
    codePoint: `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`,
    kind: kindOf(match[0]),
    // Array.from splits by code points, as people count characters.
    position: Array.from(text.slice(0, match.index)).length + 1,
  };
}

/** Control (Cc) is C0, DEL and C1: U+0000–U+001F and U+007F–U+009F. */
function kindOf(character: string): string {
  if (/\p{Control}/u.test(character)) return "a control character";
  if (/\p{White_Space}/u.test(character)) return "a whitespace character";
  if (/\p{Surrogate}/u.test(character)) return "an unpaired surrogate";
  return "a bidirectional control character";
}
