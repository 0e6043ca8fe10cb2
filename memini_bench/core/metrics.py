"""Metrics as objects: each one a class with one canonical name, its parameters, its formula and citation, and
whether higher is better; the registry ``core.registry.METRICS`` holds them by family name (plugins add theirs
under the ``memini_bench.metrics`` entry-point group; this module reads the registry lazily, the registry never imports
it).

A metric is named ``family[(param=value,...)][@K]``: ``recall_any@5``, ``mrr@10``, ``mrr`` (no cut-off: the whole
recalled depth), ``precision(rel=2)@5``, ``ndcg(judged_only=true)@10``, ``latency_p95``. ``parse`` reads a name
(the old spellings ``R@K``, ``RA@K``, ``Recall@K``, ``RecallAll@K``, ``MRR``, ``nDCG@K``, ``recall_at_k`` ... are
aliases), ``Metric.name`` writes the canonical one, so one spelling serves ``-select``, ``-metrics``, the results
file, the report and the API; an unknown name is a one-line error naming the closest valid one.

For one question: G = the relevant gold ids (grade >= ``rel``; a gold id without a grade has grade 1, so binary
gold is the default; ``Question.grades``), h_0, h_1, ... the ranked hits (a hit is a tuple of item ids; it is
relevant when its ids meet G), K the cut-off (the recalled depth when none). Every per-question value is averaged
over all questions of the run (a question with no gold counts, as a miss). The formulas are on each class
(``formula``, one line, printed by ``memini-bench -list metrics``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.errors import BenchError

#: The trec_eval citation of the classic measures (ir_measures' names in brackets on each class).
TREC_EVAL = "trec_eval (NIST); ir_measures, MacAvaney et al., ECIR 2022"


def _grade(run: QuestionRun, doc: str) -> int:
    """The grade of ``doc`` for the run's question: its listed grade, 1 for an unlisted gold id, else 0."""
    q = run.question
    for d, g in q.grades:
        if d == doc:
            return g
    return 1 if doc in q.gold else 0


def percentile(xs: Sequence[float], p: float) -> float:
    """memini's percentile: sort, take index ``floor(p * (n - 1) / 100)``; 0 for no values."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[int(p * (len(s) - 1) // 100)]


def lme_dcg(relevances: Sequence[float], k: int) -> float:
    """LongMemEval's ``dcg``: ``rel[0] + sum(rel[1:k] / log2(arange(2, n + 1)))`` (the first gain undiscounted)."""
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return rel[0] + sum(r / math.log2(i + 1) for i, r in enumerate(rel) if i >= 1)


def lme_ndcg(relevances: Sequence[float], golds: int, k: int) -> float:
    """LongMemEval's ``ndcg``: ``lme_dcg(rel, k) / lme_dcg(G ones, k)`` (0 when G = 0)."""
    ideal = lme_dcg([1.0] * golds, k)
    return lme_dcg(relevances, k) / ideal if ideal else 0.0


