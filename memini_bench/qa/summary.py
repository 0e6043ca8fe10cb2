"""QA results: accuracy per arm and per category, tokens, and paired McNemar comparisons of the arms.

- ``accuracy = correct / (graded - unparseable)`` over an arm's graded questions, where ``unparseable`` counts the
  judge replies that were no label (``prompts.parse_verdict``): they are neither right nor wrong and are left out;
  per category the same within the category (categories sorted by name; memini prints them in map order).
- Tokens: the sums over the arm's calls of ``tokens_in`` / ``tokens_out``, for the reader and the judge, and how many
  calls had an estimated count (``engine``).
- Comparisons: every pair of arms (A before B in arm order), over the questions both judged with a label: b = A correct
  and B not, c = the reverse, ``p = stats.mcnemar_exact(b, c)`` (memini's McNemarExact), and with more than one pair the
  Holm-adjusted p over all pairs (``stats.holm``); ``delta = acc_A - acc_B`` on those questions.

``render_markdown(doc)`` renders a results file's JSON (``{"config", "results", "comparisons"}``) as markdown: the
README's QA tables are made from committed results files with it, never typed. ``render_published()`` renders
memini's own published QA figures (``MEMINI_PUBLISHED``, from its bench/README.md@05e7da55) to print beside ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

from memini_bench.core.table import Cell, Column, Table, fmt_points
from memini_bench.core.table import render as render_table
from memini_bench.evaluation.guarded import leaked_line
from memini_bench.evaluation.stats import holm, mcnemar_exact
from memini_bench.qa.engine import Graded


@dataclass(frozen=True, slots=True)
class CategoryScore:
    category: str
    questions: int
    correct: int
    accuracy: float | None  # None: no verdict with a label
    unparseable: int = 0


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token sums of one arm's calls (``*_in`` prompt, ``*_out`` completion) and the calls with estimated counts."""

    reader_in: int = 0
    reader_out: int = 0
    judge_in: int = 0
    judge_out: int = 0
    calls: int = 0
    estimated_calls: int = 0


@dataclass(frozen=True, slots=True)
class ArmScore:
    """One arm (a system recalling k memories for the reader) over its graded questions."""

    arm: str
    system: str
    k: int
    questions: int
    correct: int
    accuracy: float | None  # None: no verdict with a label
    per_category: tuple[CategoryScore, ...]
    tokens: Tokens
    unparseable: int = 0


@dataclass(frozen=True, slots=True)
class ArmComparison:
    """Arm A against arm B on the questions both graded (module docstring)."""

    arm_a: str
    arm_b: str
    questions: int
    accuracy_a: float
    accuracy_b: float
    delta: float
    only_a: int
    only_b: int
    p: float
    p_adjusted: float


@dataclass(frozen=True, slots=True)
class Arm:
    """An arm's name, its system and k (the reader sees that system's top k)."""

    name: str
    system: str
    k: int


def arm_name(system: str, k: int) -> str:
    return f"{system}@k{k}"


def _rate(correct: int, n: int) -> float:
    return correct / n if n else 0.0


def _counts(verdicts: Sequence[bool | None]) -> tuple[int, int, float | None, int]:
    """``(graded, correct, accuracy, unparseable)`` of verdicts (None: unparseable, out of the accuracy); the
    accuracy is None (printed "-") when no verdict had a label: 0 judged is no 0.0% accuracy."""
    correct = sum(v is True for v in verdicts)
    unparseable = sum(v is None for v in verdicts)
    judged = len(verdicts) - unparseable
    return len(verdicts), correct, _rate(correct, judged) if judged else None, unparseable


def score_arm(arm: Arm, graded: Sequence[Graded]) -> ArmScore:
    mine = [g for g in graded if g.arm == arm.name]
    by_cat: dict[str, list[bool | None]] = {}
    for g in mine:
        by_cat.setdefault(g.category, []).append(g.correct)
    cats = tuple(CategoryScore(c, *_counts(v)) for c, v in sorted(by_cat.items()))
    calls = [c for g in mine for c in (g.reader, g.judge)]
    tokens = Tokens(reader_in=sum(g.reader.tokens_in for g in mine), reader_out=sum(g.reader.tokens_out for g in mine),
                    judge_in=sum(g.judge.tokens_in for g in mine), judge_out=sum(g.judge.tokens_out for g in mine),
                    calls=len(calls), estimated_calls=sum(c.estimated for c in calls))
    n, correct, accuracy, unparseable = _counts([g.correct for g in mine])
    return ArmScore(arm.name, arm.system, arm.k, n, correct, accuracy, cats, tokens, unparseable)


