import { connect, type Socket } from "node:net";

/** A TCP connection to a server on loopback, written by hand: what came back, and its end. */
export interface RawConnection {
  readonly socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves once the server sent something ending with `suffix`. */
  receivedEnding(suffix: string): Promise<string>;
  /** Resolves once the connection is closed: what came back, and how long after it opened. */
  readonly closed: Promise<{ answer: string; afterMs: number }>;
  /** Writes `text` now, then `each` every `everyMs` until the connection closes. */
  trickle(text: string, each: string, everyMs: number): void;
}

const open = new Set<Socket>();

/** Closes every connection a test left open (a limit that is missing leaves them trickling). */
export function closeRawConnections(): void {
  for (const socket of open) socket.destroy();
  open.clear();
}

/** Opens a connection to `port` on 127.0.0.1 from `localAddress` (any of 127.0.0.0/8). */
export async function rawConnection(
  port: number,
  localAddress = "127.0.0.1",
): Promise<RawConnection> {
  const socket = connect({ host: "127.0.0.1", port, localAddress });
  const startedAt = performance.now();
  open.add(socket);
  const chunks: Buffer[] = [];
  const waiting = new Set<() => void>();
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    for (const check of waiting) check();
  });
  // A reset (a refused connection, a deadline) ends it like a close.
  socket.on("error", () => undefined);
  const closed = new Promise<{ answer: string; afterMs: number }>((resolve) => {
    socket.once("close", () => {
      open.delete(socket);
      resolve({ answer: Buffer.concat(chunks).toString(), afterMs: performance.now() - startedAt });
      for (const check of waiting) check();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const received = () => Buffer.concat(chunks).toString();
  return {
    socket,
    received,
    closed,
    receivedEnding: (suffix) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const text = received();
          if (text.endsWith(suffix)) {
            waiting.delete(check);
            resolve(text);
          } else if (socket.destroyed) {
            waiting.delete(check);
            reject(new Error(`closed before "${suffix}"; received: ${text}`));
          }
        };
        waiting.add(check);
        check();
      }),
    trickle(text, each, everyMs) {
      socket.write(text);
      const timer = setInterval(() => {
        if (!socket.destroyed) socket.write(each);
      }, everyMs);
      socket.once("close", () => {
        clearInterval(timer);
      });
    },
  };
}
