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

``check`` refuses a ``corrections`` block the page cannot show, in one line naming the file and the place.
"""

from __future__ import annotations

import math
from pathlib import Path

from memini_bench.core.table import Cell, Column, Table, fmt_interval, fmt_pct, html_text
from memini_bench.errors import BenchError
from memini_bench.report.model import embedder_label

KINDS = ("current", "forgotten", "as-of")
#: (kind, metric family, header, better): the scores of ``evaluation.corrections.COLUMNS``.
SCORES = (("current", "recall_any", "current R@{k}", "higher"), ("current", "stale_above", "stale above@{k}", "lower"),
          ("forgotten", "resurrection", "resurrected (any K)", "lower"),
          ("as-of", "recall_any", "as-of R@{k}", "higher"), ("as-of", "stale_above", "other value above@{k}", "lower"))
#: The floors: systems that rank by no content (``systems.floors``), shown as rows to measure against.
FLOORS = ("recent-k", "random")
#: (kind, write counts shown beside its scores: native, fallback, header).
WRITES = {"current": ("updates_native", "updates_fallback", "updates native"),
          "as-of": ("updates_native", "updates_fallback", "updates native"),
          "forgotten": ("forgets_honoured", "forgets_unhonoured", "forgets honoured")}
_SIG_FIELDS = {"system_a": str, "system_b": str, "metric": str, "questions": int, "mean_a": float, "mean_b": float,
               "delta": float, "ci_low": float, "ci_high": float, "p_adjusted": float, "significant": bool}


def _rate(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and \
        0.0 <= value <= 1.0


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _problem(block: object) -> str:
    """Why a ``corrections`` block cannot be shown ("" when it can)."""
    if not isinstance(block, dict) or not isinstance(block.get("scores"), dict):
        return "corrections: expected an object with scores"
    for k, systems in block["scores"].items():
        if not (isinstance(k, str) and k.isdigit() and int(k) > 0) or not isinstance(systems, dict):
            return f"corrections.scores[{k!r}]: expected a positive K and an object of systems"
        for system, rows in systems.items():
            if not isinstance(rows, list):
                return f"corrections.scores[{k!r}][{system!r}]: expected a list of scores"
            for i, row in enumerate(rows):
                where = f"corrections.scores[{k!r}][{system!r}][{i}]"
                if not isinstance(row, dict) or row.get("kind") not in KINDS or not isinstance(row.get("metric"), str):
                    return f"{where}: expected {{kind: one of {', '.join(KINDS)}, metric, mean, ci_low, ci_high, " \
                           "questions}"
                for name in ("mean", "ci_low", "ci_high"):
                    if not _rate(row.get(name)):
                        return f"{where}.{name}: {row.get(name)!r} is not a rate in [0, 1]"
                if not row["ci_low"] <= row["ci_high"]:
                    return f"{where}: ci_low {row['ci_low']!r} is above ci_high {row['ci_high']!r}"
                if not _count(row.get("questions")):
                    return f"{where}.questions: {row.get('questions')!r} is not a non-negative integer"
    writes = block.get("writes", {})
    if not isinstance(writes, dict) or not all(isinstance(w, dict) for w in writes.values()):
        return "corrections.writes: expected an object of systems' write counts"
    for system, counts in writes.items():
        for name in ("updates_native", "updates_fallback", "forgets_honoured", "forgets_unhonoured"):
            if name in counts and not _count(counts[name]):
                return f"corrections.writes[{system!r}].{name}: {counts[name]!r} is not a non-negative integer"
    sig = block.get("significance", [])
    if not isinstance(sig, list):
        return "corrections.significance: expected a list"
    for i, row in enumerate(sig):
        for name, kind in _SIG_FIELDS.items():
            value = row.get(name) if isinstance(row, dict) else None
            ok = isinstance(value, bool) if kind is bool else isinstance(value, kind if kind is not float else
                                                                          int | float) and not isinstance(value, bool)
            if not ok or (kind is float and not math.isfinite(value)):
                return f"corrections.significance[{i}].{name}: {value!r} is not a {kind.__name__}"
    return ""


def check(block: object, path: Path) -> None:
    """Refuse a ``corrections`` block the page cannot show (module docstring), in one line naming the file."""
    why = _problem(block)
    if why:
        raise BenchError(f"{path}: {why}; the file was edited or is damaged: rerun the run that wrote it")


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
