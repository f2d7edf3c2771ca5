"""Users never reach each other's memory (issue "Security and reliability";
remember.md: "Datasets of different users never see each other, whatever the
names"). User A tries to get at user B's entities, edges, passages,
inferences, calls and datasets through every endpoint and parameter, with the
same dataset names, B's IDs, B's call IDs, B's cursors, B's idempotency keys
and questions whose vectors are identical to B's rows, and fails to."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from moto_tables import Snapshot, restore, snapshot
from remember_helpers import ent, extraction, fact

from conftest import Harness, Reply

A = "user-a"
B = "user-b"
SECRET_TEXT = "Zelda works at Hyrule Labs."
LONG_TEXT = "\n\n".join(
    f"Paragraph {i}: Zelda keeps the secret formula of Hyrule Labs in vault {i}, "
    f"guarded day and night by the research team number {i}."
    for i in range(8)
)
B_WORDS = ("Zelda", "Hyrule", "vault", "secret formula")

ZELDA = extraction(
    [ent("Zelda", "person", "chief scientist"), ent("Hyrule Labs", "organization", "a lab")],
    [fact("Zelda", "Hyrule Labs", "works_at", "Zelda works at Hyrule Labs.")],
)
CAROL = extraction(
    [ent("Carol", "person", "baker"), ent("Lyon", "city")],
    [fact("Carol", "Lyon", "lives_in", "Carol lives in Lyon.")],
)


@pytest.fixture(params=["memory", "dynamodb"])
def gb_store(request: pytest.FixtureRequest) -> str:
    """Every test on both vector stores beside DynamoDB: in-process, and the
    vectors on the rows (DynamoDB's vector indexes)."""
    return str(request.param)


@pytest.fixture
def gb_env() -> dict[str, str]:
    # small chunks: B's long text has passages (chunks and summaries)
    return {
        "GB_CHUNK_THRESHOLD_TOKENS": "150",
        "GB_CHUNK_TOKENS": "80",
        "GB_CHUNK_OVERLAP_TOKENS": "10",
    }


@dataclass
class World:
    gb: Harness
    b_calls: list[str]  # B's call IDs
    b_entities: list[dict[str, Any]]
    b_edges: list[dict[str, Any]]
    a_calls: list[str]


def _post(gb: Harness, path: str, body: dict[str, Any], **kw: Any) -> Reply:
    return gb.client.post(path, body, **kw)


# The world of each vector store, built by the first test of a worker that
# asks for it and copied into the fresh tables of every later one (six calls
# a world, 1-2.5 s: most of this file's time when each test built its own).
_worlds: dict[str, tuple[Snapshot, World]] = {}


@pytest.fixture
def world(gb: Harness, gb_store: str, request: pytest.FixtureRequest) -> World:
    """B: "main" and "shared" with facts, a chunked text, queries, a session,
    an idempotency key. A: "main" with facts of its own (same IDs as B's)."""
    fake = request.getfixturevalue("dynamo_vectors_fake") if gb_store == "dynamodb" else None
    vectors = gb.vectors if gb_store == "memory" else None
    kept = _worlds.get(gb_store)
    if kept is not None:
        restore(kept[0], fake, vectors)
        w = kept[1]
        # the copy is the world: B's rows, vectors and calls are there to be reached
        assert sum(vectors_of(gb, B, "main").values())
        assert gb.client.get(f"/v1/gb/calls/{w.b_calls[0]}?user_id={B}").status == 200
        return World(gb, list(w.b_calls), w.b_entities, w.b_edges, list(w.a_calls))
    w = _build_world(gb)
    _worlds[gb_store] = (snapshot(fake, vectors), w)
    return w


def _build_world(gb: Harness) -> World:
    """B: "main" and "shared" with facts, a chunked text, queries, a session,
    an idempotency key. A: "main" with facts of its own (same IDs as B's)."""
    b_calls: list[str] = []
    gb.llm.script("extract", ZELDA)
    r = _post(
        gb,
        "/v1/gb/remember",
        {"user_id": B, "text": SECRET_TEXT, "session_id": "b-session"},
        headers={"Idempotency-Key": "shared-key"},
    )
    assert r.status == 200, r.body
    b_calls.append(r.call_id)
    b_entities, b_edges = r.body["entities"], r.body["edges"]
    gb.llm.script("extract", ZELDA)
    r = _post(gb, "/v1/gb/remember", {"user_id": B, "text": LONG_TEXT, "session_id": "b-session"})
    assert r.status == 200 and r.body["chunks"] >= 2, r.body
    b_calls.append(r.call_id)
    gb.llm.script("extract", ZELDA)
    r = _post(gb, "/v1/gb/remember", {"user_id": B, "text": SECRET_TEXT, "dataset": "shared"})
    assert r.status == 200, r.body
    b_calls.append(r.call_id)
    r = _post(gb, "/v1/gb/query", {"user_id": B, "query": "Where does Zelda work?"})
    assert r.status == 200, r.body
    b_calls.append(r.call_id)

    gb.llm.script("extract", CAROL)
    r = _post(gb, "/v1/gb/remember", {"user_id": A, "text": "Carol lives in Lyon."})
    assert r.status == 200, r.body
    # the same row IDs as B's: IDs are per dataset
    assert [e["id"] for e in r.body["entities"]] == [e["id"] for e in b_entities]
    assert [e["id"] for e in r.body["edges"]] == [e["id"] for e in b_edges]
    return World(gb, b_calls, b_entities, b_edges, [r.call_id])


def snapshot_of(gb: Harness, user: str) -> dict[str, list[str]]:
    """Every row of ``user`` in every table, canonical and sorted."""
    from gligabao.dynamodb.tables import ALL_MODELS, short_name

    def mine(item: dict[str, Any]) -> bool:
        for attr in ("user_id", "pk"):
            value = item.get(attr, {}).get("S")
            if value is not None:
                return value == user or value.startswith(user + "\x1f")
        # the idempotency table: its key hashes the user; kept apart
        return False

    out: dict[str, list[str]] = {}
    for m in ALL_MODELS:
        short = short_name(m)
        out[short] = sorted(json.dumps(i, sort_keys=True) for i in gb.scan(short) if mine(i))
    return out


def vectors_of(gb: Harness, user: str, dataset: str) -> dict[str, int]:
    from gligabao.models import DatasetKey
    from gligabao.vectors.port import KINDS

    return {k: gb.vectors.count(DatasetKey(user, dataset), k) for k in KINDS}


def prompt_of(gb: Harness, stage: str, n: int = -1) -> str:
    req = gb.llm.requests_for(stage)[n]
    content = req["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def assert_no_b_words(text: str) -> None:
    for word in B_WORDS:
        assert word.lower() not in text.lower(), (word, text[:2000])


# --- datasets ----------------------------------------------------------------------


def test_list_shows_only_own_datasets(world: World) -> None:
    gb = world.gb
    a = gb.client.get(f"/v1/gb/datasets?user_id={A}")
    assert a.status == 200
    assert [d["name"] for d in a.body["datasets"]] == ["main"]
    assert (a.body["datasets"][0]["entities"], a.body["datasets"][0]["artifacts"]) == (2, 1)
    b = gb.client.get(f"/v1/gb/datasets?user_id={B}")
    assert [d["name"] for d in b.body["datasets"]] == ["main", "shared"]


def test_delete_of_b_dataset_as_a_is_404_and_b_is_intact(world: World) -> None:
    gb = world.gb
    before = snapshot_of(gb, B)
    vec_main, vec_shared = vectors_of(gb, B, "main"), vectors_of(gb, B, "shared")
    r = gb.client.delete(f"/v1/gb/datasets/shared?user_id={A}")
    assert r.status == 404, r.body
    assert set(r.body) == {"error"}
    assert snapshot_of(gb, B) == before
    assert vectors_of(gb, B, "shared") == vec_shared

    # A deleting its own "main" leaves B's "main" whole
    r = gb.client.delete(f"/v1/gb/datasets/main?user_id={A}")
    assert r.status == 204
    assert snapshot_of(gb, B) == before
    assert vectors_of(gb, B, "main") == vec_main
    assert snapshot_of(gb, A)["entities"] == []
    assert gb.client.get(f"/v1/gb/datasets?user_id={A}").body["datasets"] == []
    r = gb.client.delete(f"/v1/gb/datasets/main?user_id={A}")
    assert r.status == 404
    assert snapshot_of(gb, B) == before
    # B still answers from its memory
    gb.llm.script("query", {"answer": "Hyrule Labs", "entities": [1], "edges": [1], "passages": []})
    out = gb.query("Where does Zelda work?", user=B, dataset="shared")
    assert [e["name"] for e in out["evidence"]["entities"]] == ["Zelda", "Hyrule Labs"]


@pytest.mark.parametrize(
    "target",
    [
        f"/v1/gb/datasets/shared?user_id={quote(B + chr(31))}",  # a control character
        "/v1/gb/datasets/shared?user_id=" + quote(f"{A}\x1fshared"),
        "/v1/gb/datasets/shared?user_id=" + quote(f"{B}\x00"),
        f"/v1/gb/datasets/shared?user_id={A}&user_id={B}",  # repeated: joined, another user
        f"/v1/gb/datasets/shared?user_id={B}%20",  # another user: no trimming
        f"/v1/gb/datasets/shared?user_id={B.upper()}",  # another user: no case folding
        f"/v1/gb/datasets/{quote('../shared', safe='')}?user_id={A}",
        f"/v1/gb/datasets/shared%00?user_id={A}",
        f"/v1/gb/datasets/shared?user_id={A}&dataset=shared",
        "/v1/gb/datasets/shared",
    ],
)
def test_delete_with_crafted_parameters_never_reaches_b(world: World, target: str) -> None:
    gb = world.gb
    before = snapshot_of(gb, B)
    r = gb.client.delete(target)
    assert r.status in (400, 404), (target, r.status, r.body)
    assert snapshot_of(gb, B) == before


# --- query ------------------------------------------------------------------------------


def test_query_of_b_dataset_name_that_a_lacks_is_404(world: World) -> None:
    gb = world.gb
    calls = gb.llm.calls()
    r = _post(
        gb, "/v1/gb/query", {"user_id": A, "query": "Where does Zelda work?", "dataset": "shared"}
    )
    assert r.status == 404, r.body
    assert gb.llm.calls() == calls


def test_query_never_sees_b_facts_even_with_identical_vectors(world: World) -> None:
    gb = world.gb
    question = "Where does Zelda work? Tell me about Hyrule Labs, the vault and the secret formula."
    # The question's vector is exactly B's entity's, edge's, chunk's: a search
    # that crossed users would find them at cosine 1.
    gb.emb.alias(question, "Zelda", 1.0)
    # The LLM cites B's IDs (which are also A's IDs, and some only B's)
    gb.llm.script(
        "query",
        {
            "answer": "Zelda works at Hyrule Labs.",
            "entities": [1, 2, 3, 4, 5],
            "edges": [1, 2, 3],
            "passages": [2, 3, 4, 5],
        },
    )
    r = _post(gb, "/v1/gb/query", {"user_id": A, "query": question, "session_id": "b-session"})
    assert r.status == 200, r.body
    prompt = prompt_of(gb, "query")
    assert "Carol" in prompt  # A's own memory is the context (the fallback)
    assert_no_b_words(prompt.replace(question, ""))  # passages: A's own texts only
    ev = r.body["evidence"]
    assert {e["name"] for e in ev["entities"]} <= {"Carol", "Lyon"}
    assert [(e["source"], e["target"]) for e in ev["edges"]] == [("Carol", "Lyon")]
    assert ev["passages"] == []
    assert_no_b_words(json.dumps(ev))


@pytest.mark.parametrize("kind", ["entity", "edge", "chunk", "summary"])
def test_query_vectors_equal_to_b_rows_find_nothing_of_b(world: World, kind: str) -> None:
    from gligabao.models import DatasetKey
    from gligabao.text import fact_text

    gb = world.gb
    chunks = [a for a in gb.graph.iter_artifacts(DatasetKey(B, "main")) if a.parent_id]
    assert chunks
    # the exact text one of B's vectors was made from
    source = {
        "entity": "Hyrule Labs",
        "edge": fact_text("works_at", "Zelda works at Hyrule Labs."),
        "chunk": chunks[0].text,
        "summary": str(chunks[0].summary),
    }[kind]
    question = f"what about {kind}?"
    gb.emb.alias(question, source, 1.0)
    no_answer = {"answer": "?", "entities": [], "edges": [], "passages": []}
    gb.llm.script("query", no_answer)
    out = gb.query(question, user=A)
    prompt = prompt_of(gb, "query")
    assert_no_b_words(prompt)  # passages: A's own texts only
    assert_no_b_words(json.dumps(out))
    # the same question as B finds B's rows: the vectors are there
    gb.llm.script("query", no_answer)
    gb.query(question, user=B)
    prompt = prompt_of(gb, "query")
    assert "Zelda" in prompt
    if kind in ("chunk", "summary"):
        assert "[passage " in prompt


# --- remember -------------------------------------------------------------------------------


def test_remember_as_a_never_resolves_to_b_entities(world: World) -> None:
    gb = world.gb
    b_before = snapshot_of(gb, B)
    # A's text names B's entities exactly, and the model "reuses" B's IDs
    # (3 and 4 exist only in B's main, 1 and 2 are A's own Carol and Lyon).
    gb.llm.script(
        "extract",
        extraction(
            [ent("Zelda", "person", "impostor", id_=3), ent("Hyrule Labs", "organization", id_=4)],
            [fact("Zelda", "Hyrule Labs", "works_at")],
        ),
    )
    r = _post(gb, "/v1/gb/remember", {"user_id": A, "text": SECRET_TEXT})
    assert r.status == 200, r.body
    # the extract prompt shows A's known entities only
    assert_no_b_words(prompt_of(gb, "extract").replace(SECRET_TEXT, ""))
    assert [(e["name"], e["created"]) for e in r.body["entities"]] == [
        ("Zelda", True),
        ("Hyrule Labs", True),
    ]
    assert [e["id"] for e in r.body["entities"]] == [3, 4]  # A's next IDs
    assert r.body["entities"][0]["description"] == "impostor"
    assert r.body["invalidated"] == []
    assert gb.llm.calls("invalidate") == 0  # B's live facts are no candidates
    assert snapshot_of(gb, B) == b_before


def test_idempotency_key_of_b_does_not_replay_b_for_a(world: World) -> None:
    gb = world.gb
    b_before = snapshot_of(gb, B)
    extracts = gb.llm.calls("extract")
    for how in ("header", "body"):
        gb.llm.script("extract", CAROL)
        body: dict[str, Any] = {"user_id": A, "text": SECRET_TEXT}
        headers = None
        if how == "header":
            headers = {"Idempotency-Key": "shared-key"}
        else:
            body["idempotency_key"] = "shared-key"
        r = _post(gb, "/v1/gb/remember", body, headers=headers)
        assert r.status == 200, r.body
        assert_no_b_words(json.dumps(r.body["entities"]) + json.dumps(r.body["edges"]))
        assert r.call_id not in world.b_calls
    # the header and body keys are one key: the second call replayed A's first
    assert gb.llm.calls("extract") == extracts + 1
    assert snapshot_of(gb, B) == b_before
    # and B's key still replays B's own first call for B (the same request: its
    # body as first sent, since a key with another body is refused with 422)
    r = _post(
        gb,
        "/v1/gb/remember",
        {"user_id": B, "text": SECRET_TEXT, "session_id": "b-session"},
        headers={"Idempotency-Key": "shared-key"},
    )
    assert r.status == 200
    assert [e["name"] for e in r.body["entities"]] == ["Zelda", "Hyrule Labs"]
    assert snapshot_of(gb, B) == b_before


# --- records ---------------------------------------------------------------------------------


def test_b_calls_are_404_for_a(world: World) -> None:
    gb = world.gb
    for call_id in world.b_calls:
        assert gb.client.get(f"/v1/gb/calls/{call_id}?user_id={B}").status == 200
        r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id={A}")
        assert r.status == 404, r.body
        assert set(r.body) == {"error"}
    # and A's own call is found
    assert gb.client.get(f"/v1/gb/calls/{world.a_calls[0]}?user_id={A}").status == 200


def test_inferences_filters_never_reach_b(world: World) -> None:
    gb = world.gb
    own = gb.client.get(f"/v1/gb/inferences?user_id={A}&limit=200").body["inferences"]
    assert own and {i["user_id"] for i in own} == {A}
    assert {i["call_id"] for i in own} == set(world.a_calls)
    queries = [f"call_id={c}" for c in world.b_calls]
    queries += ["session_id=b-session", "dataset=shared", "dataset=main&session_id=b-session"]
    for q in queries:
        r = gb.client.get(f"/v1/gb/inferences?user_id={A}&{q}")
        assert r.status == 200, (q, r.body)
        assert r.body == {"inferences": [], "next": None}, q
    r = gb.client.get(f"/v1/gb/inferences?user_id={A}&dataset=main")
    assert {i["call_id"] for i in r.body["inferences"]} == set(world.a_calls)


def _cursor(created_at: str, row_id: str) -> str:
    """A cursor of the listing's shape (the OpenAPI pattern), made up."""
    return f"i{created_at}_{row_id}"


def test_b_cursor_with_a_user_id_reads_only_a(world: World) -> None:
    gb = world.gb
    # B's pages, one row each
    b_rows: list[dict[str, Any]] = []
    cursors: list[str] = []
    url = f"/v1/gb/inferences?user_id={B}&limit=1"
    while True:
        r = gb.client.get(url)
        assert r.status == 200
        b_rows += r.body["inferences"]
        if not r.body["next"]:
            break
        cursors.append(r.body["next"])
        url = f"/v1/gb/inferences?user_id={B}&limit=1&cursor={r.body['next']}"
    assert len(b_rows) >= 8 and {i["user_id"] for i in b_rows} == {B}
    b_ids = {i["id"] for i in b_rows}
    crafted = [
        _cursor("9999-12-31T23:59:59Z", "f" * 32),
        _cursor("0000-00-00T00:00:00Z", "0" * 32),
        _cursor("2999-01-01T00:00:00Z", b_rows[0]["id"]),
        _cursor(b_rows[-1]["created_at"], b_rows[-1]["id"]),
    ]
    for cursor in cursors + crafted:
        r = gb.client.get(f"/v1/gb/inferences?user_id={A}&limit=200&cursor={cursor}")
        assert r.status == 200, r.body
        assert {i["user_id"] for i in r.body["inferences"]} <= {A}
        assert not b_ids & {i["id"] for i in r.body["inferences"]}
    old = base64.urlsafe_b64encode(json.dumps({"sk": "9999"}).encode()).decode().rstrip("=")
    for bad in ("not-a-cursor", _cursor("2024-01-01T00:00:00Z", "0" * 31) + "!", "e30", old):
        r = gb.client.get(f"/v1/gb/inferences?user_id={A}&cursor={bad}")
        assert r.status == 400, (bad, r.body)


# --- the principal (JWT) --------------------------------------------------------------------


def test_a_principal_cannot_act_for_b_on_any_endpoint(world: World) -> None:
    from gligabao.handlers import datasets, query, records, remember
    from gligabao.local.server import make_event

    gb = world.gb
    before = snapshot_of(gb, B)

    def call(handler: Any, method: str, target: str, body: Any = None) -> tuple[int, Any]:
        raw = json.dumps(body).encode() if body is not None else b""
        event = make_event(method, target, {"Content-Type": "application/json"}, raw, "127.0.0.1")
        event["requestContext"]["authorizer"] = {"jwt": {"claims": {"sub": A}, "scopes": None}}
        out = handler(event, None)
        return out["statusCode"], json.loads(out["body"]) if out.get("body") else None

    forbidden = [
        (remember.lambda_handler, "POST", "/v1/gb/remember", {"user_id": B, "text": "x"}),
        (query.lambda_handler, "POST", "/v1/gb/query", {"user_id": B, "query": "Zelda?"}),
        (datasets.lambda_handler, "GET", f"/v1/gb/datasets?user_id={B}", None),
        (datasets.lambda_handler, "DELETE", f"/v1/gb/datasets/main?user_id={B}", None),
        (records.lambda_handler, "GET", f"/v1/gb/inferences?user_id={B}", None),
        (records.lambda_handler, "GET", f"/v1/gb/calls/{world.b_calls[0]}?user_id={B}", None),
    ]
    for handler, method, target, body in forbidden:
        status, out = call(handler, method, target, body)
        assert status == 403, (target, status, out)
        assert_no_b_words(json.dumps(out))
    # acting for itself, with B's call ID and B's dataset name
    status, _ = call(records.lambda_handler, "GET", f"/v1/gb/calls/{world.b_calls[0]}?user_id={A}")
    assert status == 404
    status, _ = call(datasets.lambda_handler, "DELETE", f"/v1/gb/datasets/shared?user_id={A}")
    assert status == 404
    assert snapshot_of(gb, B) == before
