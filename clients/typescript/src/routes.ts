/** The API's routes, typed from the generated OpenAPI types (`openapi.ts`).
 *
 * `ROUTES` must name every operation of the document: when the API gains a
 * route, regenerating the types makes this file fail to compile until the
 * route's method and path are added here (one line); `Client.request` can
 * then call it, fully typed, before it has a method of its own. */
import type { components, operations } from "./openapi.js";

export type Schemas = components["schemas"];
export type OperationId = keyof operations;
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export const ROUTES: { readonly [Op in OperationId]: readonly [Method, string] } = {
  remember: ["POST", "/v1/gb/remember"],
  rememberBatch: ["POST", "/v1/gb/remember/batch"],
  query: ["POST", "/v1/gb/query"],
  search: ["POST", "/v1/gb/search"],
  listDatasets: ["GET", "/v1/gb/datasets"],
  deleteDataset: ["DELETE", "/v1/gb/datasets/{name}"],
  getDatasetSchema: ["GET", "/v1/gb/datasets/{name}/schema"],
  putDatasetSchema: ["PUT", "/v1/gb/datasets/{name}/schema"],
  getDatasetSettings: ["GET", "/v1/gb/datasets/{name}/settings"],
  putDatasetSettings: ["PUT", "/v1/gb/datasets/{name}/settings"],
  eraseUser: ["DELETE", "/v1/gb/users/{user_id}"],
  listInferences: ["GET", "/v1/gb/inferences"],
  getCall: ["GET", "/v1/gb/calls/{call_id}"],
  splitEntity: ["POST", "/v1/gb/entities/{id}/split"],
  listEntities: ["GET", "/v1/gb/entities"],
  getEntity: ["GET", "/v1/gb/entities/{id}"],
  getEdge: ["GET", "/v1/gb/edges/{id}"],
  listArtifacts: ["GET", "/v1/gb/artifacts"],
  getArtifact: ["GET", "/v1/gb/artifacts/{id}"],
  forgetArtifact: ["DELETE", "/v1/gb/artifacts/{id}"],
  // issue 44: correct, forget and audit facts
  correctEdge: ["PATCH", "/v1/gb/edges/{id}"],
  forgetEdge: ["DELETE", "/v1/gb/edges/{id}"],
  listConflicts: ["GET", "/v1/gb/conflicts"],
  getEntityMerges: ["GET", "/v1/gb/entities/{id}/merges"],
};

type Parameters<Op extends OperationId> = operations[Op]["parameters"];

/** The path parameters of an operation (never when it has none). */
export type PathOf<Op extends OperationId> = Parameters<Op> extends { path: infer P } ? P : never;

/** The query parameters of an operation (never when it has none). */
export type QueryOf<Op extends OperationId> = Parameters<Op> extends { query: infer Q } ? Q : never;

/** The JSON body of an operation (never when it takes none). */
export type BodyOf<Op extends OperationId> = operations[Op] extends {
  requestBody: { content: { "application/json": infer B } };
}
  ? B
  : never;

type Responses<Op extends OperationId> = operations[Op]["responses"];

/** The JSON of a 200 (undefined for a route that answers 204). */
export type ResultOf<Op extends OperationId> = Responses<Op> extends {
  200: { content: { "application/json": infer R } };
}
  ? R
  : undefined;

/** What `Client.request` takes for an operation: only the parts it has. */
export type RequestOf<Op extends OperationId> = ([PathOf<Op>] extends [never] ? { path?: never } : { path: PathOf<Op> }) &
  ([QueryOf<Op>] extends [never] ? { query?: never } : { query: QueryOf<Op> }) &
  ([BodyOf<Op>] extends [never] ? { body?: never } : { body: BodyOf<Op> }) & {
    headers?: Record<string, string>;
  };

/** RFC 3986 percent-encoding (what SigV4 signs): every character but
 * `A-Z a-z 0-9 - _ . ~` encoded, a space as `%20`, never `+`. */
export function escape(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The path with its `{parameters}` filled in, encoded. */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new TypeError(`missing path parameter ${name}`);
    return escape(String(value));
  });
}

/** `?a=1&b=2` from the parameters that are set, or "" when none is. */
export function queryString(params: Record<string, unknown> | undefined): string {
  const parts = Object.entries(params ?? {})
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${escape(k)}=${escape(String(v))}`);
  return parts.length ? `?${parts.join("&")}` : "";
}
