"""Rankings made elsewhere (``results.rankings``) joined with their gold into ``RunResult``s, so that every metric,
table and paired test of a run applies to them unchanged (``memini-bench score``).

The gold comes from TREC qrels (``questions_from_qrels``) or from a suite's loader (``questions_from_dataset``).
``as_result`` checks a ranking against it, each problem one line naming the file:

- a run for another data file: the file records a ``data_sha256`` that is not the SHA-256 of ``-data``'s bytes;
- a run that shares no question with the gold (another data set); with a data set, a run that ranks a question
  the data set does not have (with qrels such a question is left out and counted, as trec_eval and ir_measures
  leave it out: ``Scored.ignored``);
- with a data set (not with qrels, which list only gold documents): a ranked id that is no item of the data set;
  an id of another group than the question's is a leak, refused, or dropped and counted with ``-leaks count``
  (the rule of ``evaluation.hits`` for a live run). An id may be given relative to its question: ``S`` stands for
  the item ``<question id>/S`` when ``S`` itself is no item (LongMemEval's loader names each question's haystack
  sessions so, and its own logs and submissions rank the bare session ids).

A question of the gold the run does not rank is scored as a miss (an empty ranking), as trec_eval's ``-c`` does;
the caller reports how many. Qrels grades are kept (``Question.grades``): nDCG's gains and the ``rel=`` level read
them, the binary metrics count every grade >= 1. Each hit is one item id; a question's ``depth`` is the longest
ranking of the run. With a data set, a hit's tokens are the estimated tokens of its item's content
(``runs.estimate_tokens``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from memini_bench.core.dataset import Dataset, Question
from memini_bench.core.runs import QuestionRun, RunResult, TokenMemo
from memini_bench.errors import BenchError
from memini_bench.results.rankings import Rankings


@dataclass(frozen=True, slots=True)
class Gold:
    """The questions to score (in order), and, with a data set, each item's group and content."""

    dataset: str
    questions: tuple[Question, ...]
    group_of: Mapping[str, str] | None = None
    content_of: Mapping[str, str] | None = None
    data_sha256: str = ""
    #: question ids known to the data set but not scored (excluded, or dropped by the loader): a run may rank them
    skipped: frozenset[str] = frozenset()
    category_labels: Mapping[str, str] | None = None
    #: what the tables state under their heading (N, the protocol, the known-bad list's status)
    caption: str = ""
    #: the loaded data set (None with qrels): its own tables (``evaluation.breakdowns``) apply
    source: Dataset | None = None
    #: the gold is TREC qrels: a question only the run ranks is left out and counted, not refused
    from_qrels: bool = False


@dataclass(frozen=True, slots=True)
class Scored:
    """A run joined with its gold: the ``RunResult``, how many of the gold's questions the run does not rank
    (scored as misses), and the ids of the questions only the run ranks (left out, with qrels)."""

    result: RunResult
    missing: int
    ignored: tuple[str, ...] = ()


def questions_from_qrels(dataset: str, qrels: Mapping[str, Mapping[str, int] | Sequence[str]]) -> Gold:
    """Every question of the qrels, in file order: ``qrels`` maps a question id to its judged documents and grades
    (``results.rankings.read_judgements``; grade 0: judged not relevant) or to its gold ids alone (grade 1 each).
    A question only a run ranks is not one of them (``as_result`` leaves it out and counts it)."""
    questions = []
    for qid, judged in qrels.items():
        grades = dict(judged) if isinstance(judged, Mapping) else dict.fromkeys(judged, 1)
        gold = tuple(d for d, g in grades.items() if g > 0)
        listed = tuple((d, g) for d, g in grades.items() if g != 1)  # grade 1 is the default: not listed
        questions.append(Question(id=qid, query="", gold=gold, grades=listed))
    return Gold(dataset, tuple(questions), from_qrels=True)


