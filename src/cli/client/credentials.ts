import { AppError } from "../../errors.ts";

/** What authenticates requests to the API, and where it came from (for messages). */
export interface Credentials {
  readonly token: string;
  readonly source: string;
}

/** One place credentials may come from; null when it has none. */
type CredentialSource = (env: NodeJS.ProcessEnv) => Promise<Credentials | null>;

const apiKeyVariable: CredentialSource = (env) => {
  const token = env.SERVICE_API_KEY?.trim() ?? "";
  return Promise.resolve(token === "" ? null : { token, source: "SERVICE_API_KEY" });
};

/**
 * The sources in order of precedence; the first that has credentials wins. The session saved
 * by `svc auth login` joins this list, after the explicit API key.
 */
const sources: readonly CredentialSource[] = [apiKeyVariable];

export async function resolveCredentials(env: NodeJS.ProcessEnv): Promise<Credentials> {
  for (const source of sources) {
    const credentials = await source(env);
    if (credentials !== null) return credentials;
  }
  throw new AppError("no_credentials");
}
