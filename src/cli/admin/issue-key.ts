import { hashToken, newApiToken, newId, newOperatorToken } from "../../crypto/tokens.ts";
import type { KeyScope, NewApiKey } from "../../interfaces.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";

/**
 * Issues an API key into a new file: the token is written (mode 0600, flushed) before the
 * key is recorded, and the file is removed if recording fails. So the file never lacks a key
 * that works, and a key that works is never without its file.
 * `record` returns false when it chose not to record (the file is removed then too).
 * A null `workspaceId` issues an operator key (`svc_op_…`, decision 42).
 */
export async function issueKeyToFile(
  output: string,
  workspaceId: string | null,
  scopes: readonly KeyScope[],
  record: (key: NewApiKey) => Promise<boolean>,
): Promise<{ keyId: string; recorded: boolean }> {
  const token = workspaceId === null ? newOperatorToken() : newApiToken();
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