def expected_id(gold: Gold) -> str:
    """How the gold's question ids look, for a refusal: its first two ids, quoted (``'conv-26/qa0'``)."""
    ids = [repr(q.id) for q in gold.questions[:2]]
    return " or ".join(ids) if ids else "(no question)"


def questions_from_dataset(ds: Dataset, skipped: Collection[str] = (), caption: str = "") -> Gold:
    """The data set's scored questions, its items' groups and contents, and the SHA-256 of its file."""
    return Gold(ds.name, ds.questions, {i.id: i.group for i in ds.items}, {i.id: i.content for i in ds.items},
                ds.source_sha256, frozenset(skipped) | {q.id for q in ds.excluded}, ds.category_labels, caption, ds)


def as_result(run: Rankings, gold: Gold, *, system: str = "", leaks: str = "error") -> Scored:
    """``run`` joined with ``gold`` (``Scored``; see the module docstring for what is refused)."""
    if gold.data_sha256 and run.data_sha256 and run.data_sha256 != gold.data_sha256:
        raise BenchError(f"{run.path}: was made from a data file with sha256 {run.data_sha256[:12]}..., not "
                         f"-data (sha256 {gold.data_sha256[:12]}...); score it against the data file it ranked")
    by_id = {q.id: q for q in gold.questions}
    if run.ranked and not any(q in by_id for q in run.ranked):
        given = next(iter(run.ranked))
        raise BenchError(f"{run.path}: shares no question with {gold.dataset}: it names {given!r} where "
                         f"{gold.dataset}'s questions are named like {expected_id(gold)}; is it a run over another "
                         "data set?")
    ignored = tuple(q for q in run.ranked if q not in by_id and q not in gold.skipped)
    for qid in () if gold.from_qrels else ignored:
        raise BenchError(f"{run.path}:{run.lines.get(qid, 0)}: question {qid!r} is not among the {len(by_id)} "
                         f"questions of {gold.dataset} (named like {expected_id(gold)}); score a run made over this "
                         "data set")
    tokens = TokenMemo()
    leaked = 0
    runs: list[QuestionRun] = []
    for q in gold.questions:
        ids = run.ranked.get(q.id, ())
        if gold.group_of is not None:
            ids, dropped = _checked(run, q, ids, gold.group_of, leaks)
            leaked += dropped
        hit_tokens = tuple(tokens[gold.content_of[i]] for i in ids) if gold.content_of is not None else ()
        runs.append(QuestionRun(question=q, ranked_ids=tuple((i,) for i in ids), scores=(), tokens=hit_tokens,
                                latency_ms=0.0))
    corpus = sum(tokens[c] for c in gold.content_of.values()) if gold.content_of is not None else 0
    result = RunResult(system=system or run.system, dataset=gold.dataset,
                       depth=max((len(r.ranked_ids) for r in runs), default=0), ingest_ms=0.0, corpus_tokens=corpus,
                       questions=tuple(runs), leaked=leaked)
    return Scored(result, sum(1 for q in gold.questions if q.id not in run.ranked), ignored)


def _checked(run: Rankings, q: Question, ids: tuple[str, ...], group_of: Mapping[str, str],
             leaks: str) -> tuple[tuple[str, ...], int]:
    """``ids`` less the leaked ones (``-leaks count``) and their number; an unknown id or a refused leak raises."""
    kept: list[str] = []
    for i in ids:
        if i not in group_of and f"{q.id}/{i}" in group_of:
            i = f"{q.id}/{i}"  # an id named inside the question's own haystack (LongMemEval's session ids)
        g = group_of.get(i)
        where = f"{run.path}:{run.lines.get(q.id, 0)}: question {q.id!r}"
        if g is None:
            raise BenchError(f"{where} ranks {i!r}, which is no item of the data set; rank the data set's own item "
                             "ids")
        if g != q.group:
            if leaks != "count":
                raise BenchError(f"{where} ranks {i!r} of group {g!r}, not the question's group {q.group!r} (a "
                                 "leak; -leaks count scores without it)")
            continue
        kept.append(i)
    return tuple(kept), len(ids) - len(kept)
