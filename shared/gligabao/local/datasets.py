"""The commands on one dataset: reindex, export, import, summaries. They work on the
local server's SQLite file by default (:func:`use_data`); GB_DYNAMODB_ENDPOINT
points them at DynamoDB instead (reindex without ``--data``: DynamoDB as
deployed)."""

from __future__ import annotations

import os
import sys


def use_data(data: str | None) -> None:
    """The commands that work on a dataset default to the local server's
    SQLite file, like `gligabao serve`; GB_DYNAMODB_ENDPOINT points them at
    DynamoDB instead."""
    os.environ["GB_LOCAL"] = "1"
    if data:
        os.environ["GB_DATA"] = data
    from .. import wiring

    wiring.reset()


def reindex(user: str, dataset: str, data: str | None = None) -> int:
    from .. import wiring
    from ..memory.reindex import reindex as run

    if data:  # the local server's file; without it, DynamoDB as deployed
        use_data(data)

    counts = run(wiring.graph_store(), wiring.vector_index(), wiring.embedder(), user, dataset)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


def export(user: str, dataset: str, out: str | None, data: str | None) -> int:
    from .. import wiring
    from ..memory.transfer import export_dataset, write_lines
    from ..models import DatasetKey

    use_data(data)
    key = DatasetKey(user, dataset)
    graph = wiring.graph_store()
    if graph.get_dataset(key) is None:
        print(f"no dataset {dataset!r} for user {user!r}", file=sys.stderr)
        return 1
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            n = write_lines(export_dataset(graph, key), fh)
    else:
        n = write_lines(export_dataset(graph, key), sys.stdout)
    print(f"exported {n} lines", file=sys.stderr)
    return 0


def import_(user: str, dataset: str, src: str | None, data: str | None, vectors: bool) -> int:
    from .. import wiring
    from ..errors import GbError
    from ..memory.reindex import reindex as rebuild
    from ..memory.transfer import import_dataset, read_lines
    from ..models import DatasetKey

    use_data(data)
    key = DatasetKey(user, dataset)
    try:
        if src:
            with open(src, encoding="utf-8") as fh:
                write = read_lines(fh)
        else:
            write = read_lines(sys.stdin)
        counts = import_dataset(wiring.graph_store(), key, write)
    except GbError as exc:
        print(f"import failed: {exc.message}", file=sys.stderr)
        return 1
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    if vectors:
        done = rebuild(
            wiring.graph_store(), wiring.vector_index(), wiring.embedder(), user, dataset
        )
        print("vectors " + " ".join(f"{k}={v}" for k, v in done.items()))
    return 0


def summaries(user: str, dataset: str, state: str | None, data: str | None) -> int:
    """A dataset's entity summaries on or off (the notes store's setting;
    off: a remember marks nothing stale and no summary call is made), or
    the setting shown. The server's default is GB_SUMMARIES."""
    from .. import wiring
    from ..models import DatasetKey

    use_data(data)
    key = DatasetKey(user, dataset)
    if wiring.graph_store().get_dataset(key) is None:
        print(f"no dataset {dataset!r} for user {user!r}", file=sys.stderr)
        return 1
    notes = wiring.notes_store()
    options = notes.get_options(key)
    if state is not None:
        options["summaries"] = state == "on"
        notes.set_options(key, options)
    on = options.get("summaries", wiring.settings().summaries)
    print(f"summaries {'on' if on else 'off'}")
    return 0
