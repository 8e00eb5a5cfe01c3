import { readFileSync } from "node:fs";

/** The package version, read once from package.json (two levels above dist/src). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  }
).version;

/** The `User-Agent` of every notification (CONTRACT.md "Notifications"). */
export const USER_AGENT = `svc-webhooks/${VERSION}`;
