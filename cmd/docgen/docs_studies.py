"""The ``study-rows`` block of ``docs/memini/studies.md`` (``python cmd/results_table.py``), from the committed results
files: memini's remaining rows (the rrf-k sweep, the scoreboard's pre-fix baseline and gate probes, the entity
bridge's concept leg). Each section names the command that made its file (the lines of ``make results``) and sets
memini's published figures (``memini_bench.studies.published``) beside ours; a section whose file is absent is left
out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from docgen import studies
from docgen.blocks import board_cells
from memini_bench.core.metrics import normalize
from memini_bench.core.table import fmt_pct, fmt_points, markdown, table_of
from memini_bench.results.schema import Score
from memini_bench.studies import bridge, published

LOCOMO = studies.LOCOMO
RRF_SWEEP = "locomo-fusion-1-sweep-rrf-k/summary.json"
VARIANTS = "quality-variants.json"
CONCEPTS = "locomo-multihop-entity-bridge-vocab-entities+concepts.json"


def rrf_k(doc: dict) -> str:
    """The hybrid with RRF fusion over rrf-k, each cell against the baseline (``-sweep`` summary)."""
    phase = doc["tune"]
    rows = {s["system_a"]: s for s in phase["significance"] if normalize(s["metric"]) == "recall_any@5"}
    out = []
    for cell in phase["cells"]:
        k = float(cell["cell"].split("=", 1)[1])
        by_k = {s.k: s for s in map(Score.from_row, cell["scores"])}
        five, ten = by_k[min(by_k)], by_k[max(by_k)]
        sig = rows.get(cell["cell"])
        delta = f"{fmt_points(sig['delta'], signed=True)}, {sig['p_adjusted']:.2g}" if sig else "-"
        theirs = published.RRF_K.get(k)
        memini = "-" if theirs is None else " / ".join("-" if v is None else f"{v:.1f}" for v in theirs)
        figures = (five["recall_any@{k}"], ten["recall_any@{k}"], five["mrr"])
        out.append([f"{k:g}", *(fmt_points(v) for v in figures), delta, memini])
    return markdown(table_of("rrf-k:r|recall_any@5:r|recall_any@10:r|mrr:r|Δ recall_any@5 vs the baseline, rrf-k 5 "
                             "(pp), p (Holm):r|memini R@5 / R@10:r", out))


def quality_variants(doc: dict) -> str:
    """Every embedder x variant x config, then the pre-fix -> fixed comparisons memini quotes."""
    rows = doc["results"]
    boards = [[f"{r['embedder']} · {r.get('variant', 'fixed')} · {r['label']}", *board_cells(r)] for r in rows]
    changes = []
    for name in dict.fromkeys(r["embedder"] for r in rows):
        cell = {(r.get("variant", "fixed"), r["label"]): r for r in rows if r["embedder"] == name}
        pre, fixed = cell.get(("pre-fix", "production")), cell.get(("fixed", "production"))
        if pre is None or fixed is None:
            continue
        change = fmt_pct((fixed["inj_n"] - pre["inj_n"]) / pre["inj_n"], 0, signed=True) if pre["inj_n"] else "-"
        changes.append([name, f"{pre['inj_n']} -> {fixed['inj_n']}", change,
                        f"{pre['dur_mrr']:.3f} -> {fixed['dur_mrr']:.3f}"])
    out = [markdown(table_of("embedder · variant · config:l|dur R@k / MRR:l|epi R@k / MRR:l|P@3 / P@5:l|spray q/n:l|"
                             "inj q/n:l", boards)).rstrip("\n"), "",
           markdown(table_of("embedder:l|injections, production: pre-fix -> fixed:r|change:r|durable MRR, production: "
                             "pre-fix -> fixed:r", changes)).rstrip("\n")]
    lo, hi = published.QUALITY_INJECTION_CHANGE
    a, b = published.QUALITY_DURABLE_MRR_MINILM
    counts = ", ".join(f"{k} {p} -> {f}" for k, (p, f) in published.QUALITY_INJECTIONS.items())
    out += ["", f"memini (its templates and embedders): injections {lo} to {hi}% ({counts}); MiniLM's durable MRR "
            f"{a:.2f} -> {b:.2f}. Variants: fixed = memini's current hybrid (rel x (0.8 + 0.2 qhat), gate max(0.5 x "
            "evictee, 0.4 x top)); pre-fix = 0.8 rel + 0.2 qhat with gate 0.6 x evictee; ratio0.4 = max(0.4 x "
            "evictee, 0.4 x top); anchor-only = 0.4 x top (quality/variants.py)."]
    return "\n".join(out) + "\n"


SECTIONS: tuple[tuple[str, str, str, Callable[[dict], str]], ...] = (
    ("RRF's k (`-rrf-k`)", RRF_SWEEP,
     f"python -m memini_bench -embedder minilm -suite locomo -data {LOCOMO} -k 5,10 -fusion -1 -sweep 'rrf-k=5,60'",
     rrf_k),
    ("Quality scoreboard: the pre-fix baseline and the gate probes", VARIANTS,
     "python -m quality.scoreboard -embedders hash,minilm,wordllama -variants fixed,pre-fix,ratio0.4,anchor-only "
     "-out results/quality-variants.json", quality_variants),
    ("Entity bridge: entities and the concept leg", CONCEPTS,
     f"python -m memini_bench -embedder minilm -suite locomo -data {LOCOMO} -entity-bridge -bridge-vocab "
     "entities,concepts", bridge.render),
)


def block(results_dir: Path) -> str:
    """Every section whose results file is committed, with its command."""
    out = studies.rendered(results_dir, SECTIONS)
    return "\n".join(out) if out else "_(none of these results files is committed yet: `make results` writes them)_\n"
