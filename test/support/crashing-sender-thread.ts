/**
 * The sender thread's code, except that a batch holding a request with the header
 * `x-test-crash: 1` ends the thread at once: a stand-in for a thread that dies (a bug, or out
 * of memory) with requests in it.
 */
import { parentPort } from "node:worker_threads";
import "../../src/delivery/sender-thread.ts";

parentPort?.on("message", (message: unknown) => {
  const jobs = Array.isArray(message) ? (message as { headers: Record<string, string> }[]) : [];
  if (jobs.some((job) => job.headers["x-test-crash"] === "1")) process.exit(3);
});
