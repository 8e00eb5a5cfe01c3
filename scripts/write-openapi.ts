/** Writes docs/openapi.json from the contract's operations: `npm run docs:openapi`. */
import { writeFile } from "node:fs/promises";
import { buildOpenApiDocument } from "../src/contract/openapi.ts";

await writeFile(
  new URL("../../docs/openapi.json", import.meta.url),
  `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`,
);
