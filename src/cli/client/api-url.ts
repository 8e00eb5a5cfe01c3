import { AppError } from "../../errors.ts";

export const DEFAULT_API_URL = "http://127.0.0.1:8787";

/**
 * The API's base URL: SERVICE_API_URL, else `saved` (the API the saved credentials in use
 * were issued by), else http://127.0.0.1:8787. A path prefix is kept.
 */
export function resolveApiUrl(env: NodeJS.ProcessEnv, saved?: string): URL {
  const given = (env.SERVICE_API_URL ?? "").trim();
  return parseApiUrl(given !== "" ? given : (saved ?? DEFAULT_API_URL));
}

/**
 * An http:// or https:// base URL, with a trailing slash so relative paths append to it.
 * `what`: where the value came from, for the message.
 */
export function parseApiUrl(configured: string, what = "SERVICE_API_URL"): URL {
  let url: URL;
  try {
    url = new URL(configured);
  } catch (error) {
    throw invalid(configured, what, error);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(configured, what);
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  url.search = "";
  url.hash = "";
  return url;
}

function invalid(configured: string, what: string, cause?: unknown): AppError {
  return new AppError(
    "invalid_config",
    `${what} must be an http:// or https:// URL such as ${DEFAULT_API_URL}; it is ${JSON.stringify(configured)}.`,
    { cause },
  );
}
