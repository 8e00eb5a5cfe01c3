/** Writes docs/errors.md from the error catalog: `npm run docs:errors`. */
import { writeFile } from "node:fs/promises";
import { errorCatalog, exitStatusMeanings, type ErrorDefinition } from "../src/errors.ts";

const exitRows = Object.entries(exitStatusMeanings).map(
  ([status, meaning]) => `| ${status} | ${meaning} |`,
);
const errorRows = Object.entries(errorCatalog).map(([code, entry]) => {
  const definition: ErrorDefinition = entry;
  const retryAfter = definition.retryAfterSeconds ?? "—";
  return `| \`${code}\` | ${definition.status ?? "—"} | ${definition.exit} | ${definition.message.replace(/\|/g, "\\|")} | ${retryAfter} |`;
});

const text = `# Error reference

Every failure has a stable \`code\`. The API answers it as
\`{"error":{"code","message","param"?}}\` with the HTTP status below; \`svc\` prints
\`error: <message> (<code>)\` on stderr (or the \`--json\` envelope
\`{"ok":false,"error":{"code","message","status"}}\` on stdout) and exits with the exit status
below. A status of — means only the command line raises it. Retry-After is the header's
value in seconds that the API sends with the error (\`rate_limited\` sends the seconds until
its window ends); every 503 has one.

This file is generated from \`src/errors.ts\` by \`npm run docs:errors\`; a test keeps the two
in step.

## Exit statuses of svc

| exit | meaning |
|---|---|
${exitRows.join("\n")}

## Error codes

| code | HTTP | exit | message | Retry-After |
|---|---|---|---|---|
${errorRows.join("\n")}
`;

await writeFile(new URL("../../docs/errors.md", import.meta.url), text);
