"""The report's inputs: results files, sweep summaries, VetoBench files and per-question runs.

A PATH is a results file (``*.json``), a per-question file (``*.jsonl``, written by ``-per-question``) or a folder.
A folder contributes its ``*.json`` files and the ``summary.json`` of each sub-folder (a ``-sweep`` output), plus
the ``<stem>.jsonl`` beside each results file. A per-question file pairs with a results file by stem (``X.jsonl``
beside ``X.json``) or, when given on its own, with the one results file whose systems include every system of the
per-question file and whose question count equals its number of questions; none or several is an error naming
them. Files of a kind the site does not show (rerank tables, gates, studies, the quality scoreboard) are listed
as skipped, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.core.runs import RunResult
from memini_bench.errors import BenchError
from memini_bench.results.per_question import read_per_question
from memini_bench.results.read import load
from memini_bench.results.schema import CompareResults, ResultsFile, VetoResults, VetoScaleResults


@dataclass
class Source:
    """One leaderboard results file and, when paired, its per-question runs (one RunResult per system)."""

    index: int
    results: CompareResults
    runs: list[RunResult] = field(default_factory=list)
    per_question: Path | None = None

    @property
    def name(self) -> str:
        return self.results.path.name

    @property
    def dataset(self) -> str:
        return self.results.dataset


@dataclass
class Inputs:
    sources: list[Source] = field(default_factory=list)
    sweeps: list[ResultsFile] = field(default_factory=list)
    veto: list[ResultsFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind)


def _expand(paths: list[str]) -> tuple[list[Path], list[Path]]:
    """(results files, per-question files) named by ``paths``, in order, each once."""
    jsons: list[Path] = []
    jsonls: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            jsons += sorted(p.glob("*.json"))
            jsons += sorted(s for s in p.glob("*/summary.json"))
            jsonls += [q for q in (j.with_suffix(".jsonl") for j in sorted(p.glob("*.json"))) if q.is_file()]
        elif p.suffix == ".jsonl":
            jsonls.append(p)
        elif p.is_file():
            jsons.append(p)
        else:
            raise BenchError(f"{p}: no such file or folder; give results files (.json), per-question files "
                             "(.jsonl) or folders of them")
    return list(dict.fromkeys(jsons)), list(dict.fromkeys(jsonls))


def _kind(doc: ResultsFile) -> str:
    return type(doc).__name__.removesuffix("Results").lower() or "generic"


def collect(paths: list[str]) -> Inputs:
    """Every input of ``paths`` loaded and paired (see the module docstring); BenchError on a bad file."""
    if not paths:
        raise BenchError("report: give at least one results file or folder (e.g. results/)")
    jsons, jsonls = _expand(paths)
    out = Inputs()
    for path in jsons:
        doc = load(path)
        if isinstance(doc, CompareResults):
            out.sources.append(Source(len(out.sources), doc))
        elif isinstance(doc, VetoResults | VetoScaleResults):
            out.veto.append(doc)
        elif "tune" in doc.raw and "sweep" in doc.config:
            out.sweeps.append(doc)
        else:
            out.skipped.append((str(path), _kind(doc)))
    if not out.sources and not out.sweeps and not out.veto:
        raise BenchError(f"report: no leaderboard results among {', '.join(paths)}; give files written by a "
                         "normal run (memini-bench -suite ...)")
    for path in jsonls:
        _pair(out, path)
    return out


def _pair(out: Inputs, path: Path) -> None:
    by_stem = [s for s in out.sources if s.results.path.with_suffix(".jsonl") == path]
    if not by_stem and _is_rerank_rows(path):
        out.skipped.append((str(path), "rerank per-question"))
        return
    runs = read_per_question(path)
    systems = {r.system for r in runs}
    ids = {q.question.id for r in runs for q in r.questions}
    candidates = by_stem or [s for s in out.sources if systems <= set(s.results.systems)
                             and all(sc.questions == len(ids) for sc in s.results.scores)]
    if len(candidates) != 1:
        names = ", ".join(s.name for s in candidates) or "none"
        raise BenchError(f"{path}: matches {len(candidates)} results files ({names}) by systems and question "
                         f"count; put it beside its results file as <stem>.jsonl")
    source = candidates[0]
    if source.runs:
        raise BenchError(f"{path}: {source.name} already has the per-question file {source.per_question}; "
                         "give one per results file")
    missing = systems - set(source.results.systems)
    if missing:
        raise BenchError(f"{path}: systems {', '.join(sorted(missing))} are not in {source.name}; is it the "
                         "per-question file of another run?")
    source.runs, source.per_question = runs, path


def _is_rerank_rows(path: Path) -> bool:
    """``-rerank``'s per-question rows (``ranks`` per variant, no ``system``) beside a rerank results file."""
    import orjson

    from memini_bench.core.inputs import is_regular

    if not is_regular(path):
        return False  # read_per_question refuses it in one line, never blocking on a FIFO
    try:
        with open(path, "rb") as fh:
            first = orjson.loads(fh.readline() or b"{}")
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(first, dict) and "ranks" in first and "system" not in first
