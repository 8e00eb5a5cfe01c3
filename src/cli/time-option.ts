import { TIME_OPTION_HELP } from "./time-option-help.ts";
import { usageError } from "./usage.ts";

/**
 * `--since` and `--until`: an ISO 8601 time with a zone, as the API takes it
 * (`2026-11-25T09:00:00Z`, `2026-11-25T10:00:00.5+01:00`), or a duration back from now: a
 * whole number and a unit, `s`, `m`, `h`, `d` or `w` (`90s`, `30m`, `2h`, `7d`). Either is sent
 * to the API as an ISO 8601 time in UTC. A date without a time or a time without a zone is
 * refused: which day or zone it meant would be a guess.
 */

const UNIT_MS = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
} as const;

const duration = /^(\d{1,9})([smhdw])$/;
/**
 * What the API's `timeInput` (zod's `z.iso.datetime({ offset: true })`) accepts: RFC 3339 with
 * seconds and a zone, leap days only in leap years. zod's own pattern, copied so that a
 * command reading a time loads no zod (issue 33); test/cli/time-option.test.ts holds it to
 * zod's, and to what zod accepts.
 */
export const ISO_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

/**
 * A duration as these options write it (`90s`, `30m`, `2h`, `7d`, `1w`) in milliseconds; null
 * when `value` is not one, or is zero. Also for times ahead of now (`--expires-in`).
 */
export function parseDuration(value: string): number | null {
  const match = duration.exec(value.trim());
  if (match === null) return null;
  const [, amount = "", unit = "s"] = match;
  const ms = Number.parseInt(amount, 10) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return ms > 0 ? ms : null;
}

/** The time `value` names, as the API takes it; `flag` (`--since`) and `command` for the error. */
export function parseTimeOption(
  value: string,
  flag: string,
  command: string,
  now: Date = new Date(),
): string {
  const text = value.trim();
  const match = duration.exec(text);
  if (match !== null) {
    const [, amount = "", unit = "s"] = match;
    const count = Number.parseInt(amount, 10);
    const time = new Date(now.getTime() - count * UNIT_MS[unit as keyof typeof UNIT_MS]);
    if (count === 0 || Number.isNaN(time.getTime())) {
      throw usageError(
        command,
        `${flag} ${JSON.stringify(value)} is not a usable duration: give ${TIME_OPTION_HELP}.`,
      );
    }
    return time.toISOString();
  }
  if (ISO_TIME.test(text)) {
    const time = new Date(text);
    if (!Number.isNaN(time.getTime())) return time.toISOString();
  }
  throw usageError(command, `${flag} must be ${TIME_OPTION_HELP}, not ${JSON.stringify(value)}.`);
}

/**
 * `--since` and `--until` of a list, each as the API takes it; a `since` that is not before
 * `until` would select nothing, so it is refused before anything is sent.
 */
export function timeRange(
  options: { readonly since?: string; readonly until?: string },
  command: string,
  now: Date = new Date(),
): { since?: string; until?: string } {
  const since =
    options.since === undefined
      ? undefined
      : parseTimeOption(options.since, "--since", command, now);
  const until =
    options.until === undefined
      ? undefined
      : parseTimeOption(options.until, "--until", command, now);
  if (since !== undefined && until !== undefined && Date.parse(since) >= Date.parse(until)) {
    throw usageError(
      command,
      `--since (${since}) must be before --until (${until}): nothing lies between them.`,
    );
  }
  return { ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
}
