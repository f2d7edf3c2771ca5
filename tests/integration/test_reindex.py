"""`gligabao reindex`: a dataset's vectors rebuilt from DynamoDB alone."""

from __future__ import annotations

import pytest

from conftest import Harness
from gligabao.models import DatasetKey
from gligabao.vectors.port import KINDS


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {
        "GB_CHUNK_THRESHOLD_TOKENS": "40",
        "GB_CHUNK_TOKENS": "30",
        "GB_CHUNK_OVERLAP_TOKENS": "0",
    }


def test_reindex_rebuilds_every_kind(gb: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    from gligabao import wiring
    from gligabao.local.cli import main
    from gligabao.vectors.inprocess import MemoryVectorIndex

    gb.llm.default(
        "extract",
        {
            "entities": [
                {"name": "Alice", "type": "person"},
                {"name": "Acme", "type": "organization"},
            ],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Acme",
                    "relation": "works_at",
                    "description": "Alice works at Acme.",
                }
            ],
        },
    )
    text = "\n\n".join(
        f"Paragraph {i}: Alice works at Acme and writes a long report about it." for i in range(6)
    )
    gb.remember(text)
    key = DatasetKey("u1", "main")
    before = {k: gb.vectors.count(key, k) for k in KINDS}
    assert (
        before["chunks"] > 0
        and before["summaries"] > 0
        and before["entities"] == 2
        and before["edges"] == 1
    )

    # Lose the index entirely, then rebuild it from the tables.
    wiring.vector_index.cache_clear()
    fresh = wiring.vector_index()
    assert isinstance(fresh, MemoryVectorIndex)
    assert all(fresh.count(key, k) == 0 for k in KINDS)
    assert main(["reindex", "--user", "u1", "--dataset", "main"]) == 0
    assert {k: fresh.count(key, k) for k in KINDS} == before
    assert "entities=2" in capsys.readouterr().out