@dataclass(frozen=True)
class Metric:
    """One metric at its parameters. Subclasses set the class attributes and ``per_question`` (or ``value`` for a
    run-level figure such as a latency percentile)."""

    k: int | None = None
    rel: int = 1
    judged_only: bool = False
    #: where a metric named without a cut-off stops reading the ranking (``resolve_cutoff``: the run's largest K);
    #: not part of its name or its identity (None: the whole ranking)
    depth: int | None = field(default=None, compare=False)

    family: ClassVar[str] = ""
    formula: ClassVar[str] = ""
    citation: ClassVar[str] = TREC_EVAL
    higher_is_better: ClassVar[bool] = True
    #: how a value is shown: "fraction" (a percent), "ms", "tokens" or "ratio" (a percent to 3 decimals)
    unit: ClassVar[str] = "fraction"
    #: "required", "optional" (none = the whole recalled depth) or "none"
    cutoff: ClassVar[str] = "required"
    #: the parameters besides the cut-off that apply ("rel", "judged_only")
    params: ClassVar[tuple[str, ...]] = ("rel", "judged_only")
    #: the ir_measures measure it equals ("" when it has none; the property test then uses trec_eval by hand)
    ir_measures: ClassVar[str] = ""
    #: the paired test of two systems on it (``evaluation.significance``): "mcnemar" for a 0/1 value per question,
    #: "bootstrap" for any other per-question value, "" for a run-level figure (a latency percentile, a ratio)
    paired: ClassVar[str] = "bootstrap"

    @property
    def name(self) -> str:
        """The canonical name: ``family[(param=value,...)][@K]`` with only the non-default parameters."""
        parts = []
        if self.rel != 1:
            parts.append(f"rel={self.rel}")
        if self.judged_only:
            parts.append("judged_only=true")
        return self.family + (f"({','.join(parts)})" if parts else "") + (f"@{self.k}" if self.k is not None
                                                                           else "")

    def __str__(self) -> str:
        return self.name

    def at(self, k: int) -> Metric:
        """This metric at cut-off ``k`` (itself when it takes none)."""
        return self if self.cutoff == "none" else replace(self, k=k)

    # -- per question ------------------------------------------------------------------------------------------
    def relevant(self, run: QuestionRun) -> set[str]:
        """G: the gold ids of grade >= ``rel``."""
        return {g for g in run.question.gold if _grade(run, g) >= self.rel}

    def ranking(self, run: QuestionRun) -> Sequence[tuple[str, ...]]:
        """The ranked hits, without the unjudged ones when ``judged_only`` (a judged id: gold or graded)."""
        if not self.judged_only:
            return run.ranked_ids
        judged = set(run.question.gold) | {d for d, _ in run.question.grades}
        return [ids for ids in run.ranked_ids if judged.intersection(ids)]

    @property
    def cut(self) -> int | None:
        """Where the ranking is cut: K, else ``depth`` (None: nowhere)."""
        return self.k if self.k is not None else self.depth

    def top(self, run: QuestionRun) -> Sequence[tuple[str, ...]]:
        ranking = self.ranking(run)
        return ranking if self.cut is None else ranking[:self.cut]

    def per_question(self, run: QuestionRun) -> float:
        raise NotImplementedError

    def value(self, result: RunResult) -> float:
        """The run's figure: the mean of ``per_question`` over every question (0 for none)."""
        values = [self.per_question(r) for r in result.questions]
        return sum(values) / len(values) if values else 0.0


@dataclass(frozen=True)
class RecallAnyAtK(Metric):
    """recall_any@K: 1 when some relevant hit is in the top K. memini's and LongMemEval's Recall@K (``recall_any``
    in LongMemEval's ``src/retrieval/eval_utils.py``); trec_eval's success (ir_measures ``Success@K``)."""

    family: ClassVar[str] = "recall_any"
    paired: ClassVar[str] = "mcnemar"
    formula: ClassVar[str] = "1 if some hit in the top K meets G, else 0; mean over questions"
    ir_measures: ClassVar[str] = "Success"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        return 1.0 if g and any(g.intersection(ids) for ids in self.top(run)) else 0.0


@dataclass(frozen=True)
class Hit(RecallAnyAtK):
    """hit@K: recall_any@K under the name of the papers that print it as "P@K" or "hit rate@K" (MemPalace and
    others); the same arithmetic (ir_measures ``Success@K``)."""

    family: ClassVar[str] = "hit"
    formula: ClassVar[str] = "= recall_any@K: 1 if some hit in the top K meets G, else 0; mean over questions"


@dataclass(frozen=True)
class Success(RecallAnyAtK):
    """success@K: trec_eval's ``success`` (ir_measures ``Success@K``); success@1 is the share of questions whose
    first hit is relevant. The same arithmetic as recall_any@K."""

    family: ClassVar[str] = "success"
    formula: ClassVar[str] = "= recall_any@K (trec_eval success): 1 if a hit in the top K meets G; mean"


