/** TCP ports, written as ports and ranges: `443,8443,1024-65535`. */
export class PortSet {
  readonly #ranges: readonly (readonly [low: number, high: number])[];

  /** `entries`: each a port or a range `low-high`, 1 to 65535; throws on a malformed one. */
  constructor(entries: readonly string[]) {
    this.#ranges = entries.map((entry) => {
      const range = parseEntry(entry);
      if (range === null) throw new Error(`not a port or a range of ports: ${entry}`);
      return range;
    });
  }

  static isValidEntry(entry: string): boolean {
    return parseEntry(entry) !== null;
  }

  has(port: number): boolean {
    return this.#ranges.some(([low, high]) => port >= low && port <= high);
  }

  /** As written in the configuration, for messages: `443, 8443, 1024-65535`. */
  toString(): string {
    return this.#ranges
      .map(([low, high]) => (low === high ? `${low}` : `${low}-${high}`))
      .join(", ");
  }
}

function parseEntry(entry: string): [number, number] | null {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(entry.trim());
  if (match === null) return null;
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  return low >= 1 && low <= high && high <= 65535 ? [low, high] : null;
}
