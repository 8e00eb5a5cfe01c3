import type { TestContext } from "node:test";

/** A user that is not the one running the tests: `nobody` on most systems. */
export const otherUid = 65534;

/**
 * Whether files can be given to `otherUid`: only root may chown a file away. A test that needs
 * such a file calls this first and, when it returns false, has been skipped with the reason.
 */
export function canGiveFilesAway(t: TestContext): boolean {
  if (process.geteuid?.() === 0) return true;
  t.skip("only root can give a file to another user");
  return false;
}
