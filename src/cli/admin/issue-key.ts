import { hashToken, newApiToken, newId } from "../../crypto/tokens.ts";
import type { NewApiKey, Scope } from "../../interfaces.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";

/**
 * Issues an API key into a new file: the token is written (mode 0600, flushed) before the
 * key is recorded, and the file is removed if recording fails. So the file never lacks a key
 * that works, and a key that works is never without its file.
 * `record` returns false when it chose not to record (the file is removed then too).
 */
export async function issueKeyToFile(
  output: string,
  workspaceId: string,
  scopes: readonly Scope[],
  record: (key: NewApiKey) => Promise<boolean>,
): Promise<{ keyId: string; recorded: boolean }> {
  const token = newApiToken();
  const key: NewApiKey = { id: newId("key"), workspaceId, tokenHash: hashToken(token), scopes };
  const file = await ExclusiveFile.create(output);
  let recorded = false;
  try {
    await file.write(`${token}\n`);
    recorded = await record(key);
  } finally {
    if (!recorded) await file.discard();
  }
  return { keyId: key.id, recorded };
}
