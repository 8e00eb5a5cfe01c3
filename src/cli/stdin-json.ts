import type { CliIo } from "./io.ts";
import { isRecord } from "./render/values.ts";
import { usageError } from "./usage.ts";

/** Far above any request body; a guard against piping in the wrong file. */
const MAX_INPUT_BYTES = 1024 * 1024;

async function readAll(stream: CliIo["stdin"], command: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_INPUT_BYTES) {
      throw usageError(command, `--stdin: standard input is larger than ${MAX_INPUT_BYTES} bytes.`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  return value === null ? "null" : `a ${typeof value}`;
}

/** `--stdin` / `--from-stdin`: one JSON object, the whole of standard input. */
export async function readJsonObject(io: CliIo, command: string): Promise<Record<string, unknown>> {
  if (io.stdin.isTTY === true) {
    io.stderr.write("Reading a JSON object from standard input; end it with Ctrl-D.\n");
  }
  const text = await readAll(io.stdin, command);
  if (text.trim() === "") {
    throw usageError(command, "--stdin: standard input is empty; it must hold a JSON object.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw usageError(command, `--stdin: standard input is not valid JSON (${reason}).`);
  }
  if (!isRecord(value)) {
    throw usageError(
      command,
      `--stdin: standard input must hold a JSON object, not ${describe(value)}.`,
    );
  }
  return value;
}
