import assert from "node:assert/strict";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { checkStreamEvent } from "./openapi-check.ts";

/** An open stream of the API listening on loopback: its events as they come. */
export interface OpenStream {
  readonly events: EventSourceMessage[];
  next(kind: string): Promise<EventSourceMessage>;
  close(): void;
}

export async function openStream(base: string, path: string, token: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events: EventSourceMessage[] = [];
  const waiting = new Set<() => void>();
  const parser = createParser({
    onEvent(event) {
      // Every event the suite reads is one the document describes (issue 30).
      checkStreamEvent(path, event);
      events.push(event);
      for (const check of waiting) check();
    },
    onComment(comment) {
      events.push({ event: "comment", data: comment });
      for (const check of waiting) check();
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } catch {
      // Closed by the test.
    }
    events.push({ event: "eof", data: "" });
    for (const check of waiting) check();
  })();
  let read = 0;
  return {
    events,
    next: (kind) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(check);
          reject(new Error(`no ${kind} event: ${JSON.stringify(events)}`));
        }, 10_000);
        const check = () => {
          while (read < events.length) {
            const event = events[read] as EventSourceMessage;
            read += 1;
            if (event.event === kind) {
              clearTimeout(timer);
              waiting.delete(check);
              resolve(event);
              return;
            }
          }
        };
        waiting.add(check);
        check();
      }),
    close: () => {
      controller.abort();
    },
  };
}