def compare_arms(arms: Sequence[Arm], graded: Sequence[Graded]) -> list[ArmComparison]:
    verdicts: dict[str, dict[str, bool]] = {a.name: {} for a in arms}
    for g in graded:
        if g.arm in verdicts and g.correct is not None:
            verdicts[g.arm][g.id] = g.correct
    rows = []
    for a, b in combinations([arm.name for arm in arms], 2):
        both = [q for q in verdicts[a] if q in verdicts[b]]
        only_a = sum(verdicts[a][q] and not verdicts[b][q] for q in both)
        only_b = sum(verdicts[b][q] and not verdicts[a][q] for q in both)
        acc_a = _rate(sum(verdicts[a][q] for q in both), len(both))
        acc_b = _rate(sum(verdicts[b][q] for q in both), len(both))
        p = mcnemar_exact(only_a, only_b)
        rows.append(ArmComparison(a, b, len(both), acc_a, acc_b, acc_a - acc_b, only_a, only_b, p, p))
    if len(rows) > 1:
        adjusted = holm([r.p for r in rows])
        rows = [ArmComparison(**{**asdict(r), "p_adjusted": adj}) for r, adj in zip(rows, adjusted, strict=True)]
    return rows


# memini's published LongMemEval-S QA accuracy (bench/README.md@05e7da55): reader Qwen3.6-35b-fast, bge-m3
# embeddings, k = 10, all 500 questions; (category, accuracy %, n). Its LoCoMo QA run is "pending" there.
MEMINI_PUBLISHED = {
    "data": "LongMemEval-S (500 questions, abstention included)", "reader": "Qwen3.6-35b-fast", "embedder": "bge-m3",
    "k": 10, "overall": "80.6",
    "per_category": (("single-session-assistant", "98.2", 56), ("single-session-user", "92.2", 64),
                     ("knowledge-update", "86.1", 72), ("temporal-reasoning", "81.9", 127),
                     ("multi-session", "67.8", 121), ("single-session-preference", "40.0", 30),
                     ("abstention", "~98", 36)),
}


def render_published() -> str:
    """memini's published QA figures as a markdown table (``MEMINI_PUBLISHED``)."""
    p = MEMINI_PUBLISHED
    cols = (Column("category", "category", "left"), Column("n", "n"), Column("memini", "memini"))
    body = [(Cell(c, c), Cell(n, str(n)), Cell(acc, acc)) for c, acc, n in p["per_category"]]
    body.append((Cell("overall", "overall", strong=True), Cell(500, "500"),
                 Cell(p["overall"], p["overall"], strong=True)))
    return (f"memini's published QA accuracy on {p['data']}: reader {p['reader']}, {p['embedder']} embeddings, "
            f"k = {p['k']} (its bench/README.md; the data set is not in ../shared/data)\n\n"
            + render_table(Table(cols, tuple(body)), "md"))



def _label(category: str, labels: Mapping[str, str]) -> str:
    base = category.removesuffix("_abs")
    name = f"{category} ({labels[base]})" if base in labels else category
    return name


def _tally(score: ArmScore | CategoryScore) -> str:
    judged = score.questions - score.unparseable
    out = f"{score.correct} correct of {judged} judged"
    return out + (f"; {score.unparseable} unparseable verdicts left out" if score.unparseable else "")


def memini_lines(score: ArmScore, total: int) -> str:
    """memini's report lines for one arm, in its layout with our wording (categories sorted)."""
    lines = [f"QA accuracy (LLM-judge) {score.arm}: {fmt_points(score.accuracy)}%  ({_tally(score)}; {total} total "
             "questions)", "by category:"]
    lines += [f"  category {c.category}: {fmt_points(c.accuracy)}% ({_tally(c)})" for c in score.per_category]
    return "\n".join(lines) + "\n"