@dataclass(frozen=True)
class RecallAllAtK(Metric):
    """recall_all@K: 1 when every relevant gold id is in the top K (LongMemEval's ``recall_all``); ir_measures has
    no such measure (it equals ``R@K == 1``)."""

    family: ClassVar[str] = "recall_all"
    paired: ClassVar[str] = "mcnemar"
    formula: ClassVar[str] = "1 if every id of G is among the ids of the top K hits (G non-empty), else 0; mean"
    citation: ClassVar[str] = "LongMemEval src/retrieval/eval_utils.py evaluate_retrieval (recall_all)"
    params: ClassVar[tuple[str, ...]] = ("rel",)

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        seen = {i for ids in self.top(run) for i in ids}
        return 1.0 if g and g <= seen else 0.0


@dataclass(frozen=True)
class RecallFrac(Metric):
    """recall_frac@K: the fraction of the relevant gold ids found in the top K (trec_eval's recall, ir_measures
    ``R@K``): the "evidence recall" of MemPalace and FluctlightDB."""

    family: ClassVar[str] = "recall_frac"
    formula: ClassVar[str] = "|G ∩ ids of the top K hits| / |G| (0 when G is empty); mean over questions"
    ir_measures: ClassVar[str] = "R"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        seen = {i for ids in self.top(run) for i in ids}
        return len(g & seen) / len(g) if g else 0.0


@dataclass(frozen=True)
class Precision(Metric):
    """precision@K: the relevant hits in the top K over K (trec_eval's P_K, ir_measures ``P@K``: a ranking shorter
    than K still divides by K)."""

    family: ClassVar[str] = "precision"
    formula: ClassVar[str] = "|{r < K: h_r meets G}| / K; mean over questions"
    ir_measures: ClassVar[str] = "P"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        assert self.k is not None
        return sum(1 for ids in self.top(run) if g.intersection(ids)) / self.k


@dataclass(frozen=True)
class MRR(Metric):
    """mrr@K: the reciprocal rank of the first relevant hit within K (0 when none); ``mrr`` without a cut-off is
    taken at the recalled depth (memini's MRR). trec_eval's recip_rank, ir_measures ``RR@K``."""

    family: ClassVar[str] = "mrr"
    formula: ClassVar[str] = "1 / (r + 1) for the first r < K with h_r meeting G, else 0; mean over questions"
    cutoff: ClassVar[str] = "optional"
    params: ClassVar[tuple[str, ...]] = ("rel",)
    ir_measures: ClassVar[str] = "RR"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        return next((1.0 / (r + 1) for r, ids in enumerate(self.top(run)) if g.intersection(ids)), 0.0)


@dataclass(frozen=True)
class NDCG(Metric):
    """ndcg@K: DCG@K / IDCG@K with the gold grades as gains (binary gold: every gain 1), Järvelin and Kekäläinen
    (2002) as trec_eval's ndcg_cut computes it (ir_measures ``nDCG@K``): a hit gains the largest grade among the
    gold ids it brings that no earlier hit brought (so a repeated id gains once); IDCG sorts G's grades."""

    family: ClassVar[str] = "ndcg"
    formula: ClassVar[str] = ("sum_{r<K} gain(h_r) / log2(r + 2) over the same sum of G's grades sorted "
                              "descending (0 when G is empty)")
    cutoff: ClassVar[str] = "optional"
    params: ClassVar[tuple[str, ...]] = ("judged_only",)
    ir_measures: ClassVar[str] = "nDCG"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        if not g:
            return 0.0
        credited: set[str] = set()
        dcg = 0.0
        for r, ids in enumerate(self.top(run)):
            new = (g - credited).intersection(ids)
            if new:
                credited |= new
                dcg += max(_grade(run, d) for d in new) / math.log2(r + 2)
        grades = sorted((_grade(run, d) for d in g), reverse=True)
        depth = len(grades) if self.cut is None else min(self.cut, len(grades))
        return dcg / sum(grades[r] / math.log2(r + 2) for r in range(depth))


