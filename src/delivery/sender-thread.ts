/**
 * The code of `ThreadedSender`'s thread: an `HttpSender` of its own, fed batches of requests
 * by the main thread and answering with batches of outcomes, one message each way per turn.
 */
import { parentPort, workerData } from "node:worker_threads";
import { HttpSender } from "./http-sender.ts";
import type { SendJob, SendResult, SenderThreadOptions } from "./threaded-sender.ts";

if (parentPort === null) throw new Error("sender-thread.js runs only as a worker thread");
const port = parentPort;
const sender = new HttpSender(workerData as SenderThreadOptions);
let results: SendResult[] = [];

function flush(): void {
  port.postMessage(results);
  results = [];
}

port.on("message", (message: readonly SendJob[] | "close") => {
  if (message === "close") {
    // The agent closes once its requests are answered; their outcomes go back before the end.
    void sender.close().finally(() => {
      setImmediate(() => {
        if (results.length > 0) flush();
        port.close();
      });
    });
    return;
  }
  for (const job of message) {
    void sender.send({ ...job, url: new URL(job.url) }).then((outcome) => {
      if (results.length === 0) setImmediate(flush);
      results.push({ id: job.id, outcome });
    });
  }
});
