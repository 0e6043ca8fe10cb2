"""The corrections board (``corrections.html``): every ``-suite corrections`` results file (docs/temporal.md), whose
questions are scored by kind, not by K, so they make no leaderboard row.

Per file and K, one table per question
kind (current, forgotten, as-of), a row per system with each of the kind's scores (``evaluation.corrections``:
recall_any@K, stale_above@K, resurrection) as a percent with its 95% bootstrap interval and N, and the write counts
that explain it (updates made through the system's ``update``, forgets it honoured); N is each score's question
count (stale above counts only the questions whose value changed). The floors (``FLOORS``: recent-k, random) are
rows like the others, labelled and listed last; the best value of each column among the other systems is bold (a
floor is a yardstick, never the best). Then the run's paired tests (each system against the run's reference on each
score: exact McNemar, Holm across the family, at the largest K), when the file carries them.

``collect.check_corrections`` has refused, before any page is written, a ``corrections`` block this page cannot
show.
"""

from __future__ import annotations

from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_pct, html_text
from memini_bench.evaluation.corrections import COLUMNS
from memini_bench.loaders.corrections import KINDS
from memini_bench.report.model import embedder_label

#: (kind, metric family, header, better): the scores of ``evaluation.corrections.COLUMNS``.
SCORES = COLUMNS
#: The floors: systems that rank by no content (``systems.floors``), shown as rows to measure against.
FLOORS = ("recent-k", "random")
#: (kind, write counts shown beside its scores: native, fallback, header).
WRITES = {"current": ("updates_native", "updates_fallback", "updates native"),
          "as-of": ("updates_native", "updates_fallback", "updates native"),
          "forgotten": ("forgets_honoured", "forgets_unhonoured", "forgets honoured")}


def _interval(score: dict | None) -> Cell:
    if score is None:
        return Cell(None, "-")
    text = fmt_pct(score["mean"])
    if score["ci_low"] != score["ci_high"]:
        text += f" [{score['ci_low'] * 100:.1f}, {score['ci_high'] * 100:.1f}]"
    return Cell(score["mean"], text, title=f"{score['metric']}: N = {score['questions']}")


def ordered(systems: list[str]) -> list[str]:
    """The systems in the file's order, the floors last."""
    return [s for s in systems if s not in FLOORS] + [s for s in systems if s in FLOORS]


def kind_table(block: dict, k: str, kind: str) -> Table | None:
    """One kind's table at K (module docstring); None when no system has a score of that kind."""
    systems = ordered(list(block["scores"][k]))
    found = {s: {(r["kind"], r["metric"].split("@")[0]): r for r in block["scores"][k][s]} for s in systems}
    scores = [(family, header.format(k=k), better) for kind_, family, header, better in SCORES if kind_ == kind]
    if not any((kind, family) in found[s] for s in systems for family, _, _ in scores):
        return None
    native, fallback, header = WRITES[kind]
    columns = (Column("system", "system", "left"), Column("role", "role", "left"),
               *(Column(family, head, better=better) for family, head, better in scores),
               Column("n", "N"), Column("writes", header))
    rows, attrs = [], []
    for s in systems:
        values = [found[s].get((kind, family)) for family, _, _ in scores]
        ns = list(dict.fromkeys(v["questions"] for v in values if v is not None))  # stale: only changed values
        counts = block.get("writes", {}).get(s, {})
        done, undone = counts.get(native, 0), counts.get(fallback, 0)
        floor = s in FLOORS
        rows.append((Cell(s, s), Cell("floor" if floor else "system", "floor" if floor else ""),
                     *(_interval(v) for v in values), Cell(max(ns, default=0), " / ".join(map(str, ns)) or "-"),
                     Cell(done, f"{done}/{done + undone}" if done + undone else "-")))
        attrs.append({"data-system": s, "class": "floor" if floor else "system"})
    table = Table(columns, tuple(rows), title=f"{kind}: {'K=' + k if kind != 'forgotten' else 'any K'}",
                  row_attrs=tuple(attrs), html_class="corrections")
    return _best_of_systems(table)


def _best_of_systems(table: Table) -> Table:
    """``Table.with_best`` over the rows that are not floors (the floors keep their plain text)."""
    floors = [i for i, row in enumerate(table.rows) if row[1].value == "floor"]
    systems = Table(table.columns, tuple(r for i, r in enumerate(table.rows) if i not in floors)).with_best()
    rows, it = [], iter(systems.rows)
    for i, row in enumerate(table.rows):
        rows.append(row if i in floors else next(it))
    return Table(table.columns, tuple(rows), title=table.title, row_attrs=table.row_attrs,
                 html_class=table.html_class)


def significance_table(block: dict) -> Table | None:
    """The run's paired tests, one row per system and score, the significant ones bold; None when none."""
    tests = block.get("significance") or []
    if not tests:
        return None
    reference = tests[0]["system_a"]
    columns = (Column("system", "system", "left"), Column("score", "score", "left"), Column("n", "N"),
               Column("ref", reference), Column("other", "system's"), Column("delta", "delta (points)"),
               Column("p", "p (Holm)"))
    rows = tuple((Cell(t["system_b"], t["system_b"]), Cell(t["metric"], t["metric"]),
                  Cell(t["questions"], str(t["questions"])), Cell(t["mean_a"], fmt_pct(t["mean_a"])),
                  Cell(t["mean_b"], fmt_pct(t["mean_b"])),
                  Cell(t["delta"], f"{t['delta'] * 100:+.1f} {fmt_interval(t['ci_low'], t['ci_high'])}"),
                  Cell(t["p_adjusted"], f"{t['p_adjusted']:.3g}", strong=t["significant"])) for t in tests)
    return Table(columns, rows, title=f"{reference} against each system, paired (exact McNemar, Holm)",
                 notes=("bold: significant at 0.05 after Holm; delta = reference minus system, with its 95% "
                        "bootstrap interval.",), html_class="corrections-sig")


def page(sources: list) -> list[dict]:
    """Per ``-suite corrections`` results file: its data set, embedder, the tables per K and kind, and the tests."""
    out = []
    for s in sources:
        block = s.results.raw.get("corrections")
        if not isinstance(block, dict):
            continue
        ks = sorted(block["scores"], key=int)
        tables = [html_text(t) for k in ks for kind in KINDS if (t := kind_table(block, k, kind)) is not None]
        sig = significance_table(block)
        config = s.results.config
        out.append({"file": s.name, "dataset": s.dataset, "embedder": embedder_label(config, ""),
                    "command": str(config.get("command") or ""), "tables": tables,
                    "significance": html_text(sig) if sig is not None else ""})
    return out
