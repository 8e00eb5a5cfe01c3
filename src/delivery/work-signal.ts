/**
 * Wakes a sleeping loop: `wait(ms)` resolves after `ms`, or at once when `notify()` is called
 * (also when it was called since the last wait, so a notification is never lost).
 */
export class WorkSignal {
  #pending = false;
  #wake: (() => void) | null = null;

  notify(): void {
    this.#pending = true;
    this.#wake?.();
  }

  async wait(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, Math.max(0, ms));
    });
    clearTimeout(timer);
    this.#wake = null;
    this.#pending = false;
  }
}
