/**
 * Characters a terminal acts on, or that hide, reorder or break a line of text: C0 controls
 * (line breaks included), DEL, C1 controls, the bidirectional controls (U+061C, U+200E–U+200F,
 * U+202A–U+202E, U+2066–U+2069), zero-width characters and the word joiner (U+200B–U+200D,
 * U+2060, U+FEFF), the line and paragraph separators, and lone surrogates.
 */
const unprintable =
  // eslint-disable-next-line no-control-regex -- control characters are what it matches
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with every unprintable character written as `\uXXXX`, so that what the server stored
 * (a URL, a name, a message) cannot move the cursor, retitle the window, clear the screen or
 * spoof a table row when `svc` prints it for a person (decision 28). With `lineBreaks`, a
 * text of several lines (a message, a command's own human output) keeps its `\n`.
 */
export function printable(text: string, options: { lineBreaks?: boolean } = {}): string {
  return text.replace(unprintable, (char) =>
    char === "\n" && options.lineBreaks === true
      ? char
      : `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}
