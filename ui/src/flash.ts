/**
 * A confirmation for the next page shown (after a delete, the page it leads to says what was
 * deleted). In memory only: the dashboard writes nothing to web storage (decision 35).
 */
let pending: string | null = null;

export function flash(message: string): void {
  pending = message;
}

/** The confirmation left for this page, once. */
export function takeFlash(): string | null {
  const message = pending;
  pending = null;
  return message;
}
