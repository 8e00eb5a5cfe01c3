import { connect, type Socket } from "node:net";

/** What the slow clients met, by how the server ended their connections. */
export interface SlowClientFigures {
  /** Connections opened in all (each client opens a new one when the server ends its last). */
  opened: number;
  /** Ended with a 408: the whole-request deadline. */
  cut_408: number;
  /** Closed with no answer at once: over a connection cap. */
  refused: number;
  /** Ended otherwise (an answer other than 408, a reset). */
  other: number;
  /** The longest a connection of a client lasted, in ms (ended by the server). */
  longest_ms: number;
  /** Open when the run ended. */
  open_at_end: number;
}

/**
 * Clients that send a request's headers and then its body a byte every `byteEveryMs`
 * (issue 27's attack: no credentials needed), each from one of `addresses` in turn; when the
 * server ends a connection, its client opens another at once, until `stop()`. Half present
 * `token`, so that the body is the route's to read; the other half none, so that it is
 * refused (401) and its body left to drain. One timer writes for all of them.
 */
export function startSlowClients(options: {
  port: number;
  path: string;
  token: string;
  count: number;
  addresses: readonly string[];
  byteEveryMs: number;
}): { stop: () => SlowClientFigures } {
  const figures: SlowClientFigures = {
    opened: 0,
    cut_408: 0,
    refused: 0,
    other: 0,
    longest_ms: 0,
    open_at_end: 0,
  };
  const sockets = new Set<Socket>();
  let running = true;
  const open = (client: number): void => {
    const socket = connect({
      host: "127.0.0.1",
      port: options.port,
      localAddress: options.addresses[client % options.addresses.length],
    });
    const openedAt = performance.now();
    figures.opened += 1;
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (text: string) => {
      if (answer.length < 4096) answer += text;
    });
    socket.on("error", () => undefined);
    socket.once("connect", () => {
      const authorization = client % 2 === 0 ? `Authorization: Bearer ${options.token}\r\n` : "";
      socket.write(
        `POST ${options.path} HTTP/1.1\r\nHost: svc.bench\r\n${authorization}` +
          "Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n{",
      );
    });
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      if (!running) return;
      const lasted = performance.now() - openedAt;
      if (answer.includes(" 408 ")) figures.cut_408 += 1;
      else if (answer === "") figures.refused += 1;
      else figures.other += 1;
      figures.longest_ms = Math.max(figures.longest_ms, Math.round(lasted));
      open(client);
    });
  };
  for (let client = 0; client < options.count; client += 1) open(client);
  // Every 100 ms, a byte to the next share of the connections: each gets one per byteEveryMs.
  const tickMs = 100;
  const perTick = Math.ceil((options.count * tickMs) / options.byteEveryMs);
  let cursor: Iterator<Socket> = sockets.values();
  const writer = setInterval(() => {
    for (let written = 0; written < perTick; written += 1) {
      let next = cursor.next();
      if (next.done === true) {
        cursor = sockets.values();
        next = cursor.next();
        if (next.done === true) return;
      }
      if (next.value.writable && !next.value.connecting) next.value.write(" ");
    }
  }, tickMs);
  return {
    stop() {
      running = false;
      clearInterval(writer);
      figures.open_at_end = sockets.size;
      for (const socket of sockets) socket.destroy();
      return figures;
    },
  };
}
