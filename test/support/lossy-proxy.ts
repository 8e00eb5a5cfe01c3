import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of `target` that loses the answer to the first request:
 * it forwards the request, and when the server's answer comes back it cuts the client's
 * connection instead of passing it on. Every later connection is passed through whole.
 */
export async function startLossyProxy(
  target: URL,
): Promise<{ url: string; dropped: () => number; close: () => Promise<void> }> {
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    const lose = dropped === 0;
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      if (lose) {
        dropped += 1;
        client.resetAndDestroy();
        upstream.destroy();
      } else {
        client.write(chunk);
      }
    });
    upstream.on("end", () => client.end());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}
