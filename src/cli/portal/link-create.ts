import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { parseDuration } from "../time-option.ts";
import { requireOption, usageError } from "../usage.ts";
import { resolveWorkspace } from "../workspace.ts";
import { MAX_PORTAL_LINK_SECONDS, portalLinkSchema, portalLinksPath } from "./portal-api.ts";

const COMMAND = "portal-link create";

export interface LinkOptions extends GlobalOptions {
  readonly role?: string;
  readonly expiresIn?: string;
}

/** `--expires-in 10m` as the API's `expires_in`: whole seconds, at most the contract's hour. */
function expiresIn(value: string): number {
  const ms = parseDuration(value);
  if (ms === null) {
    throw usageError(
      COMMAND,
      `--expires-in takes a duration such as 90s, 10m or 1h, not ${JSON.stringify(value)}.`,
    );
  }
  if (ms > MAX_PORTAL_LINK_SECONDS * 1000) {
    throw usageError(
      COMMAND,
      `--expires-in may be at most 1h: a link is meant to be opened at once.`,
    );
  }
  return ms / 1000;
}

/**
 * A one-time link to the workspace's customer portal. The URL is a bearer credential until it
 * is opened or expires, so it goes to stdout alone (for the program that hands it to the
 * customer's browser): never to a file, a note or a log; `--json` puts it in the envelope.
 */
export async function createPortalLink(options: LinkOptions, io: CliIo): Promise<CommandResult> {
  const workspace = resolveWorkspace(options.workspace, io.env);
  const role = requireOption(options.role, COMMAND, "--role viewer|member is required.");
  const body = {
    role,
    ...(options.expiresIn === undefined ? {} : { expires_in: expiresIn(options.expiresIn) }),
  };
  const client = await openClient(options, io);
  const request: ApiRequest = { method: "POST", path: portalLinksPath(workspace, COMMAND), body };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  const link = parseBody(portalLinkSchema, response);
  return {
    data: link,
    human: link.url,
    raw: response.text,
    notes: [
      `The link opens the portal once, until ${link.expires_at}; whoever has it gets in, so hand it to the customer's browser only.`,
    ],
  };
}
