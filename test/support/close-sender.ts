/**
 * Run as a process of its own (`node close-sender.js <url>`): two requests to `url`, each
 * answered after 300 ms, then `close()` at once; prints their outcomes as JSON once `close()`
 * has resolved. Nothing but the sender holds the process open, so a sender that let go of
 * the process before its thread ended would exit without printing.
 */
import { ThreadedSender } from "../../src/delivery/threaded-sender.ts";

const target = new URL(process.argv[2] ?? "");
const sender = new ThreadedSender({ timeoutMs: 5000 });
const send = () =>
  sender.send({
    url: target,
    headers: { "x-delay": "300" },
    body: "{}",
    timeoutMs: 5000,
    addresses: [target.hostname],
  });
const pending = [send(), send()];
await sender.close();
process.stdout.write(`${JSON.stringify(await Promise.all(pending))}\n`);
