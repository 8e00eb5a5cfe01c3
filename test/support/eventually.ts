/**
 * Polls `check` until it returns a value that is not undefined. For state that only an API
 * shows (there is no event to await); gives up after `timeoutMs` with the last value seen.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? "a condition"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
