const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `50ms`, `5s`, `2m`, `1h`, `1d` (and decimals such as `1.5s`) in milliseconds; null if malformed. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (match?.[1] === undefined || match[2] === undefined) return null;
  return Math.round(Number(match[1]) * unitMs[match[2] as keyof typeof unitMs]);
}
