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

from memini_bench.core.table import fmt_points, table_of
from memini_bench.core.table import render as render_table
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



def _table(header: str, rows: list[list[tuple[object, str]]]) -> str:
    """A Markdown table through the one table model (``core.table.table_of``)."""
    return render_table(table_of(header, rows), "md")


def render(doc: Mapping) -> str:
    """Markdown of the blocks a results document carries (empty when it has none)."""
    out: list[str] = []
    verdicts = doc.get("verdicts", {})
    if verdicts:
        out.append(_table("judge:l|replies:r|unparseable (left out of the accuracy):r",
                          [[(name, name), (v["replies"], str(v["replies"])), (v["unparseable"], str(v["unparseable"]))]
                           for name, v in verdicts.items()]))
    lex = doc.get("lexical", {})
    if lex:
        rows = [[(arm, arm), (cat, cat), (s["scored"], str(s["scored"])),
                 *((s[m], fmt_points(s[m])) for m in ("f1", "exact_match", "bleu1"))]
                for arm, block in lex.items()
                for cat, s in [*block["per_category"].items(), ("**overall**", block["overall"])]]
        out.append(_table("arm:l|category:l|scored:r|F1:r|EM:r|BLEU-1:r", rows))
    runs = doc.get("runs", {})
    if runs:
        rows = [[(arm, arm), (cat, cat), (a["runs"], str(a["runs"])), (a["mean"], fmt_points(a["mean"])),
                 (a["std"], fmt_points(a["std"])),
                 ((a["low"], a["high"]), f"[{fmt_points(a['low'])}, {fmt_points(a['high'])}]"),
                 (f["mean"], fmt_points(f["mean"])), (f["std"], fmt_points(f["std"]))]
                for arm, block in runs.items()
                for cat, s in [*block["per_category"].items(), ("**overall**", block["overall"])]
                for a, f in [(s["accuracy"], s["f1"])]]
        out.append(_table("arm:l|category:l|runs:r|accuracy mean:r|std:r|95% interval:r|F1 mean:r|F1 std:r", rows))
    agreement = doc.get("agreement", [])
    if agreement:
        rows = [[(r["grader_a"], r["grader_a"]), (r["grader_b"], r["grader_b"]),
                 *((r[key], str(r[key])) for key in ("n", "both_correct", "only_a_correct", "only_b_correct",
                                                      "both_incorrect")),
                 (r["percent"], fmt_points(r["percent"])),
                 (r["kappa"], "undefined" if r["kappa"] is None else f"{r['kappa']:.3f}")] for r in agreement]
        out.append(_table("A:l|B:l|n:r|both correct:r|only A:r|only B:r|both incorrect:r|agreement:r|"
                          "Cohen's kappa:r", rows))
    cost = doc.get("cost")
    if cost:
        rows = [[(arm, arm), (c["questions"], str(c["questions"])), (c["dollars"], f"{c['dollars']:.4f}"),
                 (c["per_question"], f"{c['per_question']:.6f}")] for arm, c in cost["per_arm"].items()]
        if cost["relevance"]:
            rows.append([("judged retrieval", "judged retrieval"), (None, ""), (cost["relevance"],
                                                                             f"{cost['relevance']:.4f}"), (None, "")])
        rows.append([("total", "**total**"), (None, ""), (cost["total"], f"**{cost['total']:.4f}**"), (None, "")])
        head, rest = _table("arm:l|questions:r|dollars:r|per question:r", rows).split("\n", 1)
        out.append(f"{head}  (prices: {cost['prices']['file']})\n{rest}")  # the price file named after the header
    return "\n".join(out)
