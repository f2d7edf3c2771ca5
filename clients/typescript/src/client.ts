/** The gligabao HTTP API, one method per route. Each method builds the
 * request and hands it to `request`, whose types come from the OpenAPI
 * document: a new route is a line in `ROUTES` and, for a friendlier call, a
 * method of a few lines here. */
import type { Auth } from "./auth.js";
import { ApiError, CallFailedError } from "./errors.js";
import type { RetryPolicy } from "./retry.js";
import {
  type BodyOf,
  type OperationId,
  type QueryOf,
  type RequestOf,
  type ResultOf,
  ROUTES,
  type Schemas,
  fillPath,
  queryString,
} from "./routes.js";
import { type Reply, type RetryEvent, Transport } from "./transport.js";

export type RememberOut = Schemas["RememberOut"];
export type QueryOut = Schemas["QueryOut"];
export type SearchOut = Schemas["SearchOut"];
export type DatasetsOut = Schemas["DatasetsOut"];
export type DatasetSchema = Schemas["DatasetSchema"];
export type DatasetSchemaOut = Schemas["DatasetSchemaOut"];
export type DatasetSettings = Schemas["DatasetSettings"];
export type DatasetSettingsOut = Schemas["DatasetSettingsOut"];
export type InferencesOut = Schemas["InferencesOut"];
export type CallOut = Schemas["CallOut"];
export type AcceptedOut = Schemas["AcceptedOut"];
export type ErasedOut = Schemas["ErasedOut"];

/** A queued call (`respondAsync: true`, answered 202): hand it to
 * `Client.waitFor` for its result, typed `T`. */
export interface Accepted<T> extends AcceptedOut {
  /** The `Location` to poll (`/v1/gb/calls/{call_id}`). */
  location: string;
  /** Whose call it is (the poll names the user). */
  user_id: string;
  /** Never set: carries the result's type to `waitFor`. */
  readonly __result?: T;
}

export interface ClientOptions {
  /** The API's base URL: `http://127.0.0.1:7878`, or the stack's `ApiUrl`. */
  url: string;
  auth?: Auth;
  /** The default `user_id` of every call (each call may name another). */
  userId?: string;
  /** The default dataset of remember, query and search. */
  dataset?: string;
  /** Per attempt. Default 120 s. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  onRetry?: (event: RetryEvent) => void;
  /** Another `fetch` (a proxy agent, a test double). */
  fetch?: typeof fetch;
}

type User = { user_id?: string };

/** A body's fields other than those the method takes as arguments, named as
 * in the API (snake_case); `user_id` defaults to the client's. */
export type Fields<Op extends OperationId, Given extends string> = Omit<BodyOf<Op>, Given | "user_id"> & User;

/** The body's fields other than its content (`text`, or `messages` for `rememberMessages`). */
export type RememberOptions = Fields<"remember", "text" | "messages"> & {
  /** Queue it (`Prefer: respond-async`): answered 202 with the call to poll. */
  respondAsync?: boolean;
};
/** Chat messages of `rememberMessages`: `{ role, content, name?, created_at? }`. */
export type ChatMessages = NonNullable<BodyOf<"remember">["messages"]>;
export type QueryOptions = Fields<"query", "query"> & { respondAsync?: boolean };
export type SearchOptions = Fields<"search", "query">;
export type InferencesOptions = Partial<QueryOf<"listInferences">>;
/** The query parameters of a browse route, `user_id` defaulting to the client's. */
export type BrowseOptions<Op extends OperationId> = Omit<Partial<QueryOf<Op>>, "user_id"> & User;

export interface WaitOptions {
  /** Give up after this long (the worker's own retries can take minutes). Default 15 min. */
  timeoutMs?: number;
  /** The first wait between two polls, growing by half each time up to 5 s. Default 250 ms. */
  intervalMs?: number;
}

/** Statuses of a queued call that is not done yet (its record may say
 * `retrying: ...` or `internal error: ...` while the worker tries again). */
