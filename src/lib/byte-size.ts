const unitBytes = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;

/** `16384`, `512B`, `16KiB`, `1MiB` or `16GiB` in bytes (whole numbers only); null if malformed. */
export function parseByteSize(text: string): number | null {
  const match = /^(\d{1,10})(B|KiB|MiB|GiB)?$/.exec(text.trim());
  if (match?.[1] === undefined) return null;
  return Number(match[1]) * unitBytes[(match[2] ?? "B") as keyof typeof unitBytes];
}

/** Bytes as the settings write them: `16KiB`, `1MiB`, `16GiB`, else `1000B`. */
export function formatByteSize(bytes: number): string {
  if (bytes % unitBytes.GiB === 0) return `${bytes / unitBytes.GiB}GiB`;
  if (bytes % unitBytes.MiB === 0) return `${bytes / unitBytes.MiB}MiB`;
  if (bytes % unitBytes.KiB === 0) return `${bytes / unitBytes.KiB}KiB`;
  return `${bytes}B`;
}
