import { AppError } from "../../errors.ts";
import { SCOPES, type Scope } from "../../interfaces.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";
import { splitList } from "../../lib/split-list.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { errorCode, intoNewFile } from "../new-file.ts";
import type { CommandResult } from "../output.ts";
import { parseDuration, parseTimeOption } from "../time-option.ts";
import { requireOption, usageError } from "../usage.ts";
import { resolveWorkspace } from "../workspace.ts";
import { keysPath, mintedApiKeySchema } from "./key-api.ts";

const COMMAND = "keys create";
const REDACTED = "[redacted]";

export interface CreateOptions extends GlobalOptions {
  readonly scopes?: string;
  readonly name?: string;
  readonly expiresAt?: string;
  readonly expiresIn?: string;
  readonly idempotencyKey?: string;
}

/** A workspace key's scopes: those of a workspace (an operator key is made on the host only). */
function parseScopes(csv: string): Scope[] {
  const names = splitList(csv);
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw usageError(
      COMMAND,
      `--scopes takes a comma-separated list of: ${SCOPES.join(", ")}${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}.`,
    );
  }
  return [...new Set(names)] as Scope[];
}

/** `--expires-at <time>` or `--expires-in <duration>`, as the API's `expires_at`. */
function expiry(options: CreateOptions, now = new Date()): string | undefined {
  if (options.expiresAt !== undefined && options.expiresIn !== undefined) {
    throw usageError(COMMAND, "Give --expires-at or --expires-in, not both.");
  }
  if (options.expiresIn !== undefined) {
    const ms = parseDuration(options.expiresIn);
    if (ms === null) {
      throw usageError(
        COMMAND,
        `--expires-in takes a duration such as 90d, 12h or 2w, not ${JSON.stringify(options.expiresIn)}.`,
      );
    }
    return new Date(now.getTime() + ms).toISOString();
  }
  if (options.expiresAt === undefined) return undefined;
  // An ISO time; a duration here would mean "ago", which no expiry wants.
  if (parseDuration(options.expiresAt) !== null) {
    throw usageError(
      COMMAND,
      "--expires-at takes a time (2027-01-31T00:00:00Z); for a duration use --expires-in.",
    );
  }
  return parseTimeOption(options.expiresAt, "--expires-at", COMMAND, now);
}

/**
 * Mints a workspace's API key. As `svc admin keys create` and `svc webhooks create` do with
 * what they issue, the token goes to a new file (mode 0600) created before the request is
 * sent, so a bad `--output` mints nothing; it is never printed, not even with `--raw`, and a
 * dry run sends nothing and so has no token to show. The file holds the token and a newline,
 * as `svc admin keys create` writes it.
 */
export async function createKey(options: CreateOptions, io: CliIo): Promise<CommandResult> {
  const workspace = resolveWorkspace(options.workspace, io.env);
  const scopes = parseScopes(
    requireOption(options.scopes, COMMAND, `--scopes <csv> is required: ${SCOPES.join(", ")}.`),
  );
  const keyFile = requireOption(
    options.output,
    COMMAND,
    "--output <file> is required: the new file the API key is written to (it is shown only once).",
  );
  const expiresAt = expiry(options);
  const body = {
    scopes,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
  };
  const client = await openClient(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: keysPath(workspace, COMMAND),
    body,
    headers: { "Idempotency-Key": idempotencyKey(options.idempotencyKey, COMMAND) },
  };
  if (options.dryRun === true) {
    await ExclusiveFile.check(keyFile);
    return dryRunResult(client.prepare(request), [`The API key would be saved to ${keyFile}.`]);
  }
  const { key, text } = await intoNewFile(
    keyFile,
    async () => {
      const response = await client.send(request);
      return { key: parseBody(mintedApiKeySchema, response), text: response.text };
    },
    (minted) => `${minted.key.token}\n`,
    (minted, cause) =>
      new AppError(
        "secret_not_saved",
        `API key ${minted.key.id} was minted, but it could not be saved to ${keyFile} (${errorCode(cause)}), and it cannot be shown again. Revoke it (svc keys revoke ${minted.key.id} --workspace ${workspace}) and mint another.`,
        { param: "output", cause },
      ),
  );
  const { token, ...shown } = key;
  return {
    data: { ...shown, key_file: keyFile },
    raw: text.split(token).join(REDACTED),
    notes: [
      `API key ${key.id} saved to ${keyFile} (mode 0600); it is shown only this once, so keep the file.`,
    ],
  };
}