function pending(status: string): boolean {
  return (
    status === "accepted" ||
    status === "running" ||
    status.startsWith("retrying: ") ||
    status.startsWith("internal error")
  );
}

export class Client {
  readonly transport: Transport;
  readonly userId: string | undefined;
  readonly dataset: string | undefined;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.userId = options.userId;
    this.dataset = options.dataset;
  }

  /** Store a text: its entities and facts, superseding what it contradicts.
   * Sends an `Idempotency-Key` (`idempotency_key`, else a fresh one), the
   * same on every retry, so a retry never stores the text twice. */
  remember(text: string, options: RememberOptions & { respondAsync: true }): Promise<Accepted<RememberOut>>;
  remember(text: string, options?: RememberOptions & { respondAsync?: false }): Promise<RememberOut>;
  async remember(text: string, options: RememberOptions = {}): Promise<RememberOut | Accepted<RememberOut>> {
    return this.sendRemember({ text }, options);
  }

  /** Store chat messages, each its own text of the session (its speaker the
   * message's name, else its role), with one extraction for them all. */
  rememberMessages(messages: ChatMessages, options: RememberOptions & { respondAsync: true }): Promise<Accepted<RememberOut>>;
  rememberMessages(messages: ChatMessages, options?: RememberOptions & { respondAsync?: false }): Promise<RememberOut>;
  async rememberMessages(messages: ChatMessages, options: RememberOptions = {}): Promise<RememberOut | Accepted<RememberOut>> {
    return this.sendRemember({ messages }, options);
  }

  private async sendRemember(
    content: { text: string } | { messages: ChatMessages },
    options: RememberOptions,
  ): Promise<RememberOut | Accepted<RememberOut>> {
    const { respondAsync, idempotency_key, user_id, ...fields } = options;
    const headers: Record<string, string> = { "Idempotency-Key": idempotency_key ?? globalThis.crypto.randomUUID() };
    if (respondAsync) headers["Prefer"] = "respond-async";
    // One of the body's two forms (text, or messages without a speaker): the
    // server answers 400 for a mix, as the document's schema says.
    const body = this.body(user_id, { ...fields, ...content }) as BodyOf<"remember">;
    return this.acceptedOr<RememberOut>(await this.send("remember", { body, headers }), body.user_id);
  }

  /** Answer a question from memory, with the evidence it relied on. */
  query(question: string, options: QueryOptions & { respondAsync: true }): Promise<Accepted<QueryOut>>;
  query(question: string, options?: QueryOptions & { respondAsync?: false }): Promise<QueryOut>;
  async query(question: string, options: QueryOptions = {}): Promise<QueryOut | Accepted<QueryOut>> {
    const { respondAsync, user_id, ...fields } = options;
    const headers: Record<string, string> = respondAsync ? { Prefer: "respond-async" } : {};
    const body = this.body(user_id, { ...fields, query: question });
    return this.acceptedOr<QueryOut>(await this.send("query", { body, headers }), body.user_id);
  }

  /** The ranked context of a question, without the answer (no LLM call). */
  async search(question: string, options: SearchOptions = {}): Promise<SearchOut> {
    const { user_id, ...fields } = options;
    return (await this.request("search", { body: this.body(user_id, { ...fields, query: question }) })).body;
  }

  /** The user's datasets with their counts. */
  async datasets(options: User = {}): Promise<DatasetsOut> {
    return (await this.request("listDatasets", { query: { user_id: this.user(options.user_id) } })).body;
  }

  /** Delete a dataset and everything in it. */
  async deleteDataset(name: string, options: User = {}): Promise<void> {
    await this.request("deleteDataset", { path: { name }, query: { user_id: this.user(options.user_id) } });
  }

  /** A dataset's entity and edge types (empty when it has none). */
  async schema(name: string, options: User = {}): Promise<DatasetSchemaOut> {
    const query = { user_id: this.user(options.user_id) };
    return (await this.request("getDatasetSchema", { path: { name }, query })).body;
  }

  /** Set a dataset's entity and edge types (it is created when new); a bad schema is a 400. */
  async putSchema(name: string, schema: DatasetSchema, options: User = {}): Promise<DatasetSchemaOut> {
    const query = { user_id: this.user(options.user_id) };
    return (await this.request("putDatasetSchema", { path: { name }, query, body: schema })).body;
  }

  /** A dataset's settings in effect: summaries on or off, the texts' time-to-live in days. */
  async settings(name: string, options: User = {}): Promise<DatasetSettingsOut> {
    const query = { user_id: this.user(options.user_id) };
    return (await this.request("getDatasetSettings", { path: { name }, query })).body;
  }

  /** Replace a dataset's settings (a field left out goes back to its default); a bad one is a 400. */
  async putSettings(name: string, settings: DatasetSettings, options: User = {}): Promise<DatasetSettingsOut> {
    const query = { user_id: this.user(options.user_id) };
    return (await this.request("putDatasetSettings", { path: { name }, query, body: settings })).body;
  }

  /** Erase a user: every dataset, vector, call and inference record and
   * idempotency record of theirs (202; `call(call_id)` reads the erase's
   * record). A user with nothing stored is erased all the same. */
  async eraseUser(userId?: string): Promise<ErasedOut> {
    return (await this.send("eraseUser", { path: { user_id: this.user(userId) } })).body as ErasedOut;
  }

  /** Entities, newest updated first (or those whose name matches `q`, or of the entity type `type`); `next_cursor` pages on. */
  async entities(options: BrowseOptions<"listEntities"> = {}): Promise<ResultOf<"listEntities">> {
    return (await this.request("listEntities", { query: { ...options, user_id: this.user(options.user_id) } })).body;
  }

  /** An entity, its live facts (`edge_type`: of that relation or edge type only) and the texts it was mentioned in. */
  async entity(id: number | string, options: BrowseOptions<"getEntity"> = {}): Promise<ResultOf<"getEntity">> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("getEntity", { path: { id: Number(id) }, query })).body;
  }

  /** A fact with its sources and its history both ways. */
  async edge(id: number | string, options: BrowseOptions<"getEdge"> = {}): Promise<ResultOf<"getEdge">> {
    return (await this.request("getEdge", { path: { id: Number(id) }, query: { ...options, user_id: this.user(options.user_id) } })).body;
  }

  /** A dataset's texts (or one session's, in the order said). */
  async artifacts(options: BrowseOptions<"listArtifacts"> = {}): Promise<ResultOf<"listArtifacts">> {
    return (await this.request("listArtifacts", { query: { ...options, user_id: this.user(options.user_id) } })).body;
  }

  /** A remembered text and what was extracted from it. */
  async artifact(id: number | string, options: BrowseOptions<"getArtifact"> = {}): Promise<ResultOf<"getArtifact">> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("getArtifact", { path: { id: Number(id) }, query })).body;
  }

  /** Forget one text: what was removed and what was restored. */
  async forget(id: number | string, options: BrowseOptions<"forgetArtifact"> = {}): Promise<ResultOf<"forgetArtifact">> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("forgetArtifact", { path: { id: Number(id) }, query })).body;
  }

  // --- issue 44: correct, forget and audit facts ---------------------------------

  /** A fact ended (`invalid_at`) or was wrong (`description`, `target`): a
   * new fact supersedes it, with the correction's provenance. */
  async correct(
    id: number | string,
    options: Fields<"correctEdge", never>,
  ): Promise<ResultOf<"correctEdge">> {
    const { user_id, ...fields } = options;
    const body = this.body(user_id, fields) as BodyOf<"correctEdge">;
    return (await this.request("correctEdge", { path: { id: Number(id) }, body })).body;
  }

  /** Forget one fact (its vector too); its texts stay; a correction's old fact comes back. */
  async forgetFact(id: number | string, options: BrowseOptions<"forgetEdge"> = {}): Promise<ResultOf<"forgetEdge">> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("forgetEdge", { path: { id: Number(id) }, query })).body;
  }

  /** Live facts that cannot all hold, newest first (no LLM call). */
  async conflicts(options: BrowseOptions<"listConflicts"> = {}): Promise<ResultOf<"listConflicts">> {
    return (await this.request("listConflicts", { query: { ...options, user_id: this.user(options.user_id) } })).body;
  }

  /** The names merged into an entity: when, from which text, and why. */
  async merges(id: number | string, options: BrowseOptions<"getEntityMerges"> = {}): Promise<ResultOf<"getEntityMerges">> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("getEntityMerges", { path: { id: Number(id) }, query })).body;
  }

  /** LLM and embeddings requests, newest first; `next` is the cursor of the next page. */
  async inferences(options: InferencesOptions = {}): Promise<InferencesOut> {
    const query = { ...options, user_id: this.user(options.user_id) };
    return (await this.request("listInferences", { query })).body;
  }

  /** One call's record: its status, steps, and a queued remember's result. */
  async call(callId: string, options: User = {}): Promise<CallOut> {
    return (
      await this.request("getCall", { path: { call_id: callId }, query: { user_id: this.user(options.user_id) } })
    ).body;
  }

  /** Poll a queued call until it is done: its result, or `CallFailedError`
   * with the error its record holds; `ApiError` (status 0) on timeout. */
  async waitFor<T>(accepted: Accepted<T>, options: WaitOptions = {}): Promise<T> {
    const deadline = Date.now() + (options.timeoutMs ?? 900_000);
    let interval = options.intervalMs ?? 250;
    const target = accepted.location + queryString({ user_id: accepted.user_id });
    for (;;) {
      const call = (await this.transport.send("GET", target)).body as CallOut;
      if (call.status === "ok") return call.result as T;
      if (!pending(call.status)) throw new CallFailedError(call);
      if (Date.now() + interval > deadline) {
        throw new ApiError(0, `call ${accepted.call_id} still ${call.status} after the wait`, accepted.call_id);
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
      interval = Math.min(5_000, interval * 1.5);
    }
  }

  /** Any route of the API by its operation id, typed from the OpenAPI
   * document: the JSON of its 200 (undefined for a 204). */
  async request<Op extends OperationId>(op: Op, params: RequestOf<Op>): Promise<Reply & { body: ResultOf<Op> }> {
    return (await this.send(op, params)) as Reply & { body: ResultOf<Op> };
  }

  private send<Op extends OperationId>(op: Op, params: RequestOf<Op>): Promise<Reply> {
    const [method, template] = ROUTES[op];
    const p = params as { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
    const target = fillPath(template, p.path) + queryString(p.query);
    return this.transport.send(method, target, p.body, params.headers);
  }

  /** A 202's call to poll; its `Location` is a path under the API's base
   * URL (the server does not know the stage it is deployed under). */
  private acceptedOr<T>(reply: Reply, user_id: string): T | Accepted<T> {
    if (reply.status !== 202) return reply.body as T;
    const out = reply.body as AcceptedOut;
    const location = reply.headers.get("location") ?? fillPath(ROUTES.getCall[1], { call_id: out.call_id });
    return { ...out, location, user_id };
  }

  private user(given: string | undefined): string {
    const user = given ?? this.userId;
    if (!user) throw new TypeError("user_id: give it to the Client or to the call");
    return user;
  }

  /** The JSON body: the user, the client's dataset unless given, the fields that are set. */
  private body<F extends { dataset?: string }>(user_id: string | undefined, fields: F): F & { user_id: string } {
    const body: Record<string, unknown> = { user_id: this.user(user_id) };
    const dataset = fields.dataset ?? this.dataset;
    if (dataset !== undefined) body["dataset"] = dataset;
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) body[k] = v;
    return body as F & { user_id: string };
  }
}
