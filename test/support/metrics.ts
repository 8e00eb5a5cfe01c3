import { spawn } from "node:child_process";
import type { Clock, Store } from "../../src/interfaces.ts";
import { ServiceMetrics } from "../../src/observability/metrics.ts";

/** The metrics a server would make over `store`; a failed backlog reading fails the test run loudly. */
export function metricsOf(store: Pick<Store, "queue">, clock: Clock): ServiceMetrics {
  return new ServiceMetrics({
    backlog: () => store.queue.backlog(),
    clock,
    onBacklogError: (error) => {
      throw error;
    },
  });
}

/**
 * The value of one series of a text exposition: `name` with exactly `labels` (none: the
 * series without labels); undefined when the exposition has no such series.
 */
export function sample(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(",");
  for (const line of exposition.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = (match[2] ?? "").split(",").filter(Boolean).sort().join(",");
    if (present === wanted) return Number(match[3]);
  }
  return undefined;
}

/**
 * `promtool check metrics` on `exposition`: resolves with its findings when it accepts it,
 * rejects with them when it does not. promtool comes with Prometheus (Debian's `prometheus`
 * package; `.ci/run` installs it): without it the test fails, never skips.
 */
export function promtoolCheck(exposition: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "ENOENT"
          ? new Error(
              "promtool is not installed: the exposition format is checked with it. Install Prometheus's tools (apt-get install prometheus), as .ci/run does.",
            )
          : error,
      );
    });
    child.on("close", (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`promtool check metrics exited with ${code}:\n${output}`));
    });
    child.stdin.end(exposition);
  });
}
