"""The QA scores beside judge accuracy: lexical metrics, the spread over repeated runs, judge agreement and money.

Every block is computed from the graded records alone (``engine.Graded``), so a resumed run reports what an
uninterrupted one does:

- ``lexical``: per arm, token F1 / EM / BLEU-1 of the answers against the references (``qa.lexical``) over run 1,
  overall and per category;
- ``runs``: per arm, over runs 1..N, the spread (``qa.runs.spread``) of the accuracy and of the F1, overall and per
  category (a run's value is computed over that run's graded questions);
- ``verdicts``: per judge, its replies and how many were no label (unparseable, out of every accuracy);
- ``agreement``: the first judge against each further judge (``-qa-judges``) and every judge against the human
  labels (``-qa-labels``), over all arms and runs both graded (``qa.agreement``);
- ``cost``: with a price table, dollars per arm (reader + judges over all runs), per graded question of the arm and
  in total (``qa.cost``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict

from memini_bench.qa import lexical
from memini_bench.qa.agreement import Key, paired
from memini_bench.qa.cost import PriceTable, money
from memini_bench.qa.engine import Graded
from memini_bench.qa.runs import spread


def _by_category(records: Sequence[Graded]) -> dict[str, list[Graded]]:
    out: dict[str, list[Graded]] = {}
    for g in sorted(records, key=lambda g: g.category):
        out.setdefault(g.category, []).append(g)
    return out


def lexical_block(records: Sequence[Graded]) -> dict:
    """Run 1's lexical means of one arm, overall and per category."""
    first = [g for g in records if g.run == 1]
    return {"overall": asdict(lexical.summarise((g.answer, g.reference) for g in first)),
            "per_category": {c: asdict(lexical.summarise((g.answer, g.reference) for g in rs))
                             for c, rs in _by_category(first).items()}}


def _accuracy(records: Sequence[Graded]) -> float:
    """Correct over the records judged with a label (unparseable verdicts left out)."""
    judged = [g.correct for g in records if g.correct is not None]
    return sum(judged) / len(judged) if judged else 0.0


def _f1(records: Sequence[Graded]) -> float:
    return lexical.summarise((g.answer, g.reference) for g in records).f1


def runs_block(records: Sequence[Graded], runs: int) -> dict:
    """The spread of accuracy and F1 of one arm over runs 1..``runs``, overall and per category."""
    per_run = [[g for g in records if g.run == r] for r in range(1, runs + 1)]

    def block(groups: Sequence[Sequence[Graded]]) -> dict:
        return {"accuracy": asdict(spread([_accuracy(g) for g in groups])),
                "f1": asdict(spread([_f1(g) for g in groups]))}

    cats = sorted({g.category for g in records})
    return {"overall": block(per_run),
            "per_category": {c: block([[g for g in rs if g.category == c] for rs in per_run]) for c in cats}}


def agreement_block(graded: Sequence[Graded], judge: str, extra: Sequence[str],
                    labels: Mapping[Key, bool] | None) -> list[dict]:
    verdicts = {judge: {g.key: g.correct for g in graded if g.correct is not None}}
    for name in extra:
        verdicts[name] = {g.key: v.correct for g in graded for v in g.extra
                          if v.judge == name and v.correct is not None}
    rows = [asdict(paired(judge, name, verdicts[judge], verdicts[name])) for name in extra]
    if labels is not None:
        rows += [asdict(paired(name, "human", verdicts[name], labels)) for name in verdicts]
    return rows


def verdicts_block(graded: Sequence[Graded], judge: str, extra: Sequence[str]) -> dict:
    """Per judge (the first, then each of ``-qa-judges``), over all arms and runs: the replies it gave and how many
    were no label (``prompts.parse_verdict``), with those replies' answers' keys (arm, question id, run)."""
    replies: dict[str, list[tuple[Graded, bool | None]]] = {judge: [(g, g.correct) for g in graded]}
    for name in extra:
        replies[name] = [(g, v.correct) for g in graded for v in g.extra if v.judge == name]
    return {name: {"replies": len(rs), "unparseable": sum(c is None for _, c in rs),
                   "unparseable_keys": [list(g.key) for g, c in rs if c is None]} for name, rs in replies.items()}


