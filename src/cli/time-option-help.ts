/**
 * What `--since` and `--until` take, for their help and their errors. Apart from
 * time-option.ts, which parses them with zod, so that the help never loads zod (decision 51).
 */
export const TIME_OPTION_HELP =
  "an ISO 8601 time with a zone (2026-11-25T09:00:00Z) or a duration back from now (30m, 2h, 7d)";
