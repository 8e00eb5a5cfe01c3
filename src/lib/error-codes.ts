/**
 * The `code`s along an error's `cause` chain, outermost first: network and file errors wrap
 * the system's errno code (ECONNRESET, EEXIST…) a level or two down.
 */
export function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let current: unknown = error; typeof current === "object" && current !== null;) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === "string") codes.push(code);
    current = cause;
  }
  return codes;
}
