"""``-poison N``: memini's ``bench/poison.go → Poison(ds, perGroup, filler)``, a low-quality bulk import.

For every group that has questions (in the order its first question appears; memini walks a Go map, so its
order is random, which only moves the debris' place in the item list), append N items

    id = "debris/<group>/<i>"  (i = 0 .. N-1),  group = <group>,  content = FILLER

all with one content (memini's: "TODO: revisit this later, low-signal note from a bulk import"), so a dedup pass
can collapse them. The questions are unchanged; the data set is renamed ``<name>-poisoned``. N <= 0 returns the
data set itself. Debris items take the suite's defaults otherwise (semantic tier, no time), as memini's do.

Applied after the holdout split and ``-limit`` (debris goes to the groups being scored). ``poison_setting`` is the
flag (a field of ``modes.specs.SystemsRunOptions``); ``load_prepared`` (modes/common.py) applies it.
"""

from __future__ import annotations

from memini_bench.core.dataset import Dataset, Item
from memini_bench.core.settings import Int, setting
from memini_bench.core.table import Cell, Column, Table, fmt_points
from memini_bench.core.table import render as render_table
from memini_bench.errors import BenchError

FILLER = "TODO: revisit this later, low-signal note from a bulk import"
MAX_PER_GROUP = 100_000


def poison_setting():
    """The ``-poison N`` flag, as a field of the normal run's options (``modes.specs.SystemsRunOptions``)."""
    return setting("poison", 0, "Add N low-signal debris items per question group (memini's bench/poison.go: one "
                   "shared filler text, ids debris/<group>/<i>); the data set becomes <name>-poisoned.",
                   type=Int(min=0, max=MAX_PER_GROUP))


def poison(ds: Dataset, per_group: int, filler: str = FILLER) -> Dataset:
    """``ds`` with ``per_group`` debris items added to each questioned group (module docstring)."""
    if per_group <= 0:
        return ds
    filler = filler or FILLER
    taken = {it.id for it in ds.items}
    groups = list(dict.fromkeys(q.group for q in ds.questions))
    debris = tuple(Item(id=f"debris/{group}/{i}", content=filler, group=group)
                   for group in groups for i in range(per_group))
    clash = next((d.id for d in debris if d.id in taken), None)
    if clash is not None:
        raise BenchError(f"-poison: the data set already has an item {clash!r}; rename it or drop -poison")
    note = f"poisoned: {per_group} debris items added to each of {len(groups)} groups ({len(debris)} in all)"
    return ds.with_(name=f"{ds.name}-poisoned", items=ds.items + debris, notes=ds.notes + (note,))


def render(clean: dict, poisoned: dict) -> str:
    """Markdown: how each system's recall moves from a clean results document (schema 3, as ``results.read``
    gives it) to its ``-poison`` twin (same suite,
    same settings); rows are the systems both files hold, at every K both hold."""
    def by_key(doc: dict) -> dict[tuple[str, int], dict]:
        """(system, K) -> the row's ``{metric name: value}`` (results schema 3), recall_any@K also as ``R``."""
        return {(r["system"], r["k"]): {**r["scores"], "R": r["scores"][f"recall_any@{r['k']}"]}
                for r in doc["results"]}

    before, after = by_key(clean), by_key(poisoned)
    ks = sorted({k for _, k in before} & {k for _, k in after})
    systems = [s for s in dict.fromkeys(s for s, _ in before) if all((s, k) in after for k in ks)]
    n = poisoned["config"].get("identity", {}).get("mode_settings", {}).get("poison", "?")

    def moved(m0: float, m1: float) -> Cell:
        return Cell((m0, m1), f"{fmt_points(m0)} → {fmt_points(m1)} ({fmt_points(m1 - m0, signed=True)})")

    cols = (Column("system", "system", "left"), *(Column(f"r{k}", f"R@{k} clean → poisoned") for k in ks),
            Column("mrr", "MRR clean → poisoned"))
    body = tuple((Cell(s, s), *(moved(before[(s, k)]["R"], after[(s, k)]["R"]) for k in ks),
                  moved(before[(s, ks[-1])]["mrr"], after[(s, ks[-1])]["mrr"])) for s in systems)
    out = [f"Poison — {poisoned['config']['dataset']}: {n} debris items per group "
           f"({poisoned['config']['items'] - clean['config']['items']} in all), embedder "
           f"{poisoned['config'].get('embedder') or '-'}", "", render_table(Table(cols, body), "md"),
           "memini's poison test (sample + 50 debris per group, then its maintenance dedup) asserts that gold "
           "recall does not drop; it published no figure."]
    return "\n".join(out) + "\n"
