"""The tables of bench/eval/run.py: per category, ours against the
baselines."""

from __future__ import annotations

from typing import Any

from .gold import CATEGORIES


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None, pct: bool = False, width: int = 8) -> str:
    if x is None:
        return "-".rjust(width)
    return (f"{100 * x:.0f}%" if pct else f"{x:.2f}").rjust(width)


def table(rows: list[dict[str, Any]]) -> str:
    groups: list[tuple[str, list[dict[str, Any]]]] = [
        (c, [r for r in rows if r["category"] == c]) for c in CATEGORIES
    ]
    groups.append(("overall", rows))
    out = [
        "                    |----------------- gligabao query context -----------------|"
        " full history |---------- top-10 messages ----------| same tokens as ours  |",
        f"{'category':<13}{'n':>5} |{'recall':>8}{'precis.':>8}{'tokens':>8}{'share':>7}"
        f"{'edges':>7}{'empty':>7}{'leak':>7} |{'tokens':>13} |{'recall':>8}{'precis.':>8}"
        f"{'tokens':>8}{'stale':>7}  |{'cosine':>9}{'bm25':>9}   |",
    ]
    for name, rs in groups:
        if not rs:
            continue
        g = [r["graph"] for r in rs]
        t = [r["topk"] for r in rs]
        out.append(
            f"{name:<13}{len(rs):>5} |"
            f"{fmt(mean([x['recall'] for x in g if x['recall'] is not None]))}"
            f"{fmt(mean([x['precision'] for x in g if x['precision'] is not None]))}"
            f"{mean([x['tokens'] for x in g]) or 0:>8.0f}"
            f"{fmt(mean([x['tokens'] / r['full_history_tokens'] for x, r in zip(g, rs, strict=True)]), True, 7)}"
            f"{mean([x['edges'] for x in g]) or 0:>7.1f}"
            f"{fmt(mean([float(x['empty']) for x in g]), True, 7)}"
            f"{fmt(mean([float(bool(x['leaked'])) for x in g]), True, 7)} |"
            f"{mean([r['full_history_tokens'] for r in rs]) or 0:>13.0f} |"
            f"{fmt(mean([x['recall'] for x in t if x['recall'] is not None]))}"
            f"{fmt(mean([x['precision'] for x in t if x['precision'] is not None]))}"
            f"{mean([x['tokens'] for x in t]) or 0:>8.0f}"
            f"{fmt(mean([float(x['leaked']) for x in t]), True, 7)}  |"
            f"{fmt(mean([r['cos_eq']['recall'] for r in rs if r['cos_eq']['recall'] is not None]), width=9)}"
            f"{fmt(mean([r['bm25_eq']['recall'] for r in rs if r['bm25_eq']['recall'] is not None]), width=9)}   |"
        )
    return "\n".join(out)


def budget_table(rows: list[dict[str, Any]], budget: int) -> str:
    """Ours under one more budget, next to the baselines at the same tokens."""
    out = [f"{'category':<13}{'n':>5} |{'recall':>8}{'tokens':>8}{'share':>7}{'leak':>7} |"
           f"{'cosine':>9}{'bm25':>9}   (same tokens)"]
    groups = [(c, [r for r in rows if r["category"] == c]) for c in CATEGORIES]
    for name, rs in [*groups, ("overall", rows)]:
        if not rs:
            continue
        subs = [r["budgets"][budget] for r in rs]
        g = [x["graph"] for x in subs]
        out.append(
            f"{name:<13}{len(rs):>5} |"
            f"{fmt(mean([x['recall'] for x in g if x['recall'] is not None]))}"
            f"{mean([x['tokens'] for x in g]) or 0:>8.0f}"
            f"{fmt(mean([x['tokens'] / r['full_history_tokens'] for x, r in zip(g, rs, strict=True)]), True, 7)}"
            f"{fmt(mean([float(bool(x['leaked'])) for x in g]), True, 7)} |"
            f"{fmt(mean([x['cos_eq']['recall'] for x in subs if x['cos_eq']['recall'] is not None]), width=9)}"
            f"{fmt(mean([x['bm25_eq']['recall'] for x in subs if x['bm25_eq']['recall'] is not None]), width=9)}"
        )
    return "\n".join(out)
