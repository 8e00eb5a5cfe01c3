import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

/**
 * TypeScript types of the OpenAPI document as a consumer's generator reads it
 * (openapi-typescript, the most used generator of types from OpenAPI 3.1): the client's types
 * are held to them both ways (test/client/openapi-types/). Read from docs/openapi.json's text,
 * so the types are those of the published document, not of the contract module.
 */
export async function openApiTypes(documentText: string): Promise<string> {
  const ast = await openapiTS(documentText, { silent: true });
  return `${COMMENT_HEADER}// Written by scripts/write-openapi-types.ts from docs/openapi.json: npm run docs:openapi.\n\n${astToString(ast)}`;
}
