import { AppError } from "../../errors.ts";

export const DEFAULT_API_URL = "http://127.0.0.1:8787";

/** The API's base URL: SERVICE_API_URL, default http://127.0.0.1:8787. A path prefix is kept. */
export function resolveApiUrl(env: NodeJS.ProcessEnv): URL {
  const given = (env.SERVICE_API_URL ?? "").trim();
  const configured = given === "" ? DEFAULT_API_URL : given;
  let url: URL;
  try {
    url = new URL(configured);
  } catch (error) {
    throw invalid(configured, error);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(configured);
  if (!url.pathname.endsWith("/")) url.pathname = `${url.pathname}/`;
  url.search = "";
  url.hash = "";
  return url;
}

function invalid(configured: string, cause?: unknown): AppError {
  return new AppError(
    "invalid_config",
    `SERVICE_API_URL must be an http:// or https:// URL such as ${DEFAULT_API_URL}; it is ${JSON.stringify(configured)}.`,
    { cause },
  );
}
