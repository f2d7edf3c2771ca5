"""docs/configuration.md lists every variable Settings reads, with its default
and meaning, as the model gives them (regenerate: python -m gligabao.local.config_table)."""

from __future__ import annotations

from gligabao.config import Settings, env_names
from gligabao.local.config_table import PAGE, render, table


def test_the_page_holds_the_table_the_settings_give() -> None:
    page = PAGE.read_text()
    assert render(page) == page, "run: python -m gligabao.local.config_table"


def test_every_variable_is_in_the_table() -> None:
    text = table()
    for name in Settings.model_fields:
        for var in env_names(name):
            assert f"`{var}`" in text
    assert "`GB_EMBEDDER`" in text and "`GB_CHUNK_TOKENS`" in text  # aliases and renames


def test_a_stale_row_is_caught() -> None:
    stale = PAGE.read_text().replace(
        "| `GB_TABLE_PREFIX` | `gb_` |", "| `GB_TABLE_PREFIX` | `x_` |"
    )
    assert render(stale) != stale
