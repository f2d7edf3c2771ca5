/** End to end: the client against a running `gligabao serve` (its SQLite
 * file, the fake LLM and embeddings of tests/fakes behind it, a dev API key
 * in front): every route, queued calls polled to their result, refusals that
 * write nothing, and a remember retried through the 409 of its own first
 * attempt. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { ApiError, ApiKey, Bearer, Client, type RetryEvent } from "gligabao";
import { Harness } from "./harness.js";

const ALICE_AT_ACME = {
  entities: [
    { name: "Alice", type: "person" },
    { name: "Acme", type: "organization" },
  ],
  edges: [{ source: "Alice", target: "Acme", relation: "works_at", description: "Alice works at Acme." }],
};
const AT_ACME = { answer: "At Acme.", entities: [], edges: [1], passages: [] };
/** The tables a refused request must leave as they were (calls and
 * inferences record the refusal itself). */
const MEMORY = ["artifacts", "datasets", "edges", "entities", "facts", "idempotency", "links", "names", "vectors"];

let h: Harness;
let gb: Client;

before(async () => {
  h = await Harness.start({ serve: true });
  gb = new Client({ url: h.served, auth: new Bearer(h.devKey), userId: "ts-user" });
});
after(async () => {
  await h?.stop();
});

async function memory(): Promise<Record<string, number>> {
  const rows = await h.rows();
  return Object.fromEntries(MEMORY.map((t) => [t, rows[t] ?? 0]));
}

describe("every route", () => {
  test("remember, search, query, datasets, inferences, call, delete", async () => {
    await h.script("extract", ALICE_AT_ACME);
    const remembered = await gb.remember("Alice works at Acme.", { session_id: "s1" });
    assert.equal(remembered.session_id, "s1");
    assert.deepEqual(
      remembered.entities.map((e) => e.name),
      ["Alice", "Acme"],
    );

    const found = await gb.search("Where does Alice work?");
    assert.deepEqual(
      found.edges.map((e) => e.relation),
      ["works_at"],
    );
    assert.ok(found.context_tokens > 0);

    await h.script("query", AT_ACME);
    const answered = await gb.query("Where does Alice work?", { session_id: "s1" });
    assert.equal(answered.answer, "At Acme.");
    assert.deepEqual(
      answered.evidence.edges.map((e) => e.id),
      [1],
    );

    const listed = await gb.datasets();
    assert.deepEqual(
      listed.datasets.map((d) => [d.name, d.edges]),
      [["main", 1]],
    );

    const rows = await gb.inferences({ session_id: "s1", limit: 50 });
    const stages = new Set(rows.inferences.map((r) => r.stage));
    assert.ok(stages.has("extract") && stages.has("query"), [...stages].join());
    const first = await gb.inferences({ limit: 1 });
    assert.equal(first.inferences.length, 1);
    assert.ok(first.next);
    const second = await gb.inferences({ limit: 1, cursor: first.next });
    assert.notEqual(second.inferences[0]!.id, first.inferences[0]!.id);

    const call = await gb.call(rows.inferences[0]!.call_id);
    assert.equal(call.status, "ok");

    // The generic form reaches any route by its operation id.
    const raw = await gb.request("listDatasets", { query: { user_id: "ts-user" } });
    assert.equal(raw.status, 200);
    assert.ok(raw.headers.get("x-gb-call-id"));
    assert.deepEqual(raw.body, listed);
  });

  test("a queued remember and a queued query are polled to their results", async () => {
    await h.script("extract", { entities: [{ name: "Bob", type: "person" }], edges: [] });
    const queued = await gb.remember("Bob joined.", { dataset: "other", respondAsync: true });
    assert.equal(queued.status, "accepted");
    assert.equal(queued.location, `/v1/gb/calls/${queued.call_id}`);
    const done = await gb.waitFor(queued, { timeoutMs: 60_000, intervalMs: 50 });
    assert.deepEqual(
      done.entities.map((e) => e.name),
      ["Bob"],
    );

    await h.script("query", { answer: "Bob joined.", entities: [], edges: [], passages: [] });
    const asked = await gb.query("Who joined?", { dataset: "other", respondAsync: true });
    const answer = await gb.waitFor(asked, { timeoutMs: 60_000, intervalMs: 50 });
    assert.equal(answer.answer, "Bob joined.");

    await gb.deleteDataset("other");
    assert.deepEqual(
      (await gb.datasets()).datasets.map((d) => d.name),
      ["main"],
    );
  });
});

