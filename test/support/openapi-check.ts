import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule, { type FormatsPlugin } from "ajv-formats";
import { buildOpenApiDocument } from "../../src/contract/openapi.ts";

/**
 * Every answer the suite's API gives, checked against the OpenAPI document (decision 31):
 * the in-process API's `call` and the loopback client both pass each response here. A route
 * the document does not have, a status it does not declare, or a body off its schema throws.
 */

type Json = Record<string, unknown>;
interface DocumentOperation {
  readonly responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}

interface Document {
  readonly paths: Record<string, Record<string, DocumentOperation>>;
  readonly components: Json;
}
/** As served: JSON, not the generator's objects. */
const document = JSON.parse(JSON.stringify(buildOpenApiDocument())) as Document;

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats: FormatsPlugin = addFormatsModule.default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// The document as one schema resource, so that each response's `$ref`s resolve in it.
ajv.addSchema({ $id: "openapi.json", components: document.components });

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
}));

const validators = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: Json): ValidateFunction {
  let validate = validators.get(key);
  if (validate === undefined) {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/');
    validate = ajv.compile(JSON.parse(text) as Json);
    validators.set(key, validate);
  }
  return validate;
}

const errorSchema = { $ref: "#/components/schemas/Error" };

/** Throws when the answer is not one the document describes; `path` may carry a query. */
export function checkAnswer(method: string, path: string, status: number, text: string): void {
  const pathname = new URL(path, "http://api.test").pathname;
  if (!pathname.startsWith("/v1/")) return;
  const where = `${method} ${pathname} → ${status}`;
  const body: unknown = text === "" ? null : JSON.parse(text);
  const template = templates.find(({ pattern }) => pattern.test(pathname))?.template;
  const operation =
    template === undefined ? undefined : document.paths[template]?.[method.toLowerCase()];
  let key: string;
  let schema: Json;
  if (operation === undefined) {
    // No such operation: only the framework's refusals (404 route_not_found, 405, …).
    if (status < 400) throw new Error(`${where}: the OpenAPI document has no such operation`);
    key = "Error";
    schema = errorSchema;
  } else {
    const declared = operation.responses[String(status)];
    if (declared === undefined && status < 400) {
      throw new Error(`${where}: the OpenAPI document declares no ${status} for it`);
    }
    const response = declared ?? operation.responses.default;
    key = `${template ?? ""} ${method} ${declared === undefined ? "default" : status}`;
    schema = response?.content?.["application/json"]?.schema ?? errorSchema;
  }
  const validate = validatorFor(key, schema);
  if (!validate(body)) {
    throw new Error(
      `${where}: the answer does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`,
    );
  }
}

/**
 * Throws when a server-sent event, as a parser hands it over, is not one of the stream's
 * events in the document (its `text/event-stream` schema: one event, `data` parsed as JSON).
 */
export function checkStreamEvent(
  path: string,
  message: { event?: string | undefined; id?: string | undefined; data: string },
): void {
  const pathname = new URL(path, "http://api.test").pathname;
  const template = templates.find(({ pattern }) => pattern.test(pathname))?.template;
  const operation = template === undefined ? undefined : document.paths[template]?.get;
  const schema = operation?.responses["200"]?.content?.["text/event-stream"]?.schema;
  if (schema === undefined) throw new Error(`GET ${pathname}: the document declares no stream`);
  const name = message.event ?? "message"; // the name SSE gives an event without one
  const item = {
    event: name,
    ...(message.id === undefined ? {} : { id: message.id }),
    data: JSON.parse(message.data) as unknown,
  };
  const validate = validatorFor(`${template ?? ""} stream`, schema);
  if (!validate(item)) {
    throw new Error(
      `GET ${pathname}: the event ${name} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${message.data.slice(0, 500)}`,
    );
  }
}