@dataclass(frozen=True)
class NDCGLongMemEval(Metric):
    """ndcg_lme@K: LongMemEval's own nDCG (``src/retrieval/eval_utils.py`` ``ndcg``): binary gains per ranked hit
    (a hit that meets G gains 1, a repeated one again), the first rank undiscounted and rank i >= 1 discounted by
    log2(i + 1); the ideal is |G| ones. Not trec_eval's nDCG (ranks 0 and 1 weigh the same here)."""

    family: ClassVar[str] = "ndcg_lme"
    formula: ClassVar[str] = "(rel_0 + sum_{1<=i<K} rel_i / log2(i + 1)) / the same of |G| ones (0 when G is empty)"
    citation: ClassVar[str] = "LongMemEval (Wu et al., ICLR 2025) src/retrieval/eval_utils.py ndcg"
    params: ClassVar[tuple[str, ...]] = ()

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        assert self.k is not None
        return lme_ndcg([1.0 if g.intersection(ids) else 0.0 for ids in self.ranking(run)], len(g), self.k)


@dataclass(frozen=True)
class RPrecision(Metric):
    """r_precision: precision at R = |G| (trec_eval's Rprec, ir_measures ``Rprec``)."""

    family: ClassVar[str] = "r_precision"
    formula: ClassVar[str] = "|{r < |G|: h_r meets G}| / |G| (0 when G is empty); mean over questions"
    cutoff: ClassVar[str] = "none"
    ir_measures: ClassVar[str] = "Rprec"

    def per_question(self, run: QuestionRun) -> float:
        g = self.relevant(run)
        if not g:
            return 0.0
        return sum(1 for ids in self.ranking(run)[:len(g)] if g.intersection(ids)) / len(g)


@dataclass(frozen=True)
class Latency(Metric):
    """latency_pP: the P-th percentile of the per-question recall latency (ms), memini's floor-index percentile
    ``sorted(xs)[floor(P * (n - 1) / 100)]``; written ``latency_p50``, ``latency_p95``."""

    p: int = 50

    family: ClassVar[str] = "latency"
    paired: ClassVar[str] = ""
    formula: ClassVar[str] = "sorted(latencies)[floor(P * (n - 1) / 100)] in ms (memini's percentile)"
    citation: ClassVar[str] = "memini's benchmark percentile"
    higher_is_better: ClassVar[bool] = False
    unit: ClassVar[str] = "ms"
    cutoff: ClassVar[str] = "none"
    params: ClassVar[tuple[str, ...]] = ()

    @property
    def name(self) -> str:
        return f"latency_p{self.p}"

    def value(self, result: RunResult) -> float:
        return percentile([r.latency_ms for r in result.questions], self.p)


@dataclass(frozen=True)
class TokensInjected(Metric):
    """tokens_injected@K: the mean estimated tokens ((UTF-8 bytes + 3) // 4, memini's estimate) of the top K hits:
    what a reader would be given."""

    family: ClassVar[str] = "tokens_injected"
    formula: ClassVar[str] = "sum of the estimated tokens of the top min(K, n) hits; mean over questions"
    citation: ClassVar[str] = "memini's token estimate"
    higher_is_better: ClassVar[bool] = False
    unit: ClassVar[str] = "tokens"
    params: ClassVar[tuple[str, ...]] = ()

    def per_question(self, run: QuestionRun) -> float:
        return float(sum(run.tokens[:self.cut]))


@dataclass(frozen=True)
class TokenEfficiency(TokensInjected):
    """token_efficiency@K: tokens_injected@K over the estimated tokens of the whole corpus (0 for an empty one)."""

    family: ClassVar[str] = "token_efficiency"
    paired: ClassVar[str] = ""
    formula: ClassVar[str] = "tokens_injected@K / the corpus's estimated tokens (0 for an empty corpus)"
    unit: ClassVar[str] = "ratio"

    def value(self, result: RunResult) -> float:
        injected = TokensInjected(k=self.k).value(result)
        return injected / result.corpus_tokens if result.corpus_tokens else 0.0