describe("chat messages", () => {
  test("rememberMessages stores each message as a text of its speaker, with one extraction", async () => {
    await h.script("extract", ALICE_AT_ACME);
    const before = await h.llmCalls("extract");
    const done = await gb.rememberMessages(
      [
        { role: "user", name: "Alice", content: "I work at Acme now." },
        { role: "assistant", content: "Noted." },
      ],
      { dataset: "chat", session_id: "c1" },
    );
    assert.equal(done.artifacts?.length, 2);
    assert.equal(await h.llmCalls("extract"), before + 1);
    const texts = await gb.artifacts({ dataset: "chat", session_id: "c1" });
    assert.deepEqual(
      texts.artifacts.map((a) => [a.speaker, a.text]),
      [
        ["Alice", "I work at Acme now."],
        ["assistant", "Noted."],
      ],
    );
    await gb.deleteDataset("chat");
  });
});

describe("browse and forget", () => {
  test("entities, entity, edge, artifacts, artifact, then forget: gone, and a second forget is a 404", async () => {
    await h.script("extract", ALICE_AT_ACME);
    const remembered = await gb.remember("Alice works at Acme.", { dataset: "browse" });
    const listed = await gb.entities({ dataset: "browse" });
    assert.deepEqual(listed.entities.map((e) => e.name).sort(), ["Acme", "Alice"]);
    const alice = listed.entities.find((e) => e.name === "Alice")!;
    const detail = await gb.entity(alice.id, { dataset: "browse" });
    assert.deepEqual(detail.facts.map((f) => f.relation), ["works_at"]);
    // by type (issue 47): the entities of one type, an entity's facts of one relation
    const people = await gb.entities({ dataset: "browse", type: "Person" });
    assert.deepEqual(people.entities.map((e) => e.name), ["Alice"]);
    assert.deepEqual((await gb.entity(alice.id, { dataset: "browse", edge_type: "likes" })).facts, []);
    const fact = await gb.edge(detail.facts[0]!.id, { dataset: "browse" });
    assert.deepEqual(fact.sources.map((m) => m.artifact_id), [remembered.artifact_id]);
    const texts = await gb.artifacts({ dataset: "browse" });
    assert.deepEqual(texts.artifacts.map((a) => a.id), [remembered.artifact_id]);
    const text = await gb.artifact(remembered.artifact_id, { dataset: "browse" });
    assert.equal(text.artifact.text, "Alice works at Acme.");

    const forgotten = await gb.forget(remembered.artifact_id, { dataset: "browse" });
    assert.deepEqual(forgotten.removed.artifacts, [remembered.artifact_id]);
    assert.deepEqual((await gb.entities({ dataset: "browse" })).entities, []);
    await assert.rejects(gb.forget(remembered.artifact_id, { dataset: "browse" }), (e: ApiError) => e.status === 404);
    await gb.deleteDataset("browse");
  });
});

describe("correct, forget and audit facts (issue 44)", () => {
  test("correct a fact, see it in the history, list conflicts and merges, forget the correction", async () => {
    await h.script("extract", ALICE_AT_ACME);
    await gb.remember("Alice works at Acme.", { dataset: "facts" });
    await h.script("extract", { entities: [{ name: "Initech", type: "organization" }], edges: [] });
    await gb.remember("Initech is a company.", { dataset: "facts" });
    const alice = (await gb.entities({ dataset: "facts", q: "Alice" })).entities[0]!;
    const old = (await gb.entity(alice.id, { dataset: "facts" })).facts[0]!;
    const fixed = await gb.correct(old.id, { dataset: "facts", target: "Initech", reason: "wrong employer" });
    assert.equal(fixed.edge.target, "Initech");
    assert.equal(fixed.edge.correction?.reason, "wrong employer");
    const history = await gb.edge(fixed.edge.id, { dataset: "facts" });
    assert.deepEqual(history.replaced.map((s) => s.edge.id), [old.id]);
    assert.deepEqual((await gb.conflicts({ dataset: "facts" })).conflicts, []);
    assert.deepEqual((await gb.merges(alice.id, { dataset: "facts" })).merges, []);
    const undone = await gb.forgetFact(fixed.edge.id, { dataset: "facts" });
    assert.deepEqual(undone.restored.edges, [old.id]);
    await assert.rejects(gb.forgetFact(fixed.edge.id, { dataset: "facts" }), (e: ApiError) => e.status === 404);
    await gb.deleteDataset("facts");
  });
});

describe("erase a user", () => {
  test("every dataset goes; the erase's call record says it finished; a control character is a 400", async () => {
    const eraser = new Client({ url: h.served, auth: new Bearer(h.devKey), userId: "erase/me 1" });
    await h.script("extract", ALICE_AT_ACME);
    await eraser.remember("Alice works at Acme.", { dataset: "gone" });
    const erased = await eraser.eraseUser();
    assert.equal(erased.status, "ok");
    assert.equal(erased.removed.datasets, 1);
    assert.equal((await eraser.call(erased.call_id)).status, "ok");
    assert.deepEqual((await eraser.datasets()).datasets, []);
    await assert.rejects(eraser.eraseUser("a\u0001b"), (e: ApiError) => e.status === 400);
  });
});

