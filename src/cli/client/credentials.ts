import { AppError } from "../../errors.ts";
import { readSavedCredentials, type SavedCredentials } from "../auth/credentials-file.ts";

/** What authenticates requests to the API, and where it came from. */
export interface Credentials {
  readonly token: string;
  /** For messages: `SERVICE_API_KEY`, or the path of the saved credentials. */
  readonly source: string;
  /** The saved credentials when they are the ones in use (their API URL, their workspaces). */
  readonly saved: SavedCredentials | null;
}

/** One place credentials may come from; null when it has none. */
type CredentialSource = (env: NodeJS.ProcessEnv) => Promise<Credentials | null>;

const apiKeyVariable: CredentialSource = (env) => {
  const token = env.SERVICE_API_KEY?.trim() ?? "";
  return Promise.resolve(token === "" ? null : { token, source: "SERVICE_API_KEY", saved: null });
};

const savedByLogin: CredentialSource = async (env) => {
  const found = await readSavedCredentials(env);
  return found === null
    ? null
    : { token: found.saved.token, source: found.path, saved: found.saved };
};

/**
 * The sources in order of precedence; the first that has credentials wins: an explicit API
 * key in the environment, then what `svc auth login` saved.
 */
const sources: readonly CredentialSource[] = [apiKeyVariable, savedByLogin];

export async function resolveCredentials(env: NodeJS.ProcessEnv): Promise<Credentials> {
  for (const source of sources) {
    const credentials = await source(env);
    if (credentials !== null) return credentials;
  }
  throw new AppError("no_credentials");
}
