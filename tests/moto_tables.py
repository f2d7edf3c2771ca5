"""Fresh tables on the test process's own moto server, fast.

`gb` wants every table new for every test (a test counts the rows a refused
request did not write). Creating them the real way is about 43 DynamoDB calls
and a new botocore client, 1-1.5 s a test on a loaded 2-core machine, which
was most of the suite's time. So the first `gb` of a worker creates them the
real way (`gligabao.local.embedded.create_tables`, the code a user runs) and
keeps a pristine copy of moto's table objects; every later `gb` gets deep
copies of that copy, renamed to its own prefix, put straight into moto's
backend (the server runs in this process), and reuses the worker's botocore
client for that moto URL. The tables are the same, empty, with the same keys,
indexes and TTL; only the way to get them is shorter.

Behind the DynamoDB vector fake (tests/fakes/dynamodb_vectors.py, in front of
this process's moto) the same holds: the fake's own record of each table (its
vector indexes, empty) is copied beside moto's.

The same copying gives a costly fixture once a worker (`snapshot` after the
first test built it, `restore` into each later test's tables), and
`drop_tables` takes a finished test's tables out of moto.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

# (endpoint, vector store) -> (moto's account and region, short name ->
# pristine moto Table), and the botocore client shared by the tests on that endpoint.
_templates: dict[tuple[str, str], tuple[tuple[str, str], dict[str, Any]]] = {}
# (endpoint, vector store) -> short name -> the vector fake's pristine record of it
_fake_templates: dict[tuple[str, str], dict[str, Any]] = {}
_clients: dict[tuple[str | None, str | None], Any] = {}


def _find(name: str) -> tuple[str, str] | None:
    """The account and region of moto's backend that holds table ``name``."""
    from moto.dynamodb.models import dynamodb_backends

    for account in list(dynamodb_backends):
        for region in list(dynamodb_backends[account]):
            if name in dynamodb_backends[account][region].tables:
                return account, region
    return None


def fresh_tables(endpoint: str, in_process: bool, fake: Any = None) -> None:
    """Every table of the current settings (prefix, endpoint), new and empty.
    ``in_process``: moto's backend is in this process (else the tables are
    made the real way each time). ``fake``: the DynamoDB vector fake the
    endpoint is (in front of this process's moto)."""
    from gligabao import wiring
    from gligabao.config import settings
    from gligabao.dynamodb import client as shared_clients
    from gligabao.dynamodb.tables import ALL_MODELS, short_name
    from gligabao.local.embedded import create_tables

    cfg = settings()
    key = (endpoint, cfg.vector_store)
    kept = _templates.get(key) if in_process else None
    if kept is None:
        create_tables()
        if in_process:
            _keep(key)
            if fake is not None and key in _templates:
                _fake_templates[key] = fake.table_records(
                    {m.Meta.table_name: short_name(m) for m in ALL_MODELS}
                )
        _clients.update(shared_clients._clients)
        return

    wiring.tables_configured()
    _put_copies(*kept, fake, _fake_templates.get(key, {}))
    # The worker's client for this endpoint (a new one is ~0.2-0.4 s of
    # botocore session and service-model loading).
    shared_clients._clients.update(_clients)


def _copies() -> tuple[tuple[str, str], dict[str, Any]] | None:
    """Deep copies of the tables of the current settings, by short name, with
    moto's account and region that hold them; None when they are not all in
    this process's moto, or one has a stream (streams are never copied)."""
    from moto.dynamodb.models import dynamodb_backends

    from gligabao.dynamodb.tables import ALL_MODELS, short_name

    where = _find(ALL_MODELS[0].Meta.table_name)
    if where is None:
        return None
    backend = dynamodb_backends[where[0]][where[1]]
    tables = {short_name(m): backend.tables.get(m.Meta.table_name) for m in ALL_MODELS}
    if any(t is None or t.stream_shard is not None for t in tables.values()):
        return None
    return where, {short: copy.deepcopy(t) for short, t in tables.items()}


def _keep(key: tuple[str, str]) -> None:
    """The tables as they stand now, the template of ``key`` (else: made the
    real way each time)."""
    copies = _copies()
    if copies is not None:
        _templates[key] = copies


def tables_as_configured(label: str) -> None:
    """Every table of the models as `admin.configure_tables` last set them, new
    and empty, in this process's moto: made the real way the first time a
    worker asks under ``label`` (what the adapters' suites create), copies of
    those after."""
    from gligabao.dynamodb import admin

    kept = _templates.get((label, ""))
    if kept is not None:
        _put_copies(*kept, None, {})
        return
    admin.create_tables()
    _keep((label, ""))


def drop_tables(prefix: str) -> None:
    """A finished test's tables out of this process's moto (items and all):
    the worker's heap, and so each garbage collection, stays the size of one test."""
    from moto.dynamodb.models import dynamodb_backends

    for account in list(dynamodb_backends):
        for region in list(dynamodb_backends[account]):
            tables = dynamodb_backends[account][region].tables
            for name in [n for n in tables if n.startswith(prefix)]:
                tables.pop(name, None)


@dataclass
class Snapshot:
    """A test's stored state, to be given to later tests as it stood (a
    costly fixture built once a worker): moto's tables by short name, the
    vector fake's records of them, the in-process vector index's tables."""

    where: tuple[str, str]  # moto's account and region
    tables: dict[str, Any]
    fake_records: dict[str, Any]
    vectors: dict[Any, Any] | None


def snapshot(fake: Any = None, vectors: Any = None) -> Snapshot:
    """Copies of every table of the current settings (prefix) as they stand;
    ``fake``: the vector fake in front of moto; ``vectors``: the in-process
    vector index (`MemoryVectorIndex`), whose tables are copied too."""
    from gligabao.dynamodb.tables import ALL_MODELS, short_name

    copies = _copies()
    assert copies is not None, "the tables are not in this process's moto"
    names = {m.Meta.table_name: short_name(m) for m in ALL_MODELS}
    records = fake.table_records(names) if fake is not None else {}
    kept = None
    if vectors is not None:
        with vectors._lock:
            kept = copy.deepcopy(vectors._tables)
    return Snapshot(*copies, records, kept)


def restore(snap: Snapshot, fake: Any = None, vectors: Any = None) -> None:
    """The tables of the current settings (prefix) made copies of ``snap``'s,
    and the vector fake's records and the in-process index with them."""
    _put_copies(snap.where, snap.tables, fake, snap.fake_records)
    if vectors is not None and snap.vectors is not None:
        with vectors._lock:
            vectors._tables = copy.deepcopy(snap.vectors)


def _put_copies(
    where: tuple[str, str], tables: dict[str, Any], fake: Any, records: dict[str, Any]
) -> None:
    """Copies of ``tables`` (moto's, by short name) as the tables of the current
    settings, in moto's backend of ``where``; with the vector fake's ``records``."""
    from moto.dynamodb.models import dynamodb_backends

    from gligabao.dynamodb.tables import ALL_MODELS, short_name

    backend = dynamodb_backends[where[0]][where[1]]
    for model in ALL_MODELS:
        table = copy.deepcopy(tables[short_name(model)])
        table.name = model.Meta.table_name
        table.table_arn = table._generate_arn(table.name)
        backend.tables[table.name] = table
    if fake is not None:
        fake.put_table_records(
            {
                m.Meta.table_name: records[short_name(m)]
                for m in ALL_MODELS
                if short_name(m) in records
            }
        )