def render_markdown(doc: Mapping) -> str:
    """Markdown tables of one QA results file: accuracy per arm and category, tokens, and the comparisons."""
    config, results = doc["config"], doc["results"]
    labels = config.get("category_labels", {})
    qa = config.get("qa", {})
    head = (f"### {config['dataset']}: QA accuracy (LLM judge), reader {qa.get('reader_model', '?')}, judge "
            f"{qa.get('judge_model', '?')}\n")
    arms = [r["arm"] for r in results]
    cats = sorted({c["category"] for r in results for c in r["per_category"]})
    acc_cols = (Column("category", "category", "left"), Column("n", "n"), *(Column(a, a) for a in arms))
    body = []
    for cat in cats:
        found = [next((c for c in r["per_category"] if c["category"] == cat), None) for r in results]
        n = max((c["questions"] for c in found if c), default=0)
        body.append((Cell(cat, _label(cat, labels)), Cell(n, str(n)),
                     *(Cell(c["accuracy"] if c else None, fmt_points(c["accuracy"]) if c else "-") for c in found)))
    total = max((r["questions"] for r in results), default=0)
    body.append((Cell("overall", "overall", strong=True), Cell(total, str(total)),
                 *(Cell(r["accuracy"], fmt_points(r["accuracy"]), strong=True) for r in results)))
    tok_cols = (Column("arm", "arm", "left"), Column("graded", "graded"), Column("correct", "correct"),
                Column("unparseable", "unparseable verdicts"), Column("reader", "reader tokens in / out"),
                Column("judge", "judge tokens in / out"),
                Column("calls", "estimated calls"))
    tok_body = tuple((Cell(r["arm"], r["arm"]), Cell(r["questions"], str(r["questions"])),
                      Cell(r["correct"], str(r["correct"])),
                      Cell(r.get("unparseable", 0), str(r.get("unparseable", 0))),
                      Cell(t, f"{t['reader_in']} / {t['reader_out']}"), Cell(t, f"{t['judge_in']} / {t['judge_out']}"),
                      Cell(t, f"{t['estimated_calls']} of {t['calls']}")) for r in results for t in [r["tokens"]])
    out = [head + "\n" + render_table(Table(acc_cols, tuple(body)), "md") + "\n"
           + render_table(Table(tok_cols, tok_body), "md").rstrip("\n")]
    comparisons = doc.get("comparisons", [])
    if comparisons:
        cmp_cols = (Column("a", "A", "left"), Column("b", "B", "left"), *(Column(key, header) for key, header in (
            ("n", "n"), ("acc_a", "A acc"), ("acc_b", "B acc"), ("delta", "delta (pp)"), ("only_a", "only A"),
            ("only_b", "only B"), ("p", "McNemar p"), ("p_holm", "Holm p"))))
        cmp_body = tuple((Cell(c["arm_a"], c["arm_a"]), Cell(c["arm_b"], c["arm_b"]),
                          Cell(c["questions"], str(c["questions"])),
                          Cell(c["accuracy_a"], fmt_points(c["accuracy_a"])),
                          Cell(c["accuracy_b"], fmt_points(c["accuracy_b"])),
                          Cell(c["delta"], fmt_points(c["delta"], signed=True)),
                          Cell(c["only_a"], str(c["only_a"])), Cell(c["only_b"], str(c["only_b"])),
                          Cell(c["p"], f"{c['p']:.3g}"), Cell(c["p_adjusted"], f"{c['p_adjusted']:.3g}"))
                         for c in comparisons)
        out += ["", render_table(Table(cmp_cols, cmp_body), "md").rstrip("\n")]
    if "leaked" in doc:  # -leaks count: each system's hits of another group, dropped before the reader saw them
        out += ["", leaked_line(doc["leaked"])]
    return "\n".join(out) + "\n"


def document(config: dict, scores: Sequence[ArmScore], comparisons: Sequence[ArmComparison]) -> dict:
    return {"config": config, "results": [asdict(s) for s in scores], "comparisons": [asdict(c) for c in comparisons]}
