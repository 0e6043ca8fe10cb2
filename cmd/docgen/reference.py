"""The generated tables of docs/reference.md, from the reference system's committed runs (``results/reference/``):

- ``reference-held``: ``make reference-held``'s run per data set on the held split (``*-held-peers.json``);
- ``reference-full``: the full sets (``*-reference.json``);
- ``reference-depth``: ``sqlite-vec-hybrid`` with each leg k deep against its pooled variant
  (``*-sqlite-vec-depth.json``);
- ``reference-selection``: ``make reference-search``'s choice (``reference/selection.json``): each rule's
  leave-one-data-set-out picks scored on the data set left out, and the chosen cell on every data set;
- ``reference-adaptive``: in the same selection, each label-free adaptive-fusion cell against its min-max twin;
- ``claimants`` (docs/peers.md): the claimant peers beside reference and memini-hybrid, one run per LoCoMo level
  and one on the LongMemEval sample (``results/*-claimants.json``, ``results/locomo-claimants-variants.json``);
- ``embedders`` (docs/peers.md): memini's three, reference and the best peers with ``-embedder e5-small`` / ``mpnet``
  (``results/*-e5-small.json``, ``results/*-mpnet.json``).

Each table: every system's R@5, R@10 and MRR (percent), recall p50 (ms) and, for each metric, ``reference`` (or
the system the file's tests are against) minus the system with its Holm-adjusted p (``-significance``: exact
McNemar on R@K, paired bootstrap on MRR, Holm across the run's whole family); bold = significant at 0.05 after
Holm.
"""

from __future__ import annotations

from pathlib import Path

from docgen.blocks import get
from memini_bench.core.metrics import normalize
from memini_bench.core.table import Cell, fmt_num, fmt_points, markdown, table_of
from memini_bench.results.schema import CompareResults

#: (column, K, the metric's registered name at that K)
METRICS = (("R@5", 5, "recall_any@5"), ("R@10", 10, "recall_any@10"), ("MRR", 10, "mrr"))
FOLDER = "reference"


def table(doc: CompareResults) -> str:
    """One results file's table (module docstring), systems by R@5; the differences are to the system the file's
    significance rows test against (``reference`` in the held and full runs)."""
    by = {(s.system, s.k): s for s in doc.scores}
    rows = doc.extra.get("significance", [])
    against = rows[0]["system_a"] if rows else "reference"
    sig = {(r["system_b"], normalize(r["metric"])): r for r in rows if r.get("system_a") == against}
    systems = sorted(doc.systems, key=lambda s: -by[(s, 5)]["recall_any@{k}"])
    body = []
    for s in systems:
        cells = [(by[(s, k)][name], fmt_points(by[(s, k)][name])) for _, k, name in METRICS]
        diffs = []
        for _, _, name in METRICS:
            row = sig.get((s, name))
            if row is not None:
                delta = fmt_points(row["delta"], signed=True)
                diffs.append(f"{f'**{delta}**' if row['significant'] else delta} (p {row['p_adjusted']:.2g})")
        p50 = by[(s, 10)]["latency_p50"]
        body.append([s, *cells, (p50, fmt_num(p50)), " / ".join(diffs) or "-"])
    header = (f"system:l|recall_any@5:r|recall_any@10:r|mrr:r|latency_p50 (ms):r|{against} - system: recall_any@5 / "
              "recall_any@10 / mrr (pp, Holm p):l")
    return f"**{doc.dataset}** ({doc.config.get('questions', '?')} questions)\n\n" + markdown(table_of(header, body))


def _tables(results_dir: Path, pattern: str, make: str, folder: str = FOLDER) -> str:
    paths = sorted((Path(results_dir) / folder).glob(pattern))
    docs = [d for d in (get(p.parent, p.name, CompareResults) for p in paths) if d is not None]
    if not docs:
        where = f"{folder}/" if folder else ""
        return f"_(`results/{where}{pattern}` is not committed yet: `{make}` writes it)_\n"
    return "\n".join(table(d) for d in docs)


def held(results_dir: Path) -> str:
    return _tables(results_dir, "*-held-peers.json", "make reference-held")


def full(results_dir: Path) -> str:
    return _tables(results_dir, "*-reference.json", "make reference-held")


def depth(results_dir: Path) -> str:
    return _tables(results_dir, "*-sqlite-vec-depth.json", "make reference-held")


def claimants(results_dir: Path) -> str:
    return _tables(results_dir, "*-claimants*.json", "make results", folder="")


def embedders(results_dir: Path) -> str:
    tables = [f"### `-embedder {e}`\n\n" + _tables(results_dir, f"*-{e}.json", "make results-embedders", folder="")
              for e in ("mpnet", "e5-small")]
    return "\n".join(tables)


def _selection_doc(results_dir: Path, where: str, make: str) -> dict | str:
    """``results/<where>/selection.json`` read, or the line saying it is not committed (or too old)."""
    import orjson

    path = Path(results_dir) / where / "selection.json"
    if not path.is_file():
        return f"_(`results/{where}/selection.json` is not committed yet: `{make}` writes it)_\n"
    doc = orjson.loads(path.read_bytes())
    if "leave_one_out" not in doc:
        return (f"_(`results/{where}/selection.json` predates the leave-one-data-set-out selection: rerun "
                f"`{make}`)_\n")
    return doc


def selection(results_dir: Path) -> str:
    """The leave-one-data-set-out table of each rule and the selected cell's tune figures per data set."""
    doc = _selection_doc(results_dir, FOLDER, "make reference-search")
    return doc if isinstance(doc, str) else _selection_table(doc)


