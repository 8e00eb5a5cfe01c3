import { Writable } from "node:stream";
import type { Logger } from "pino";
import { createLogger } from "../../src/lib/logger.ts";

/** The service's logger at `level` (default trace), writing to memory; `lines()` parses what it wrote. */
export function memoryLogger(level = "trace"): {
  logger: Logger;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(level, stream);
  const lines = () =>
    written
      .join("")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, text: () => written.join("") };
}
