"""The report's inputs: results files, sweep summaries, VetoBench files and per-question runs.

A PATH is a results file (``*.json``), a per-question file (``*.jsonl`` or ``*.jsonl.gz``, written by
``-per-question``) or a folder. A folder contributes its ``*.json`` files and, of each sub-folder at any depth,
its ``summary.json`` (``summary.json.gz``) when it has one (a ``-sweep`` output) or else its own results files;
plus the per-question records beside each results file (``<stem>.jsonl``, or the compact ``<stem>.jsonl.gz``
committed in ``results/``). A per-question file pairs with a results file by stem (``X.jsonl`` or ``X.jsonl.gz`` beside
``X.json``) or, when given on its own, with the one results file whose systems include every system of the
per-question file and whose question count equals its number of questions; none or several is an error naming
them. A QA results file (``-qa``, a study file of mode ``qa``) is shown on its own page, its loss-attribution table
(``results.loss_table``). Files of a kind the site does not show (rerank tables, gates, other studies, the quality
scoreboard) are listed as skipped, never silently dropped.

What the report shows is checked first (``check_scores``): every rate (recall, recall_all, MRR, nDCG and each
category's) a finite number in [0, 1]; latencies, ingest time, tokens and token efficiency finite and
non-negative, p50 at most p95; K a positive integer; question counts non-negative integers, one count per system
over its K rows, and the categories' counts summing to it. A file that fails is one line naming it, the row and
the field.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.core.runs import RunResult
from memini_bench.errors import BenchError
from memini_bench.loaders.corrections import KINDS as CORRECTION_KINDS
from memini_bench.results.per_question import read_per_question
from memini_bench.results.read import load, sweep_summary
from memini_bench.results.schema import CompareResults, ResultsFile, StudyResults, VetoResults, VetoScaleResults


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

    def has_records(self, system: str) -> bool:
        """Whether this file's per-question records hold ``system``'s run (``eligible``)."""
        return any(r.system == system for r in self.runs)


def eligible(source: Source, system: str) -> bool:
    """Whether ``system``'s row of ``source`` may lead a board or stand for its system there: only a run with
    per-question records can be tested against the others (paired tests need each question's outcome). Among the
    files holding one system's run under the same settings, one with records is preferred to a newer one without
    (``preference``); a row without records is never a board's leader."""
    return source.has_records(system)


def preference(source: Source, system: str, newness: object) -> tuple[bool, object]:
    """The sort key that picks which of several files stands for one system's run on a board: a file with that
    system's per-question records first (``eligible``), then the newer (``newness``: the board's own key)."""
    return eligible(source, system), newness


@dataclass
class Inputs:
    sources: list[Source] = field(default_factory=list)
    sweeps: list[ResultsFile] = field(default_factory=list)
    veto: list[ResultsFile] = field(default_factory=list)
    qa: list[ResultsFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, kind)


def _expand(paths: list[str]) -> tuple[list[Path], list[Path]]:
    """(results files, per-question files) named by ``paths``, in order, each once."""
    jsons: list[Path] = []
    jsonls: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            found = _folder(p)
            jsons += found
            jsonls += [q for j in found for q in _records_beside(j)]
        elif p.suffix == ".jsonl" or p.name.endswith(".jsonl.gz"):
            jsonls.append(p)
        elif p.is_file():
            jsons.append(p)
        else:
            raise BenchError(f"{p}: no such file or folder; give results files (.json), per-question files "
                             "(.jsonl) or folders of them")
    return list(dict.fromkeys(jsons)), list(dict.fromkeys(jsonls))


def _folder(folder: Path) -> list[Path]:
    """A folder's results files: its ``*.json``, and of each sub-folder its ``summary.json`` (or the committed
    ``summary.json.gz``) when it has one (a ``-sweep`` output: the cells are that summary's, and the committed
    results keep no cell files) or else its own results files, at any depth."""
    out = sorted(folder.glob("*.json"))
    for sub in sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith(".")):
        summary = sweep_summary(sub)
        out += [summary] if summary else _folder(sub)
    return out


def _records_beside(results: Path) -> list[Path]:
    """The per-question file beside a results file: ``<stem>.jsonl``, else the compact ``<stem>.jsonl.gz``."""
    for q in (results.with_suffix(".jsonl"), results.with_suffix(".jsonl.gz")):
        if q.is_file():
            return [q]
    return []


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
            check_scores(doc, path)
            if "corrections" in doc.raw:  # a -suite corrections run: scored by kind (report.corrections)
                check_corrections(doc.raw["corrections"], path)
            out.sources.append(Source(len(out.sources), doc))
        elif isinstance(doc, VetoResults | VetoScaleResults):
            out.veto.append(doc)
        elif "tune" in doc.raw and "sweep" in doc.config:
            out.sweeps.append(doc)
        elif isinstance(doc, StudyResults) and doc.config.get("mode") == "qa":
            check_losses(doc.raw.get("losses"), path)
            out.qa.append(doc)
        else:
            out.skipped.append((str(path), _kind(doc)))
    if not out.sources and not out.sweeps and not out.veto and not out.qa:
        raise BenchError(f"report: no leaderboard results among {', '.join(paths)}; give files written by a "
                         "normal run (memini-bench -suite ...) or by memini-bench qa")
    for path in jsonls:
        _pair(out, path)
    return out