def adaptive(results_dir: Path) -> str:
    """The label-free adaptive fusion against fixed min-max in ``make reference-search``'s grid: for each pair of
    cells that differ only in ``ref-fusion`` (adaptive, minmax), the adaptive cell's objective minus the min-max
    cell's on each data set's tune split, averaged over the pairs of each alpha, and in how many pairs adaptive is
    ahead on the mean of the data sets."""
    doc = _selection_doc(results_dir, FOLDER, "make reference-search")
    if isinstance(doc, str):
        return doc
    sets = doc["datasets"]
    by_cell = {r["cell"]: r for r in sorted(doc["ranking"], key=lambda r: r["grid_index"])}
    per_alpha: dict[str, list[list[float]]] = {}  # in grid order
    for cell, row in by_cell.items():
        twin = by_cell.get(cell.replace("ref-fusion=minmax", "ref-fusion=adaptive"))
        if "ref-fusion=minmax" not in cell or twin is None:
            continue
        alpha = next((p for p in cell.split() if p.startswith("ref-alpha=")), "every alpha")
        per_alpha.setdefault(alpha, []).append(
            [twin["per_dataset"][d]["objective"] - row["per_dataset"][d]["objective"] for d in sets])
    if not per_alpha:
        return "_(the selection's grid has no min-max and adaptive cells that differ only in ref-fusion)_\n"
    rows = []
    for alpha, pairs in per_alpha.items():
        means = [sum(p[i] for p in pairs) / len(pairs) for i in range(len(sets))]
        ahead = sum(1 for p in pairs if sum(p) > 0)
        rows.append([f"`{alpha}`", (len(pairs), str(len(pairs))), (ahead, f"{ahead} of {len(pairs)}"),
                     *((x, fmt_points(x, 2, True)) for x in [*means, sum(means) / len(means)])])
    header = "|".join(["alpha:l", "pairs:r", "adaptive ahead (mean of data sets):r", *(f"{d}:r" for d in sets),
                       "mean:r"])
    return ("Adaptive minus min-max, each pair of cells the same in every other setting (objective points on tune, "
            "averaged over the pairs of each alpha; + = adaptive better):\n\n" + markdown(table_of(header, rows)))


def _selection_table(doc: dict) -> str:
    sets = doc["datasets"]
    lines = [f"{doc['cells_tried']} cells on the tune splits of {', '.join(sets)}. Left out: the data set the rule "
             "did not see; regret = the best cell's objective there minus the picked cell's, in points; rank of "
             "the picked cell there among all cells.", ""]
    rules = [[Cell(rule, rule, strong=rule == doc["rule_chosen"]),
              *(f"{fmt_points(r['regret'], 2)} / {r['rank']}" for r in rows),
              fmt_points(max(r["regret"] for r in rows), 2)] for rule, rows in doc["leave_one_out"].items()]
    lines.append(markdown(table_of("|".join(["rule:l", *(f"{d} left out: regret / rank:r" for d in sets),
                                             "worst regret:r"]), rules)))
    top = doc["ranking"][0]
    lines.append(f"Selected (rule **{doc['rule_chosen']}** on every data set): `{doc['selected']}`\n")
    picked = [[d, *(fmt_points(top["per_dataset"][d][key]) for key in ("R@K0", "R@K1", "MRR")),
               fmt_points(top["per_dataset"][d]["regret"], 2), str(top["per_dataset"][d]["rank"])] for d in sets]
    lines.append(markdown(table_of("data set:l|recall_any@5:r|recall_any@10:r|mrr:r|regret:r|rank:r", picked)))
    return "\n".join(lines)


GOAL_CLAIM = {"system": "fluctlightdb-maxsim", "dataset": "locomo", "protocol": "turn", "metric": "recall_frac@5",
              "embedder": "minilm"}


def goal(results_dir: Path) -> str:
    """LoCoMo turn level's fractional recall@5 (``recall_frac@5``, the metric of FluctlightDB's MiniLM claim in
    ``report/claims.json``) of every system in the held peers run and the full run, from their per-question
    records (``core.metrics``' RecallFrac, as a live run computes it), beside the claim."""
    from memini_bench.core.metrics import parse
    from memini_bench.report.claims import load
    from memini_bench.results.per_question import read_per_question

    claim = next(c for c in load() if all(getattr(c, k) == v for k, v in GOAL_CLAIM.items()))
    frac = parse("recall_frac@5")
    runs = {"held split": "locomo-held-peers.jsonl.gz", "all questions": "locomo-reference.jsonl.gz"}
    columns, values = [], {}
    for label, name in runs.items():
        path = Path(results_dir) / FOLDER / name
        if not path.is_file():
            return f"_(`results/{FOLDER}/{name}` is not committed yet: `make reference-held` writes it)_\n"
        results = read_per_question(path)
        columns.append(f"{label} ({len(results[0].questions)} q):r")
        for r in results:
            values.setdefault(r.system, {})[label] = frac.value(r)
    order = sorted(values, key=lambda s: -values[s].get("held split", values[s].get("all questions", 0)))[:6]
    rows = [[s, *((values[s][lb], fmt_points(values[s][lb])) if lb in values[s] else "-" for lb in runs)]
            for s in order]
    return (f"FluctlightDB's claim: {claim.value:.1f} ({claim.claimant}, MiniLM, {claim.questions} questions, "
            f"its own pipeline; `memini_bench/report/claims.json`). Measured here, `recall_frac@5` (the share of a "
            "question's gold turns in the top 5), the six best of the held run:\n\n"
            + markdown(table_of("system:l|" + "|".join(columns), rows)))
