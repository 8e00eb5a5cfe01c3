import { spawn } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/**
 * Stoplight Prism's validating proxy (issue 30), from its npm package, in front of `target`:
 * every request and answer that passes through it is checked against docs/openapi.json, and
 * with `--errors` a violation is answered as an error instead of passed on. Offline: it reads
 * the document from disk and reaches nothing but `target`.
 */
export interface PrismProxy {
  readonly url: string;
  /** What it printed, for a failure's message. */
  output(): string;
  stop(): Promise<void>;
}

const root = fileURLToPath(new URL("../../../", import.meta.url));
const cli = `${root}node_modules/@stoplight/prism-cli/dist/index.js`;
const documentPath = `${root}docs/openapi.json`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

export async function startPrismProxy(target: string): Promise<PrismProxy> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [cli, "proxy", documentPath, target, "--errors", "--host", "127.0.0.1", "--port", String(port)],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let output = "";
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`Prism did not start in 60 s:\n${output}`));
    }, 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.includes("Prism is listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${String(code)}):\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