def cost_block(table: PriceTable, graded: Sequence[Graded], arms: Sequence[str], reader: str, judge: str,
               relevance: float = 0.0) -> dict:
    """Dollars per arm, per graded question of the arm, and in total (``relevance``: the judged-retrieval calls'
    dollars, counted once in the total, not in an arm)."""
    out = {}
    for arm in arms:
        mine = [g for g in graded if g.arm == arm]
        calls = [(reader, g.reader.tokens_in, g.reader.tokens_out) for g in mine]
        calls += [(judge, g.judge.tokens_in, g.judge.tokens_out) for g in mine]
        calls += [(v.judge, v.call.tokens_in, v.call.tokens_out) for g in mine for v in g.extra]
        dollars = money(table, calls)
        out[arm] = {"dollars": dollars, "per_question": dollars / len(mine) if mine else 0.0, "questions": len(mine)}
    return {"per_arm": out, "relevance": relevance, "total": sum(a["dollars"] for a in out.values()) + relevance}


def _pct(x: float) -> str:
    return f"{x * 100:.1f}"


def render(doc: Mapping) -> str:
    """Markdown of the blocks a results document carries (empty when it has none)."""
    out: list[str] = []
    verdicts = doc.get("verdicts", {})
    if verdicts:
        out += ["| judge | replies | unparseable (left out of the accuracy) |", "|---|--:|--:|"]
        out += [f"| {name} | {v['replies']} | {v['unparseable']} |" for name, v in verdicts.items()]
        out.append("")
    lex = doc.get("lexical", {})
    if lex:
        out += ["| arm | category | scored | F1 | EM | BLEU-1 |", "|---|---|--:|--:|--:|--:|"]
        for arm, block in lex.items():
            for cat, s in [*block["per_category"].items(), ("**overall**", block["overall"])]:
                out.append(f"| {arm} | {cat} | {s['scored']} | {_pct(s['f1'])} | {_pct(s['exact_match'])} | "
                           f"{_pct(s['bleu1'])} |")
        out.append("")
    runs = doc.get("runs", {})
    if runs:
        out += ["| arm | category | runs | accuracy mean | std | 95% interval | F1 mean | F1 std |",
                "|---|---|--:|--:|--:|--:|--:|--:|"]
        for arm, block in runs.items():
            for cat, s in [*block["per_category"].items(), ("**overall**", block["overall"])]:
                a, f = s["accuracy"], s["f1"]
                out.append(f"| {arm} | {cat} | {a['runs']} | {_pct(a['mean'])} | {_pct(a['std'])} | "
                           f"[{_pct(a['low'])}, {_pct(a['high'])}] | {_pct(f['mean'])} | {_pct(f['std'])} |")
        out.append("")
    agreement = doc.get("agreement", [])
    if agreement:
        out += ["| A | B | n | both correct | only A | only B | both incorrect | agreement | Cohen's kappa |",
                "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
        for r in agreement:
            kappa = "undefined" if r["kappa"] is None else f"{r['kappa']:.3f}"
            out.append(f"| {r['grader_a']} | {r['grader_b']} | {r['n']} | {r['both_correct']} | {r['only_a_correct']}"
                       f" | {r['only_b_correct']} | {r['both_incorrect']} | {_pct(r['percent'])} | {kappa} |")
        out.append("")
    cost = doc.get("cost")
    if cost:
        out += [f"| arm | questions | dollars | per question |  (prices: {cost['prices']['file']})",
                "|---|--:|--:|--:|"]
        out += [f"| {arm} | {c['questions']} | {c['dollars']:.4f} | {c['per_question']:.6f} |"
                for arm, c in cost["per_arm"].items()]
        if cost["relevance"]:
            out.append(f"| judged retrieval | | {cost['relevance']:.4f} | |")
        out.append(f"| **total** | | **{cost['total']:.4f}** | |")
        out.append("")
    return "\n".join(out)
