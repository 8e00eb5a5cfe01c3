import { createInterface, type Interface } from "node:readline";
import { Writable } from "node:stream";
import type { CliIo } from "./io.ts";

/** A person can be asked: the question shows on a terminal and the answer comes from one. */
export function isInteractive(io: CliIo): boolean {
  return io.stdin.isTTY === true && io.stderr.isTTY === true;
}

/**
 * Asks a yes/no question on stderr; only `y` or `yes` (any case) is yes. End of input and
 * Ctrl-C count as no.
 */
export function confirm(io: CliIo, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const reader = createInterface({ input: io.stdin, output: io.stderr });
    let answered = false;
    reader.on("SIGINT", () => {
      reader.close();
    });
    reader.on("close", () => {
      if (!answered) {
        io.stderr.write("\n");
        resolve(false);
      }
    });
    reader.question(`${question} [y/N] `, (answer) => {
      answered = true;
      reader.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}

/**
 * Several questions in a row on one terminal, some of them secret. One reader serves them all,
 * so that nothing typed ahead is lost between questions. A secret answer is not echoed: the
 * reader puts the terminal in raw mode and draws the line itself, onto an output that is
 * silenced while a secret is typed. End of input and Ctrl-C answer null.
 */
export class TerminalDialog {
  readonly #io: CliIo;
  readonly #reader: Interface;
  #silenced = false;
  #ended = false;
  #pending: ((answer: string | null) => void) | null = null;

  constructor(io: CliIo) {
    this.#io = io;
    const output = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        if (!this.#silenced) io.stderr.write(chunk);
        done();
      },
    });
    this.#reader = createInterface({ input: io.stdin, output, terminal: true });
    const end = (): void => {
      this.#ended = true;
      this.#answer(null);
    };
    this.#reader.on("SIGINT", () => {
      this.#reader.close();
    });
    this.#reader.on("close", end);
  }

  #answer(answer: string | null): void {
    const pending = this.#pending;
    this.#pending = null;
    if (this.#silenced) {
      this.#silenced = false;
      this.#io.stderr.write("\n");
    }
    pending?.(answer);
  }

  /** Asks, showing what is typed. */
  ask(question: string): Promise<string | null> {
    return this.#question(question, false);
  }

  /** Asks without showing what is typed (passwords). */
  askSecret(question: string): Promise<string | null> {
    return this.#question(question, true);
  }

  #question(question: string, secret: boolean): Promise<string | null> {
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.#pending = resolve;
      if (secret) {
        // The question itself is shown; only the answer is silenced.
        this.#io.stderr.write(question);
        this.#silenced = true;
        this.#reader.question("", (answer) => {
          this.#answer(answer);
        });
      } else {
        this.#reader.question(question, (answer) => {
          this.#answer(answer);
        });
      }
    });
  }

  close(): void {
    this.#reader.close();
  }
}

/** Far above any password or key; a guard against piping in the wrong file. */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * The first line of standard input, without its line ending (`--with-token`,
 * `--password-stdin`, passwords piped to `svc admin users create`). Null when input is empty.
 */
export async function readFirstLine(io: CliIo): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of io.stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buffer);
    size += buffer.length;
    if (buffer.includes(0x0a) || size > MAX_LINE_BYTES) break;
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const [line = ""] = text.split(/\r?\n/);
  return text === "" ? null : line;
}
