/**
 * Preloaded into a `svc` process under test (`NODE_OPTIONS=--import=…`): records the URL of
 * every module the process resolves, `import` and `require` alike, and writes them to
 * `SVC_TEST_MODULE_LOG` as it exits, one a line. Tests read it to show what a process never
 * loaded (the OpenTelemetry SDK with tracing off: decision 47).
 */
import { writeFileSync } from "node:fs";
import { registerHooks } from "node:module";

const loaded = new Set<string>();
const logFile = process.env.SVC_TEST_MODULE_LOG;

if (logFile !== undefined) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      loaded.add(resolved.url);
      return resolved;
    },
  });
  process.on("exit", () => {
    writeFileSync(logFile, [...loaded].join("\n"));
  });
}
