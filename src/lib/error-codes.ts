/**
 * An error as a log line should carry it: its message and its code (the outermost along the
 * `cause` chain), and nothing else. Some libraries hang large objects on their errors (pg: the
 * whole client, ~8 KB of it) that pino's serialiser would write out in full.
 */
export function errorSummary(error: unknown): { message: string; code: string | null } {
  const message = error instanceof Error ? error.message : String(error);
  return { message, code: errorCodes(error)[0] ?? null };
}

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
