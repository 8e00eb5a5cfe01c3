import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on loopback in front of `host:port` that can be switched off: `cut()` breaks
 * every connection through it and resets new ones until `restore()`. To the client that looks
 * like a database server that went away (a restart, a network failure) and came back.
 */
export interface TcpSwitch {
  readonly port: number;
  cut(): void;
  /**
   * Stops passing bytes on the connections open now, without closing them: a peer that
   * vanished without a word (a NAT that forgot the connection). New connections pass.
   */
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpSwitch(host: string, port: number): Promise<TcpSwitch> {
  let up = true;
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  };
  const server = createServer((client) => {
    track(client);
    if (!up) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(port, host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on("close", () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      up = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    restore() {
      up = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}
