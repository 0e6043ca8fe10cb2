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

from memini_bench.evaluation.guarded import leaked_line
from memini_bench.evaluation.stats import holm, mcnemar_exact
from memini_bench.qa.engine import Graded


@dataclass(frozen=True, slots=True)
class CategoryScore:
    category: str
    questions: int
    correct: int
    accuracy: float
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
    accuracy: float
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


def _counts(verdicts: Sequence[bool | None]) -> tuple[int, int, float, int]:
    """``(graded, correct, accuracy, unparseable)`` of verdicts (None: unparseable, out of the accuracy)."""
    correct = sum(v is True for v in verdicts)
    unparseable = sum(v is None for v in verdicts)
    return len(verdicts), correct, _rate(correct, len(verdicts) - unparseable), unparseable


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
    out = [f"memini's published QA accuracy on {p['data']}: reader {p['reader']}, {p['embedder']} embeddings, "
           f"k = {p['k']} (its bench/README.md; the data set is not in ../shared/data)\n",
           "| category | n | memini |", "|---|--:|--:|"]
    out += [f"| {c} | {n} | {acc} |" for c, acc, n in p["per_category"]]
    out.append(f"| **overall** | 500 | **{p['overall']}** |")
    return "\n".join(out) + "\n"


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


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
    lines = [f"QA accuracy (LLM-judge) {score.arm}: {_pct(score.accuracy)}%  ({_tally(score)}; {total} total "
             "questions)", "by category:"]
    lines += [f"  category {c.category}: {_pct(c.accuracy)}% ({_tally(c)})" for c in score.per_category]
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
    out = [head, "| category | n | " + " | ".join(arms) + " |", "|---|--:|" + "--:|" * len(arms)]
    for cat in cats:
        cells = []
        n = 0
        for r in results:
            c = next((c for c in r["per_category"] if c["category"] == cat), None)
            cells.append(_pct(c["accuracy"]) if c else "-")
            n = max(n, c["questions"] if c else 0)
        out.append(f"| {_label(cat, labels)} | {n} | " + " | ".join(cells) + " |")
    out.append(f"| **overall** | {max((r['questions'] for r in results), default=0)} | "
               + " | ".join(f"**{_pct(r['accuracy'])}**" for r in results) + " |")
    out += ["", "| arm | graded | correct | unparseable verdicts | reader tokens in / out | judge tokens in / out | "
            "estimated calls |", "|---|--:|--:|--:|--:|--:|--:|"]
    for r in results:
        t = r["tokens"]
        out.append(f"| {r['arm']} | {r['questions']} | {r['correct']} | {r.get('unparseable', 0)} | "
                   f"{t['reader_in']} / {t['reader_out']} | "
                   f"{t['judge_in']} / {t['judge_out']} | {t['estimated_calls']} of {t['calls']} |")
    comparisons = doc.get("comparisons", [])
    if comparisons:
        out += ["", "| A | B | n | A acc | B acc | delta (pp) | only A | only B | McNemar p | Holm p |",
                "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for c in comparisons:
            out.append(f"| {c['arm_a']} | {c['arm_b']} | {c['questions']} | {_pct(c['accuracy_a'])} | "
                       f"{_pct(c['accuracy_b'])} | {c['delta'] * 100:+.1f} | {c['only_a']} | {c['only_b']} | "
                       f"{c['p']:.3g} | {c['p_adjusted']:.3g} |")
    if "leaked" in doc:  # -leaks count: each system's hits of another group, dropped before the reader saw them
        out += ["", leaked_line(doc["leaked"])]
    return "\n".join(out) + "\n"


def document(config: dict, scores: Sequence[ArmScore], comparisons: Sequence[ArmComparison]) -> dict:
    return {"config": config, "results": [asdict(s) for s in scores], "comparisons": [asdict(c) for c in comparisons]}