@functools.cache
def _unit(name: str) -> str:
    """The unit of a metric a row holds (``core.metrics``: fraction, ms, tokens, ratio); "" for a name the registry
    does not know (a plugin's metric where it is not installed: only its finiteness is checked)."""
    from memini_bench.core.metrics import parse

    try:
        return parse(name).unit
    except BenchError:
        return ""


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _score_problem(s) -> str:
    """Why one score row cannot be shown ("" when it can): the module docstring's rules."""
    if not (_count(s.k) and s.k > 0):
        return f"k {s.k!r} is not a positive integer"
    if not _count(s.questions):
        return f"questions {s.questions!r} is not a non-negative integer"
    for name, value in [*s.scores.items(), ("ingest_ms", s.ingest_ms)]:
        unit = _unit(name) if name != "ingest_ms" else "ms"
        if unit == "fraction" and not (_number(value) and 0.0 <= value <= 1.0):
            return f"{name} {value!r} is not a rate in [0, 1]"
        if unit != "fraction" and not (_number(value) and (value >= 0.0 or not unit)):
            return f"{name} {value!r} is not a {'non-negative ' if unit else ''}number"
    p50, p95 = s.scores.get("latency_p50"), s.scores.get("latency_p95")
    if p50 is not None and p95 is not None and p50 > p95:
        return f"latency_p50 {p50!r} is above latency_p95 {p95!r}"
    for cat, values in s.categories.items():
        for name, value in values.items():
            if _unit(name) == "fraction" and not (_number(value) and 0.0 <= value <= 1.0):
                return f"category {cat!r}: {name} {value!r} is not a rate in [0, 1]"
    counts = s.per_category_questions
    if counts and not all(_count(n) for n in counts.values()):
        return "per_category_questions holds a count that is not a non-negative integer"
    if counts and sum(counts.values()) != s.questions:
        return f"its categories count {sum(counts.values())} questions, not its {s.questions}"
    return ""


def check_scores(doc: CompareResults, path: Path) -> None:
    """Refuse a results file whose numbers the report cannot show (module docstring), in one line naming it."""
    questions: dict[str, int] = {}
    for s in doc.scores:
        why = _score_problem(s)
        if not why and questions.setdefault(s.system, s.questions) != s.questions:
            why = f"{s.questions} questions, where its other K rows have {questions[s.system]}"
        if why:
            raise BenchError(f"{path}: system {s.system!r} at k {s.k!r}: {why}; the file was edited or is damaged: "
                             "rerun the run that wrote it")


def check_losses(block: object, path: Path) -> None:
    """Refuse a QA file's ``losses`` block the QA page cannot show: ``{arm: {"wrong": n, "buckets": {bucket: n},
    "by_category": {category: {bucket: n}}}}`` with non-negative integer counts (absent: no table)."""
    if block is None:
        return
    why = "" if isinstance(block, dict) else "is not an object"
    for arm, a in block.items() if not why else ():
        counts = [a.get("buckets"), *(a.get("by_category") or {}).values()] if isinstance(a, dict) else [None]
        if not (isinstance(a, dict) and _count(a.get("wrong")) and isinstance(a.get("by_category", {}), dict)
                and all(isinstance(c, dict) and all(_count(n) for n in c.values()) for c in counts)):
            why = f"arm {arm!r} is not {{wrong, buckets, by_category}} of non-negative integer counts"
            break
    if why:
        raise BenchError(f"{path}: losses {why}; the file was edited or is damaged: rerun the -qa run that wrote it")


#: The fields (and types) of one paired test of a corrections block.
_SIG_FIELDS = {"system_a": str, "system_b": str, "metric": str, "questions": int, "mean_a": float, "mean_b": float,
               "delta": float, "ci_low": float, "ci_high": float, "p_adjusted": float, "significant": bool}


def _rate_of(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and \
        0.0 <= value <= 1.0


def _corrections_problem(block: object) -> str:
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
                if not (isinstance(row, dict) and row.get("kind") in CORRECTION_KINDS
                        and isinstance(row.get("metric"), str)):
                    return (f"{where}: expected {{kind: one of {', '.join(CORRECTION_KINDS)}, metric, mean, ci_low, "
                            "ci_high, questions}")
                for name in ("mean", "ci_low", "ci_high"):
                    if not _rate_of(row.get(name)):
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


def check_corrections(block: object, path: Path) -> None:
    """Refuse a ``-suite corrections`` file's ``corrections`` block the corrections page (``report.corrections``)
    cannot show: ``{scores: {K: {system: [{kind, metric, mean, ci_low, ci_high, questions}]}}, writes: {system:
    {counts}}, significance: [paired tests]}`` with rates in [0, 1] and non-negative integer counts; one line
    naming the file and the place."""
    why = _corrections_problem(block)
    if why:
        raise BenchError(f"{path}: {why}; the file was edited or is damaged: rerun the run that wrote it")


def _pair(out: Inputs, path: Path) -> None:
    by_stem = [s for s in out.sources if path in (s.results.path.with_suffix(".jsonl"),
                                                  s.results.path.with_suffix(".jsonl.gz"))]
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