describe("a dataset's schema", () => {
  test("put and read back; a bad one is a 400 that stores nothing", async () => {
    const crm = {
      entity_types: {
        Customer: { attributes: { tier: { type: "string" as const, enum: ["gold", "silver"] } } },
        Account: {},
      },
      edge_types: { OWNS_ACCOUNT: { source_types: ["Customer"], target_types: ["Account"] } },
    };
    const stored = await gb.putSchema("ts-crm", crm);
    assert.deepEqual(stored.entity_types?.Customer?.attributes?.tier?.enum, ["gold", "silver"]);
    assert.deepEqual((await gb.schema("ts-crm")).edge_types?.OWNS_ACCOUNT?.target_types, ["Account"]);
    const unknown = { edge_types: { OWNS: { source_types: ["Nobody"] } } };
    await assert.rejects(gb.putSchema("ts-crm", unknown), { status: 400 });
    assert.deepEqual(await gb.schema("ts-crm"), stored);
    await gb.deleteDataset("ts-crm");
  });
});

describe("a dataset's settings", () => {
  test("replace and read back; a bad value is a 400 that stores nothing", async () => {
    await gb.remember("A note.", { dataset: "ts-settings", extract: false });
    const stored = await gb.putSettings("ts-settings", { summaries: false, text_ttl_days: 30 });
    assert.deepEqual(stored, { dataset: "ts-settings", summaries: false, text_ttl_days: 30 });
    await assert.rejects(gb.putSettings("ts-settings", { text_ttl_days: 0 }), { status: 400 });
    assert.deepEqual(await gb.settings("ts-settings"), stored);
    await gb.deleteDataset("ts-settings");
  });
});

describe("refusals write nothing", () => {
  test("404: an unknown call, a dataset already deleted, a query on no dataset", async () => {
    const before = await memory();
    await assert.rejects(gb.call("no-such-call"), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 404);
      assert.match(err.detail, /not found/);
      assert.ok(err.callId);
      return true;
    });
    await assert.rejects(gb.deleteDataset("never-made"), { status: 404 });
    await assert.rejects(gb.query("Where?", { dataset: "never-made" }), { status: 404 });
    assert.deepEqual(await memory(), before);
  });

  test("400: bad input is refused before anything is stored", async () => {
    const before = await memory();
    const calls = await h.llmCalls("extract");
    await assert.rejects(gb.remember("   "), { status: 400 });
    await assert.rejects(gb.remember("Alice works at Acme.", { user_id: "bad\u0001user" }), { status: 400 });
    await assert.rejects(gb.remember("Alice works at Acme.", { dataset: "no spaces allowed" }), { status: 400 });
    assert.equal(await h.llmCalls("extract"), calls);
    assert.deepEqual(await memory(), before);
  });

  test("401: a wrong key is refused, not retried; the right one as x-api-key passes", async () => {
    const before = await memory();
    const events: RetryEvent[] = [];
    const wrong = new Client({
      url: h.served,
      auth: new Bearer("not-the-key"),
      userId: "ts-user",
      onRetry: (e) => events.push(e),
    });
    await assert.rejects(wrong.remember("Alice works at Acme."), { status: 401 });
    await assert.rejects(new Client({ url: h.served, userId: "ts-user" }).datasets(), { status: 401 });
    assert.deepEqual(events, []);
    assert.deepEqual(await memory(), before);

    const keyed = new Client({ url: h.served, auth: new ApiKey(h.devKey), userId: "ts-user" });
    assert.ok((await keyed.datasets()).datasets.length >= 1);
  });
});

test("a remember retried through a 409 returns the first attempt's result", async () => {
  // The first attempt is slow (its extraction waits 2 s); the second, with
  // the same key, meets 409 until the first is done, then gets its result.
  const user = "ts-retry-user";
  const calls = await h.llmCalls("extract");
  await h.delayLlm(2, "extract");
  await h.script("extract", ALICE_AT_ACME);
  const first = gb.remember("Alice works at Acme.", { user_id: user, idempotency_key: "k-409" });
  const deadline = Date.now() + 30_000;
  while ((await h.llmCalls("extract")) === calls) {
    assert.ok(Date.now() < deadline, "the first attempt never reached the LLM");
    await new Promise((ok) => setTimeout(ok, 20));
  }
  const events: RetryEvent[] = [];
  const retrying = new Client({
    url: h.served,
    auth: new Bearer(h.devKey),
    userId: user,
    retry: { attempts: 20, baseMs: 200, maxMs: 500 },
    onRetry: (e) => events.push(e),
  });
  const second = await retrying.remember("Alice works at Acme.", { idempotency_key: "k-409" });
  assert.deepEqual(second, await first);
  assert.ok(events.length > 0 && events.every((e) => e.status === 409), JSON.stringify(events));
  assert.equal(await h.llmCalls("extract"), calls + 1);
  const [dataset, ...others] = (await retrying.datasets()).datasets;
  assert.deepEqual(others, []);
  assert.deepEqual([dataset!.artifacts, dataset!.edges], [1, 1]);
});
