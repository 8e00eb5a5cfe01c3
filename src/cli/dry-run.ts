import type { PreparedRequest } from "./client/http.ts";
import type { CommandResult } from "./output.ts";
import { isRecord } from "./render/values.ts";

const REDACTED = "[redacted]";

/** Credentials never appear in a preview, nor does any member that holds a secret. */
function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      name.toLowerCase() === "authorization" ? value.replace(/\s.*$/, ` ${REDACTED}`) : value,
    ]),
  );
}

function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [
      name,
      /secret|password|token/i.test(name) ? REDACTED : redactSecrets(member),
    ]),
  );
}

/**
 * `--dry-run`: the request that would be sent, as an HTTP message for a person (the body as
 * its exact bytes: with an idempotency key, whitespace matters) and as data for `--json`.
 */
export function dryRunResult(
  request: PreparedRequest,
  notes: readonly string[] = [],
): CommandResult {
  const headers = redactHeaders(request.headers);
  const body = request.body === null ? null : redactSecrets(JSON.parse(request.body));
  const human = [
    `${request.method} ${request.url.href}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ...(body === null ? [] : ["", JSON.stringify(body)]),
  ].join("\n");
  return {
    data: {
      dry_run: true,
      request: { method: request.method, url: request.url.href, headers, body },
    },
    human,
    notes: [
      "Dry run: nothing was sent. Not checked: permissions, the destination's address, delivery.",
      ...notes,
    ],
  };
}
