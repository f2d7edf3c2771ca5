/** The gligabao client: `new Client({ url, userId })`, then `remember`,
 * `query`, `search`, `datasets`, `deleteDataset`, `inferences`, `call`,
 * `waitFor`, or any route by its operation id with `request`. */
export { ApiKey, Bearer, SigV4 } from "./auth.js";
export type { Auth, AwsCredentials, CredentialsProvider, OutgoingRequest, SigV4Options } from "./auth.js";
export { Client } from "./client.js";
export type {
  Accepted,
  AcceptedOut,
  CallOut,
  ClientOptions,
  DatasetsOut,
  DatasetSchema,
  DatasetSchemaOut,
  DatasetSettings,
  DatasetSettingsOut,
  Fields,
  InferencesOptions,
  InferencesOut,
  QueryOptions,
  QueryOut,
  RememberOptions,
  RememberOut,
  SearchOptions,
  SearchOut,
  WaitOptions,
} from "./client.js";
export { ApiError, CallFailedError } from "./errors.js";
export { DEFAULT_RETRY, RETRY_STATUSES, retryAfterMs } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export { ROUTES } from "./routes.js";
export type { BodyOf, OperationId, QueryOf, RequestOf, ResultOf, Schemas } from "./routes.js";
export type { Reply, RetryEvent } from "./transport.js";
export type { components, operations, paths } from "./openapi.js";
