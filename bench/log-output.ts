/**
 * `npm run bench:log-output -- [--rounds 20] [--lines 20000]`: what a log line costs the process
 * (all its threads: the write is the thread pool's), pino making an access-log line and handing
 * it to its destination, for the two destinations the server has had: pino's own (sonic-boom,
 * asynchronous, 4 KiB blocks: decision 59) and `BlockOutput` (decision 61). Both write to a file
 * of their own; rounds alternate between them in one process, so that a machine whose speed
 * moves meets both alike. Prints µs per line for each, and their ratio.
 */
import { openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino, type DestinationStream } from "pino";
import { BlockOutput } from "../src/lib/block-output.ts";
import { argument, progress, round } from "./stats.ts";

const rounds = Number(argument("--rounds") ?? 20);
const linesPerRound = Number(argument("--lines") ?? 20_000);
/** Lines logged in one turn of the event loop, as a busy server's requests end. */
const linesPerTurn = 50;

const files = [
  join(tmpdir(), `svc-bench-log-a-${process.pid}`),
  join(tmpdir(), `svc-bench-log-b-${process.pid}`),
];
const destinations: Record<string, DestinationStream> = {
  "pino.destination": pino.destination({
    dest: openSync(files[0] as string, "w"),
    sync: false,
    minLength: 4096,
  }),
  BlockOutput: new BlockOutput(openSync(files[1] as string, "w"), {
    blockBytes: 4096,
    flushMs: 100,
  }),
};
const loggers = Object.fromEntries(
  Object.entries(destinations).map(([name, destination]) => [
    name,
    pino({ level: "info" }, destination).child({ reqId: "req-1" }),
  ]),
);
const line = {
  method: "POST",
  url: "/v1/workspaces/ws_af404e18ac29a578add6c185/events",
  status_code: 202,
  duration_ms: 1.2,
  remote_address: "127.0.0.1",
};

/** This process's CPU time (all its threads), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Logs a round's lines through `name`'s logger, a turn at a time; its process CPU, in ms. */
async function runRound(name: string): Promise<number> {
  const logger = loggers[name] as pino.Logger;
  const before = cpuMs();
  for (let written = 0; written < linesPerRound; written += linesPerTurn) {
    for (let index = 0; index < linesPerTurn; index++) logger.info(line, "request completed");
    await new Promise((resolve) => setImmediate(resolve));
  }
  // The last block's write, which the thread pool makes.
  await new Promise((resolve) => setTimeout(resolve, 20));
  return cpuMs() - before;
}

const spent: Record<string, number> = { "pino.destination": 0, BlockOutput: 0 };
for (let index = 0; index < rounds; index++) {
  progress(`round ${index + 1}/${rounds}`);
  const order =
    index % 2 === 0 ? ["pino.destination", "BlockOutput"] : ["BlockOutput", "pino.destination"];
  for (const name of order) spent[name] = (spent[name] ?? 0) + (await runRound(name));
}
const perLine = (name: string): number =>
  round(((spent[name] ?? 0) * 1000) / (rounds * linesPerRound), 2);
for (const name of Object.keys(spent))
  process.stdout.write(`${name}: ${perLine(name)} µs per line\n`);
process.stdout.write(
  `BlockOutput / pino.destination: ${round(perLine("BlockOutput") / perLine("pino.destination"), 3)}\n`,
);
for (const file of files) rmSync(file, { force: true });
