/** Writes test/client/openapi-types/openapi.d.ts from docs/openapi.json: `npm run docs:openapi`. */
import { readFile, writeFile } from "node:fs/promises";
import { openApiTypes } from "./openapi-types.ts";

const document = await readFile(new URL("../../docs/openapi.json", import.meta.url), "utf8");
await writeFile(
  new URL("../../test/client/openapi-types/openapi.d.ts", import.meta.url),
  await openApiTypes(document),
);