#: The old spellings (``-select``, the report, the tables, the results file's fields) as (family, K given?): an
#: alias with ``@K`` takes the K written; one without takes the caller's ``k`` (a results row's own).
ALIASES: dict[str, str] = {
    "R": "recall_any", "Recall": "recall_any", "recall": "recall_any", "recall_at_k": "recall_any",
    "RA": "recall_all", "RecallAll": "recall_all", "recall_all_at_k": "recall_all",
    "MRR": "mrr", "RR": "mrr", "nDCG": "ndcg", "NDCG": "ndcg", "ndcg_at_k": "ndcg",
    "P": "precision", "Rprec": "r_precision", "Success": "success",
    "tokens_injected_mean": "tokens_injected", "inj tok": "tokens_injected", "tok-eff": "token_efficiency",
}
#: Old spellings of an optional-cut-off metric that meant the row's K (the report's and the file's ``ndcg_at_k``).
_ROW_K_ALIASES = frozenset({"nDCG", "NDCG", "ndcg_at_k"})
#: Old names of the latency percentiles.
_LATENCY_ALIASES = {"p50_ms": 50, "p95_ms": 95, "p50": 50, "p95": 95, "p50 ms": 50, "p50 (ms)": 50,
                    "p95 (ms)": 95}
_NAME = re.compile(r"^(?P<base>[^()@]+?)\s*(?:\((?P<params>[^()]*)\))?\s*(?:@\s*(?P<k>[^@()]*))?$")
_LATENCY = re.compile(r"^latency_p(\d{1,2}(?:\.\d+)?)$")
_TRUE = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def resolve_cutoff(metric: Metric, k: int, ks: Sequence[int]) -> Metric:
    """The one depth rule of a metric written without ``@K``, in a run's table at K and in ``score`` alike: one
    that needs a cut-off takes the row's K (``recall_frac`` at K is ``recall_frac@K``); one whose cut-off is
    optional (``mrr``, ``ndcg``) keeps its name and is taken at the run's largest K (``depth = max(ks)``: ``mrr``
    is MRR@max K, however deep the ranking it reads); one with its own ``@K`` or none at all is as written."""
    if metric.k is not None or metric.cutoff == "none":
        return metric
    if metric.cutoff == "required":
        return metric.at(k)
    return replace(metric, depth=max(ks))


def defaults(k: int, ks: Sequence[int] = ()) -> tuple[Metric, ...]:
    """The metrics of every row of a run at K, in the order the results file lists them: recall_any@K,
    recall_all@K, mrr (at the run's largest K: ``resolve_cutoff``), ndcg@K, latency_p50, latency_p95,
    tokens_injected@K, token_efficiency@K."""
    return (RecallAnyAtK(k=k), RecallAllAtK(k=k), resolve_cutoff(MRR(), k, ks or (k,)), NDCG(k=k), Latency(p=50),
            Latency(p=95), TokensInjected(k=k), TokenEfficiency(k=k))


def row_metrics(k: int, ks: Sequence[int], extra: Sequence[Metric] = ()) -> tuple[Metric, ...]:
    """Every metric of a run's row at K: ``defaults`` and then ``extra`` (``-metrics``) by ``resolve_cutoff``,
    each once. The scorer, the run table and the report iterate this list."""
    return tuple(dict.fromkeys([*defaults(k, ks), *(resolve_cutoff(m, k, ks) for m in extra)]))


def category_metrics(k: int, ks: Sequence[int], extra: Sequence[Metric] = ()) -> tuple[Metric, ...]:
    """Every metric of each category of a row at K: recall_any@K, recall_all@K and the fractions of ``extra``."""
    asked = [resolve_cutoff(m, k, ks) for m in extra if m.unit == "fraction"]
    return tuple(dict.fromkeys([RecallAnyAtK(k=k), RecallAllAtK(k=k), *asked]))


def paired_metrics(ks: Sequence[int], extra: Sequence[Metric] = ()) -> tuple[Metric, ...]:
    """The metrics a run's paired tests cover, in their order: recall_any@K per K, mrr, ndcg@K per K, then each
    metric of ``extra`` that has a per-question value (``paired``), at each K where it takes the row's K."""
    ks = sorted(set(ks))
    out: list[Metric] = [RecallAnyAtK(k=k) for k in ks] + [resolve_cutoff(MRR(), ks[-1], ks)]
    out += [NDCG(k=k) for k in ks]
    for m in extra:
        if m.paired:
            out += [m.at(k) for k in ks] if m.k is None and m.cutoff == "required" else [resolve_cutoff(m, ks[-1], ks)]
    return tuple(dict.fromkeys(out))


