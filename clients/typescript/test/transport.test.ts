/** The client's transport against a loopback fake of the API
 * (tests/fakes/gligabao_api.py): which statuses it retries and how long it
 * waits, the idempotency key kept across retries, fresh credentials per
 * attempt, SigV4 signatures that botocore verifies, queued calls polled. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import {
  ApiError,
  Bearer,
  CallFailedError,
  Client,
  ROUTES,
  type RetryEvent,
  SigV4,
  retryAfterMs,
} from "gligabao";
import { Harness } from "./harness.js";

const FAST = { attempts: 4, baseMs: 10, maxMs: 50 };
const REMEMBERED = { artifact_id: 1, entities: [], edges: [], invalidated: [], chunks: 0 };
let h: Harness;

before(async () => {
  h = await Harness.start({ serve: false });
});
after(async () => {
  await h?.stop();
});
beforeEach(async () => {
  await h.resetApi();
});

function client(options: Partial<ConstructorParameters<typeof Client>[0]> = {}): Client {
  return new Client({ url: h.fakeApi, userId: "u1", retry: FAST, ...options });
}

describe("retries", () => {
  test("a 429 waits its Retry-After and resends the same key with a fresh token", async () => {
    const tokens = ["token-1", "token-2"];
    await h.reply(429, { error: "slow down" }, { "Retry-After": "1" });
    const gb = client({ auth: new Bearer(() => tokens.shift()!) });
    const out = await gb.remember("Alice works at Acme.");
    assert.equal(out.artifact_id, 1);
    const [first, second, ...rest] = await h.requests();
    assert.ok(first && second && rest.length === 0);
    assert.ok(second.received_at - first.received_at >= 0.95, "waited the Retry-After, not the backoff");
    assert.equal(first.headers["idempotency-key"], second.headers["idempotency-key"]);
    assert.ok(first.headers["idempotency-key"]!.length >= 16);
    assert.deepEqual(
      [first.headers["authorization"], second.headers["authorization"]],
      ["Bearer token-1", "Bearer token-2"],
    );
    assert.deepEqual(JSON.parse(first.body), { user_id: "u1", text: "Alice works at Acme." });
  });

  test("each remember gets its own key unless given; the key goes in the header", async () => {
    const gb = client();
    await gb.remember("one");
    await gb.remember("two");
    await gb.remember("three", { idempotency_key: "mine", session_id: "s1", reasoning: "low" });
    const requests = await h.requests();
    const keys = requests.map((r) => r.headers["idempotency-key"]);
    assert.notEqual(keys[0], keys[1]);
    assert.equal(keys[2], "mine");
    assert.deepEqual(JSON.parse(requests[2]!.body), {
      user_id: "u1",
      text: "three",
      session_id: "s1",
      reasoning: "low",
    });
    assert.equal(requests[2]!.headers["content-type"], "application/json");
    assert.equal(requests[2]!.headers["prefer"], undefined);
  });

  for (const status of [409, 429, 500, 502, 503, 504]) {
    test(`${status} is retried with backoff`, async () => {
      await h.reply(status, { error: "busy" }, {}, 2);
      const events: RetryEvent[] = [];
      const out = await client({ onRetry: (e) => events.push(e) }).datasets();
      assert.deepEqual(out.datasets, []);
      assert.equal((await h.requests()).length, 3);
      assert.deepEqual(
        events.map((e) => [e.attempt, e.status, e.reason, e.method]),
        [
          [1, status, "busy", "GET"],
          [2, status, "busy", "GET"],
        ],
      );
      for (const e of events) assert.ok(e.delayMs >= 0 && e.delayMs <= FAST.baseMs * 2 ** (e.attempt - 1));
    });
  }

  test("a 409 with Retry-After (a name leased by a concurrent write) waits it", async () => {
    await h.reply(409, { error: "leased" }, { "Retry-After": "1" });
    const events: RetryEvent[] = [];
    await client({ onRetry: (e) => events.push(e) }).remember("Alice works at Acme.");
    const [first, second] = await h.requests();
    assert.ok(second!.received_at - first!.received_at >= 0.95);
    assert.equal(events[0]!.delayMs, 1000);
    assert.equal(first!.headers["idempotency-key"], second!.headers["idempotency-key"]);
  });

  for (const status of [400, 401, 403, 404, 413]) {
    test(`${status} is thrown at once with the server's message`, async () => {
      await h.reply(status, { error: "no such thing" }, { "X-Gb-Call-Id": "c-1" });
      await assert.rejects(client().query("anything?"), (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.deepEqual([err.status, err.detail, err.callId], [status, "no such thing", "c-1"]);
        assert.equal(err.message, `${status}: no such thing`);
        return true;
      });
      assert.equal((await h.requests()).length, 1);
    });
  }

  test("retries stop after the attempts, and before a long Retry-After", async () => {
    await h.reply(502, { error: "upstream" }, {}, 10);
    await assert.rejects(client({ retry: { attempts: 3, baseMs: 10 } }).datasets(), { status: 502 });
    assert.equal((await h.requests()).length, 3);

    await h.resetApi();
    await h.reply(429, { error: "come back tomorrow" }, { "Retry-After": "86400" });
    await assert.rejects(client({ retry: { retryAfterMaxMs: 60_000 } }).datasets(), { status: 429 });
    assert.equal((await h.requests()).length, 1);
  });

  test("a server that cannot be reached is an ApiError with status 0 after the attempts", async () => {
    const events: RetryEvent[] = [];
    const gb = client({ url: `http://127.0.0.1:${await closedPort()}`, onRetry: (e) => events.push(e) });
    await assert.rejects(gb.datasets(), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 0);
      assert.match(err.detail, /ECONNREFUSED/);
      return true;
    });
    assert.equal(events.length, FAST.attempts - 1);
  });

  test("API Gateway's own error body is read", async () => {
    await h.reply(403, { message: "Forbidden" });
    await assert.rejects(client().datasets(), { status: 403, detail: "Forbidden" });
  });

  test("without a user_id nothing is sent", async () => {
    await assert.rejects(new Client({ url: h.fakeApi }).datasets(), TypeError);
    assert.deepEqual(await h.requests(), []);
  });
});

test("Retry-After is read as seconds or an HTTP date", () => {
  assert.equal(retryAfterMs("7"), 7000);
  assert.equal(retryAfterMs(null), undefined);
  assert.equal(retryAfterMs("soon"), undefined);
  assert.equal(retryAfterMs("-3"), undefined);
  assert.equal(retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT"), 0); // in the past: no wait
  assert.equal(retryAfterMs("Fri, 01 Jan 2100 00:00:30 GMT", Date.UTC(2100, 0, 1)), 30_000);
});

describe("SigV4 (the iam stack)", () => {
  const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "the-secret", sessionToken: "session-token" };

  test("every request is signed, a retry again, and botocore verifies the signatures", async () => {
    let asked = 0;
    const gb = client({
      userId: "user 1",
      auth: new SigV4({ region: "eu-west-1", credentials: async () => (asked++, credentials) }),
    });
    await h.reply(503, { error: "busy" }); // the retry is signed again
    await gb.datasets();
    await gb.remember("Alice works at Acme.", { dataset: "work" });
    await gb.deleteDataset("a b");
    await gb.inferences({ session_id: "s 1", limit: 5 });
    const requests = await h.requests({ secret: "the-secret", region: "eu-west-1" });
    assert.equal(requests.length, 5);
    assert.equal(asked, 5, "credentials asked for every attempt (temporary ones refresh)");
    for (const r of requests) {
      const auth = r.headers["authorization"]!;
      assert.ok(auth.startsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), auth);
      assert.ok(auth.includes("/eu-west-1/execute-api/aws4_request"), auth);
      assert.ok(auth.split("SignedHeaders=")[1]!.split(",")[0]!.split(";").includes("host"));
      assert.equal(r.headers["x-amz-security-token"], "session-token");
      assert.ok(r.headers["x-amz-date"]);
      assert.equal(r.sigv4_valid, true, `${r.method} ${r.path}?${r.query}`);
    }
    const wrong = await h.requests({ secret: "another-secret", region: "eu-west-1" });
    assert.ok(wrong.every((r) => r.sigv4_valid === false));
    assert.deepEqual(
      requests.map((r) => `${r.method} ${r.path}?${r.query}`),
      [
        "GET /v1/gb/datasets?user_id=user%201",
        "GET /v1/gb/datasets?user_id=user%201",
        "POST /v1/gb/remember?",
        "DELETE /v1/gb/datasets/a%20b?user_id=user%201",
        "GET /v1/gb/inferences?session_id=s%201&limit=5&user_id=user%201",
      ],
    );
  });

  test("without credentials nothing is sent", async () => {
    const saved = { id: process.env["AWS_ACCESS_KEY_ID"], secret: process.env["AWS_SECRET_ACCESS_KEY"] };
    delete process.env["AWS_ACCESS_KEY_ID"];
    delete process.env["AWS_SECRET_ACCESS_KEY"];
    try {
      await assert.rejects(client({ auth: new SigV4({ region: "eu-west-1" }) }).datasets(), (err: unknown) => {
        assert.ok(err instanceof ApiError && err.status === 0 && /credentials/.test(err.detail));
        return true;
      });
    } finally {
      if (saved.id !== undefined) process.env["AWS_ACCESS_KEY_ID"] = saved.id;
      if (saved.secret !== undefined) process.env["AWS_SECRET_ACCESS_KEY"] = saved.secret;
    }
    assert.deepEqual(await h.requests(), []);
  });

  test("the environment's credentials are used when none are given", async () => {
    process.env["AWS_ACCESS_KEY_ID"] = "AKIDENV";
    process.env["AWS_SECRET_ACCESS_KEY"] = "env-secret";
    try {
      await client({ auth: new SigV4({ region: "us-east-1" }) }).datasets();
    } finally {
      delete process.env["AWS_ACCESS_KEY_ID"];
      delete process.env["AWS_SECRET_ACCESS_KEY"];
    }
    const [r] = await h.requests({ secret: "env-secret", region: "us-east-1" });
    assert.ok(r!.headers["authorization"]!.includes("Credential=AKIDENV/"));
    assert.equal(r!.sigv4_valid, true);
  });
});

describe("queued calls (Prefer: respond-async)", () => {
  const accepted = { call_id: "c-9", status: "accepted" };
  const call = (status: string, result: unknown = null) => ({
    call_id: "c-9",
    type: "remember",
    status,
    dataset: "main",
    started_at: "2026-01-01T00:00:00Z",
    duration_ms: 1,
    steps: [],
    result,
  });

  test("a 202 is polled at its Location until the call is done", async () => {
    await h.reply(202, accepted, { Location: "/v1/gb/calls/c-9" });
    await h.reply(200, call("running"));
    await h.reply(200, call("retrying: the LLM answered 529"));
    await h.reply(200, call("ok", REMEMBERED));
    const gb = client();
    const queued = await gb.remember("Alice works at Acme.", { respondAsync: true, user_id: "u 2" });
    assert.deepEqual(queued, { ...accepted, location: "/v1/gb/calls/c-9", user_id: "u 2" });
    const out = await gb.waitFor(queued, { intervalMs: 10 });
    assert.deepEqual(out, REMEMBERED);
    const requests = await h.requests();
    assert.equal(requests[0]!.headers["prefer"], "respond-async");
    assert.deepEqual(
      requests.slice(1).map((r) => `${r.method} ${r.path}?${r.query}`),
      Array(3).fill("GET /v1/gb/calls/c-9?user_id=u%202"),
    );
  });

  test("a queued call that failed is a CallFailedError with its record", async () => {
    await h.reply(202, accepted, { Location: "/v1/gb/calls/c-9" });
    await h.reply(200, call("the LLM answered something unusable"));
    const gb = client();
    const queued = await gb.query("Where does Alice work?", { respondAsync: true });
    await assert.rejects(gb.waitFor(queued, { intervalMs: 10 }), (err: unknown) => {
      assert.ok(err instanceof CallFailedError);
      assert.equal(err.detail, "the LLM answered something unusable");
      assert.equal(err.call.call_id, "c-9");
      return true;
    });
  });

  test("a call still running after the wait is an ApiError, status 0", async () => {
    await h.reply(202, accepted, { Location: "/v1/gb/calls/c-9" });
    await h.reply(200, call("running"), {}, 50);
    const gb = client();
    const queued = await gb.remember("x", { respondAsync: true });
    await assert.rejects(gb.waitFor(queued, { timeoutMs: 200, intervalMs: 20 }), { status: 0, callId: "c-9" });
  });
});

test("ROUTES names every operation of the OpenAPI document, with its method and path", () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const doc = JSON.parse(readFileSync(resolve(here, "../../../shared/gligabao/openapi.json"), "utf8"));
  const documented: Record<string, [string, string]> = {};
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>)) {
    for (const [method, op] of Object.entries(methods)) documented[op.operationId] = [method.toUpperCase(), path];
  }
  assert.deepEqual(
    Object.fromEntries(Object.entries(ROUTES).map(([op, [method, path]]) => [op, [method, path]])),
    documented,
  );
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return port;
}
