"""Known bad gold: a versioned list per data set of the questions whose retrieval gold is wrong or missing, each
with what is wrong and a public source (``memini_bench/data/known_bad/<dataset>.json``).

``annotate(ds, suite, exclude)`` is applied by ``loaders.load`` to every data set of a suite that has a list, and
never silently: it always adds a note saying how many of the loaded questions the list touches, and whether they
were scored (the default) or excluded (``-exclude known-bad``). Excluded questions move to ``Dataset.excluded``
(their items stay, and every question keeps its place in the holdout split), so N drops by exactly the number of
listed questions the data set holds. A listed question the loader itself skips (LoCoMo's questions with no
evidence id) is counted apart.

A list file: ``{"dataset", "version", "suites": [...], "data_sha256", "about", "entries": [{"question_id",
"problem", "what", "source"[, "suites"]}]}``; ``problem`` is one of ``PROBLEMS``; an entry's ``suites`` narrows it
(LoCoMo: a wrong citation within the right session is wrong gold at turn level only).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cache

from memini_bench.core.dataset import Dataset

#: What can be wrong with a question's gold.
PROBLEMS = ("no-evidence", "dangling-gold", "wrong-gold")
#: ``-exclude`` values ("" = exclude nothing).
EXCLUDES = ("", "known-bad")


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed question; ``suites`` narrows it to some of its list's suites (empty: all of them)."""

    question_id: str
    problem: str
    what: str
    source: str
    suites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class KnownBad:
    """One data set's list."""

    dataset: str
    version: int
    suites: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def label(self) -> str:
        return f"{self.dataset} known-bad list v{self.version}"

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(e.question_id for e in self.entries)

    def for_suite(self, suite: str) -> KnownBad:
        """The entries that apply to ``suite``."""
        return KnownBad(self.dataset, self.version, self.suites,
                        tuple(e for e in self.entries if not e.suites or suite in e.suites))


@cache
def lists() -> tuple[KnownBad, ...]:
    """Every list shipped with the package."""
    from importlib import resources

    out = []
    folder = resources.files("memini_bench.data") / "known_bad"
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".json"):
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        entries = tuple(Entry(e["question_id"], e["problem"], e["what"], e["source"], tuple(e.get("suites", ())))
                        for e in doc["entries"])
        out.append(KnownBad(doc["dataset"], int(doc["version"]), tuple(doc["suites"]), entries))
    return tuple(out)


def for_suite(suite: str) -> KnownBad | None:
    """The list of the data set a suite reads (its entries that apply to that suite), or None."""
    kb = next((kb for kb in lists() if suite in kb.suites), None)
    return None if kb is None else kb.for_suite(suite)


def annotate(ds: Dataset, suite: str, exclude: str = "") -> Dataset:
    """``ds`` with a note on the questions its list touches, and those questions excluded under
    ``exclude == "known-bad"`` (see the module docstring); ``ds`` itself when the suite has no list."""
    kb = for_suite(suite)
    if kb is None:
        return ds
    listed = kb.ids
    touched = [q for q in ds.questions if q.id in listed]
    loaded = {q.id for q in ds.questions} | {q.id for q in ds.excluded}
    absent = sorted(listed - loaded)
    where = (f"{kb.label}: {len(touched)} of the {len(ds.questions)} questions are listed"
             + (f" ({len(absent)} more listed ones are not loaded)" if absent else ""))
    if exclude != "known-bad" or not touched:
        verdict = "excluded (none to drop)" if exclude == "known-bad" else "scored (-exclude known-bad drops them)"
        return ds.with_(notes=ds.notes + (f"{where}; {verdict}",))
    placed = [q if q.position is not None else dataclasses.replace(q, position=i) for i, q in enumerate(ds.questions)]
    kept = tuple(q for q in placed if q.id not in listed)
    dropped = tuple(q for q in placed if q.id in listed)
    note = f"{where}; excluded by -exclude known-bad: {len(ds.questions)} -> {len(kept)} questions"
    return ds.with_(questions=kept, excluded=ds.excluded + dropped, notes=ds.notes + (note,))


def status(ds: Dataset, suite: str) -> str:
    """One line for a table's caption: the list, how many of its questions ``ds`` holds, and whether they were
    excluded; "" when the suite has no list."""
    kb = for_suite(suite)
    if kb is None:
        return ""
    excluded = sum(1 for q in ds.excluded if q.id in kb.ids)
    kept = sum(1 for q in ds.questions if q.id in kb.ids)
    if excluded:
        return f"{kb.label}: {excluded} listed questions excluded (-exclude known-bad)"
    return f"{kb.label}: {kept} listed questions scored, not excluded"