def column_key(name: str, k: int) -> str:
    """A metric's name with the row's own cut-off written ``@K`` (``recall_any@5`` in a row at K = 5:
    ``recall_any@K``), for a table whose rows are (system, K); any other name as it is (``mrr``, ``mrr@10``)."""
    suffix = f"@{k}"
    return name[:-len(suffix)] + "@K" if name.endswith(suffix) else name


def at_k(key: str, k: int) -> str:
    """``column_key`` back: the metric name of the column ``key`` in a row at K."""
    return key[:-2] + f"@{k}" if key.endswith("@K") else key


def _families() -> dict[str, type[Metric]]:
    from memini_bench.core.registry import METRICS

    return {e.name: METRICS.get(e.name) for e in METRICS.entries()}


def unknown(text: str, flag: str) -> BenchError:
    """The one-line error of an unknown metric name, naming the closest valid spelling (the name's own ``@K`` and
    parameters kept)."""
    m = _NAME.match(text.strip())
    base = m["base"].strip() if m else text
    rest = text.strip()[len(base):] if m else ""
    names = list(_families()) + list(ALIASES) + ["latency_p50", "latency_p95"]
    close = difflib.get_close_matches(base, names, n=1, cutoff=0.5) or \
        difflib.get_close_matches(base.lower(), names, n=1, cutoff=0.0)
    if close:
        fam = ALIASES.get(close[0], close[0])
        cls = _families().get(fam)
        if cls is not None and cls.cutoff == "required" and "@" not in rest:
            rest += "@10"
        elif cls is not None and cls.cutoff == "none" or fam.startswith("latency_p"):
            rest = ""
    hint = f"; did you mean {close[0] if close[0] not in ALIASES else ALIASES[close[0]]}{rest}?" if close else ""
    return BenchError(f"{flag} {text!r}: unknown metric{hint} (memini-bench -list metrics lists every one)")


def parse(text: str, k: int | None = None, *, flag: str = "-metrics", open_cutoff: bool = False) -> Metric:
    """The metric a name stands for (canonical or an old spelling); ``k`` is the cut-off of a name written without
    ``@K`` where the metric needs one (a results row's K); with ``open_cutoff`` such a name is left without one
    (``k`` None: each row's K, for ``-metrics recall_frac``). An unknown name, a bad parameter or a missing cut-off
    is a one-line BenchError naming ``flag`` and the fix."""
    text = text.strip()
    if text in _LATENCY_ALIASES:
        return Latency(p=_LATENCY_ALIASES[text])
    m = _NAME.match(text)
    if not m:
        raise unknown(text, flag)
    base, params, cut = m["base"].strip(), m["params"], m["k"]
    if latency := _LATENCY.match(base):
        if cut is not None or params is not None:
            raise BenchError(f"{flag} {text!r}: a latency percentile takes no cut-off; write {base}")
        p = float(latency[1])
        return Latency(p=int(p) if p.is_integer() else p)  # type: ignore[arg-type]
    families = _families()
    family = base if base in families else ALIASES.get(base) or (base.lower() if base.lower() in families else None)
    if family is None:
        raise unknown(text, flag)
    cls = families[family]
    kwargs: dict[str, object] = {}
    if params:
        for part in params.split(","):
            key, eq, value = (s.strip() for s in part.partition("="))
            if key not in cls.params or not eq:
                allowed = ", ".join(f"{p}=..." for p in cls.params) or "none"
                raise BenchError(f"{flag} {text!r}: {family} takes no parameter {key!r} (parameters: {allowed})")
            if key == "rel":
                if not value.isdigit():
                    raise BenchError(f"{flag} {text!r}: rel is a relevance grade, a whole number (rel=2)")
                kwargs["rel"] = int(value)
            else:
                if value.lower() not in _TRUE:
                    raise BenchError(f"{flag} {text!r}: judged_only is true or false")
                kwargs["judged_only"] = _TRUE[value.lower()]
    if cut is not None:
        if cls.cutoff == "none":
            raise BenchError(f"{flag} {text!r}: {family} takes no cut-off; write {family}")
        if not cut.strip().isdigit() or int(cut) < 1:
            raise BenchError(f"{flag} {text!r}: the cut-off is a whole number >= 1 ({family}@10)")
        kwargs["k"] = int(cut)
    elif cls.cutoff == "required" or base in _ROW_K_ALIASES:
        if k is None and not open_cutoff:
            raise BenchError(f"{flag} {text!r}: {family} needs a cut-off; write {family}@K (e.g. {family}@10)")
        kwargs["k"] = k
    return cls(**kwargs)  # type: ignore[arg-type]


