"""`gligabao summaries`: a dataset's entity summaries turned off and on in the
local SQLite file; a dataset that does not exist is an error and writes
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gligabao import wiring
from gligabao.local.cli import main
from gligabao.models import DatasetKey


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for k in ("GB_DYNAMODB_ENDPOINT", "GB_OPENSEARCH_URL", "GB_SUMMARIES"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GB_LOCAL", "1")
    path = tmp_path / "gb.db"
    monkeypatch.setenv("GB_DATA", str(path))
    wiring.reset()
    wiring.graph_store().ensure_dataset(DatasetKey("u1", "main"))
    yield str(path)
    wiring.reset()


def test_a_dataset_turns_its_summaries_off_and_on(
    data: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = DatasetKey("u1", "main")
    assert main(["summaries", "--user", "u1", "--data", data]) == 0
    assert capsys.readouterr().out.strip() == "summaries on"
    assert main(["summaries", "--user", "u1", "--data", data, "off"]) == 0
    assert capsys.readouterr().out.strip() == "summaries off"
    assert wiring.notes_store().get_options(key) == {"summaries": False}
    assert main(["summaries", "--user", "u1", "--data", data, "on"]) == 0
    assert wiring.notes_store().get_options(key) == {"summaries": True}


def test_a_missing_dataset_is_an_error_and_nothing_is_written(
    data: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["summaries", "--user", "u1", "--dataset", "nope", "--data", data, "off"]) == 1
    assert "no dataset 'nope'" in capsys.readouterr().err
    assert wiring.notes_store().get_options(DatasetKey("u1", "nope")) == {}
