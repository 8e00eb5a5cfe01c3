/**
 * Text as the database keeps it, whatever it came from: PostgreSQL's text cannot hold NUL,
 * and a lone surrogate is not UTF-8; each becomes U+FFFD. For what receivers answer, by way
 * of the worker's sender or of `svc listen`.
 */
export function storableText(text: string): string {
  return text.toWellFormed().replaceAll("\u0000", "\ufffd");
}