def canonical(text: str, k: int | None = None, *, flag: str = "-metrics") -> str:
    """The canonical spelling of a metric name (``RA@5`` -> ``recall_all@5``)."""
    return parse(text, k, flag=flag).name


def normalize(text: str) -> str:
    """The registered name of a metric written in any spelling, as read back from a file (a significance row of an
    older file says ``R@5``, ``MRR``, ``nDCG@5``: ``recall_any@5``, ``mrr``, ``ndcg@5``); a name that is no metric,
    or lacks the cut-off its metric needs, is returned as it is."""
    try:
        return parse(text).name
    except BenchError:
        return text


def parse_list(text: str, *, flag: str = "-metrics") -> tuple[Metric, ...]:
    """A comma-separated list of metric names (commas inside parentheses belong to the parameters); a name
    without the cut-off its metric needs is taken at each K of the run (``recall_frac`` = recall_frac@K)."""
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    names = [p.strip() for p in parts if p.strip()]
    if not names:
        raise BenchError(f"{flag} {text!r}: give metric names, e.g. {flag} recall_frac@5,mrr@10")
    metrics = tuple(parse(n, flag=flag, open_cutoff=True) for n in names)
    return tuple(dict.fromkeys(metrics))


def check_cutoff(measure: Metric, ks: tuple[int, ...], *, flag: str) -> None:
    """Refuse a metric whose cut-off is deeper than the run's recall depth (its largest K): a run recalls once at
    max K, so recall_frac@50 of a ``-k 5`` run would be computed from 5 results and print as an @50 figure. The one
    check of ``-metrics`` and ``-select`` (which also wants the K in ``-k``)."""
    if measure.k is not None and ks and measure.k > max(ks):
        raise BenchError(f"{flag} {measure.name}: its cut-off {measure.k} is deeper than this run recalls (the "
                         f"largest of -k {','.join(map(str, ks))}); add {measure.k} to -k, or ask for it at a K "
                         "of -k")


def listing() -> list[dict[str, str]]:
    """One row per metric family: its canonical spelling, parameters, whether higher is better, its formula and
    citation (``memini-bench -list metrics``)."""
    rows = []
    for fam, cls in _families().items():
        example = {"none": fam, "optional": f"{fam}[@K]", "required": f"{fam}@K"}[cls.cutoff]
        if cls is Latency:
            example = "latency_pP"
        aliases = sorted(a for a, f in ALIASES.items() if f == fam)
        if cls is Latency:
            aliases = sorted(_LATENCY_ALIASES)
        rows.append({"name": example, "params": ", ".join(cls.params), "better": "higher" if cls.higher_is_better
                     else "lower", "formula": cls.formula, "ir_measures": cls.ir_measures or "-",
                     "citation": cls.citation, "aliases": ", ".join(aliases)})
    return rows


def listing_text() -> str:
    """``listing`` as text, one metric a line with its formula (``memini-bench -list metrics``)."""
    lines = ["metrics (name[(param=value,...)][@K]; the old spellings in brackets still read):"]
    for r in listing():
        params = f" params: {r['params']};" if r["params"] else ""
        also = f" [{r['aliases']}]" if r["aliases"] else ""
        lines.append(f"  {r['name']}{also}: {r['formula']} ({r['better']} is better;{params} "
                     f"ir_measures {r['ir_measures']})")
    return "\n".join(lines) + "\n"
