import type { Command } from "commander";
import { systemClock } from "../../interfaces.ts";
import { action } from "../command.ts";
import { addDatabaseOptions, type DatabaseFlags } from "../database-options.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

interface ServerOptions extends GlobalOptions, DatabaseFlags {
  readonly host?: string;
  readonly port?: string;
  readonly logLevel?: string;
  readonly role?: string;
}

/** Resolves on the first SIGTERM or SIGINT. */
function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      resolve(signal);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}

export function registerServerCommand(program: Command, io: CliIo): void {
  const command = program
    .command("server")
    .description("run the HTTP API and the delivery worker (see --role) until SIGTERM or SIGINT")
    .option("--host <host>", "interface to listen on (env SVC_HOST, default 127.0.0.1)")
    .option("--port <port>", "port to listen on (env SVC_PORT, default 8787)")
    .option(
      "--role <role>",
      "all (API and worker), api, or worker (only /healthz, /readyz and /metrics on the port) (env SVC_ROLE, default all)",
    )
    .option(
      "--log-level <level>",
      "fatal, error, warn, info, debug, trace or silent (env SVC_LOG_LEVEL)",
    )
    .addHelpText(
      "after",
      `
Every setting also has an environment variable and a key of the --config file
(docs/configuration.md); flags win. GET /healthz, /readyz and /metrics answer on the same port, in
every role; GET /openapi.json describes the API.

Examples:
  $ svc server
  $ svc server --port 8080 --log-level warn
  $ SVC_DATABASE_URL=postgres://svc@db/svc svc server --role api --host 0.0.0.0
  $ SVC_DATABASE_URL=postgres://svc@db/svc svc server --role worker --port 8788`,
    );
  addDatabaseOptions(command).action(
    action<ServerOptions>(io, { accepts: [] }, async (options) => {
      // Loaded here, not at the top: every other command starts faster without the server.
      const { configFrom } = await import("../database-config.ts");
      const config = configFrom(options, io.env);
      const { createLogger } = await import("../../lib/logger.ts");
      const { startServer } = await import("../../runtime/server.ts");
      const { startTracing } = await import("../../observability/tracing/tracing.ts");
      // Off, and no OpenTelemetry package loaded, unless an OTLP endpoint is set (decision 47).
      const tracing = await startTracing(io.env);
      const logger = createLogger(config.logLevel, undefined, {
        traceFields: tracing === null ? undefined : () => tracing.logFields(),
      });
      tracing?.reportProblemsTo(logger);
      // Listen for signals first: one that arrives during start-up still stops cleanly.
      const stopRequested = shutdownSignal();
      const server = await startServer(config, { logger, clock: systemClock, tracing });
      const signal = await stopRequested;
      logger.info({ signal }, "shutting down: finishing requests in flight");
      await server.close();
      // The spans of the last requests and attempts go out before the process ends.
      await tracing?.shutdown();
      logger.info("stopped");
      // The log's last blocks, written while there is an event loop: a block the exit found
      // under way could be lost. A reader that takes nothing for 2 s is not waited for longer.
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 2000).unref();
        logger.flush(() => {
          resolve();
        });
      });
      return { data: null, human: null };
    }),
  );
}
