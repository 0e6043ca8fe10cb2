"""LongMemEval's own retrieval metrics for a turn-level run, as ``src/retrieval/eval_utils.py`` computes them.

For one question, ``rel_i`` = 1 when the i-th ranked turn (0-based) is a gold (``has_answer``) turn, G = the number
of gold turns, and LongMemEval's DCG (``dcg``: the first gain undiscounted, then ``rel_i / log2(i + 1)`` for i >= 1)::

    DCG@k  = rel_0 + sum_{1 <= i < k} rel_i / log2(i + 1)
    nDCG@k = DCG@k / IDCG@k, IDCG@k = DCG@k of G ones followed by zeros     (0 when G = 0)
    recall_any@k = 1 if some gold turn is in the top k;  recall_all@k = 1 if every gold turn is

Session scores from the turn ranking (``evaluate_retrieval_turn2session``): each turn stands for its session, except
that LongMemEval renames the non-``has_answer`` turns of an answer session (``answer_x`` -> ``noans_x``), so a
session is credited only through its gold turns and those turns count apart from their session's other turns.
The cut-off grows from k until the top turns span k distinct (renamed) sessions or the corpus ends (``effective_k``),
then recall_any, recall_all (every gold session has a gold turn in the top effective_k) and nDCG@effective_k (the
same DCG on the turns, relevant = gold) are taken there.

LongMemEval ranks the whole corpus; a run recalls ``depth`` (= max K) turns. A question whose ``effective_k`` runs
past the recalled turns while its haystack holds more is scored on the turns it has (a lower bound) and counted as
``truncated``; K values above the depth are not reported. LongMemEval reports k in ``LME_KS``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memini_bench.core.dataset import Dataset
from memini_bench.core.metrics import lme_ndcg
from memini_bench.core.runs import QuestionRun, RunResult
from memini_bench.core.table import Cell, Column, Table
from memini_bench.core.table import render as render_table
from memini_bench.loaders.longmemeval_turns import SESSIONS_FROM_TURNS

LME_KS = (1, 3, 5, 10, 30, 50)


def _relevances(run: QuestionRun) -> list[float]:
    gold = set(run.question.gold)
    return [1.0 if gold.intersection(ids) else 0.0 for ids in run.ranked_ids]


def turn_scores(run: QuestionRun, k: int) -> tuple[float, float, float]:
    """(recall_any, recall_all, nDCG) at k on the turns."""
    gold = set(run.question.gold)
    top = {i for ids in run.ranked_ids[:k] for i in ids}
    rel = _relevances(run)
    return (float(bool(gold & top)), float(bool(gold) and gold <= top), lme_ndcg(rel, len(gold), k))


def session_scores(run: QuestionRun, k: int, session_of: dict[str, str], corpus: int) -> tuple[float, float, float,
                                                                                                bool]:
    """(recall_any, recall_all, nDCG, truncated) at k sessions from the turn ranking (module docstring)."""
    gold = set(run.question.gold)
    rel = _relevances(run)
    keys = [(session_of.get(ids[0], ids[0]) if ids else "", bool(r)) for ids, r in zip(run.ranked_ids, rel,
                                                                                        strict=True)]
    effective = k
    while effective <= corpus and len(set(keys[:effective])) < k and effective <= len(keys):
        effective += 1
    truncated = effective > len(keys) and len(keys) < corpus and len(set(keys)) < k
    wanted = {session_of.get(g, g) for g in gold}
    found = {key for key, r in keys[:effective] if r}
    return (float(bool(found)), float(bool(wanted) and wanted <= found), lme_ndcg(rel, len(gold), effective),
            truncated)


def table(ds: Dataset, results: Sequence[RunResult], ks: Sequence[int]) -> tuple[str, dict]:
    """Markdown and a results-file block of LongMemEval's turn and session metrics; empty when no question asks."""
    if not any(dict(q.meta).get(SESSIONS_FROM_TURNS) for q in ds.questions):
        return "", {}
    session_of = {item.id: item.session or item.id for item in ds.items}
    corpus = Counter(item.group for item in ds.items)
    depth = max(ks)
    shown = [k for k in LME_KS if k <= depth]
    rows = []
    for result in results:
        runs = [r for r in result.questions if dict(r.question.meta).get(SESSIONS_FROM_TURNS)]
        for k in shown:
            turn = [turn_scores(r, k) for r in runs]
            sess = [session_scores(r, k, session_of, corpus[r.question.group]) for r in runs]
            n = len(runs) or 1
            rows.append({"system": result.system, "k": k, "questions": len(runs),
                         "turn_recall_any": sum(t[0] for t in turn) / n, "turn_recall_all": sum(t[1] for t in turn) / n,
                         "turn_ndcg_any": sum(t[2] for t in turn) / n,
                         "session_recall_any": sum(s[0] for s in sess) / n,
                         "session_recall_all": sum(s[1] for s in sess) / n,
                         "session_ndcg_any": sum(s[2] for s in sess) / n,
                         "session_truncated": sum(s[3] for s in sess)})
    fractions = ("turn_recall_any", "turn_recall_all", "turn_ndcg_any", "session_recall_any", "session_recall_all",
                 "session_ndcg_any")
    cols = (Column("system", "System", "left"), Column("k", "k"),
            *(Column(key, key.replace("_ndcg_any", " nDCG").replace("_recall_", " R_")) for key in fractions),
            Column("session_truncated", "truncated"))
    body = tuple((Cell(r["system"], r["system"]), Cell(r["k"], str(r["k"])),
                  *(Cell(r[key], format(r[key], ".1%")) for key in fractions),
                  Cell(r["session_truncated"], str(r["session_truncated"]))) for r in rows)
    out = [render_table(Table(cols, body, title=(
        f"### LongMemEval's retrieval metrics (its eval_utils.py: turn level, and sessions from the turn ranking; "
        f"k in {', '.join(map(str, shown))} of its {', '.join(map(str, LME_KS))})")), "md")]
    if any(r["session_truncated"] for r in rows):
        out.append("truncated: questions whose session cut-off ran past the recalled turns (scored on those, a lower "
                   "bound; a larger max -k recalls deeper)\n")
    return "\n".join(out) + "\n", {"longmemeval_turns": {"ks": shown, "rows": rows}}
