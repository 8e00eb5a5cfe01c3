import { AppError } from "../../errors.ts";
import { ApiError } from "../client/api-error.ts";
import { resolveApiUrl } from "../client/api-url.ts";
import { revokeSession } from "../client/auth-api.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import {
  credentialsPath,
  readSavedCredentials,
  removeSavedCredentials,
  type SavedCredentials,
} from "./credentials-file.ts";

/**
 * Revokes a saved session on the server. A session the server no longer knows (expired,
 * already revoked: 401) is as good as revoked. Any other failure is returned, for the caller
 * to report once the local credentials are gone.
 */
async function revokeOnServer(saved: SavedCredentials, io: CliIo): Promise<AppError | null> {
  try {
    await revokeSession(resolveApiUrl(io.env, saved.api_url), saved.token);
    return null;
  } catch (error) {
    if (error instanceof ApiError && error.httpStatus === 401) return null;
    if (error instanceof AppError) return error;
    throw error;
  }
}

/**
 * Signs out: the session is revoked on the server, then the saved credentials are removed,
 * whatever the server said: a person who signs out wants nothing left on this machine. If the
 * server could not revoke the session, the command still fails (after removing the file), so
 * that the person or script learns that the session stays valid until it expires.
 */
export async function logout(io: CliIo): Promise<CommandResult> {
  const path = credentialsPath(io.env);
  const found = await readSavedCredentials(io.env).catch((error: unknown) => {
    // A damaged file is removed all the same: signing out must always be possible.
    if (error instanceof AppError && error.code === "invalid_credentials_file") return null;
    throw error;
  });
  const failure = found?.saved.kind === "session" ? await revokeOnServer(found.saved, io) : null;
  const removed = await removeSavedCredentials(io.env);
  if (failure !== null) {
    throw new AppError(
      failure.code,
      `The saved credentials were removed, but the session could not be revoked on the server (${failure.message}); it stays valid until ${found?.saved.expires_at ?? "it expires"}.`,
      { cause: failure },
    );
  }
  const notes: string[] = [];
  if (!removed) notes.push(`Not signed in: there were no saved credentials (${path}).`);
  else if (found?.saved.kind === "api_key") {
    notes.push(
      `Removed the saved API key from ${path}. The key itself stays valid: an operator revokes it with \`svc admin keys revoke\`.`,
    );
  } else {
    notes.push(`Signed out: the session is revoked and ${path} is removed.`);
  }
  if ((io.env.SERVICE_API_KEY?.trim() ?? "") !== "") {
    notes.push("SERVICE_API_KEY is still set: svc goes on using it until you unset it.");
  }
  return {
    data: { signed_out: removed, revoked: found?.saved.kind === "session", credentials_file: path },
    human: null,
    notes,
  };
}
