"""``-qa``: end-to-end QA accuracy with an LLM judge (memini's ``cmd/qa`` and ``bench/qa.go``).

1. Recall: every system (``-systems``/``-system``, default memini-hybrid) ingests the data set once and recalls each
   question once, in question order, at the largest ``-qa-k`` (so reinforcement, with ``-reinforce``, is
   deterministic); an arm ``<system>@k<k>`` gives the reader that recall's first k memories (each ``-qa-k`` value
   times each system is one arm).
2. Answer and grade (``memini_bench.qa``): a reader LLM (``MEMINI_LLM_*``) answers with memini's reader prompt, a
   judge LLM (``MEMINI_JUDGE_*``, each unset variable taken from the reader's) grades with memini's rubrics,
   temperature 0, ``-concurrency`` questions at once, each call retried ``-qa-retries`` times.
3. Every graded answer is appended to the checkpoint at once (``-qa-checkpoint``, default
   ``<out>/<results stem>.ckpt.jsonl``), so a killed or failed run resumes where it stopped and ends with the numbers
   an uninterrupted run gives. A run that leaves answers ungraded (the endpoint went down) stops with one line and
   no results file; rerunning the same command grades only what is missing.
4. Report: memini's accuracy lines per arm, then per-category accuracy, tokens in and out (reader and judge) and the
   paired McNemar comparison of every two arms (Holm-adjusted with more than two); written to
   ``<out>/<dataset>-qa-<settings>.json`` (the reader model, and the judge's when it differs, in the name) and the
   archive of every prompt, reply and verdict (``-qa-archive``, default ``<out>/<results stem>.archive.jsonl``, in
   arm and question order).

Beyond memini (``memini_bench.qa``, docs/qa.md): token F1 / EM / BLEU-1 beside the judge (``lexical``),
``-qa-categories`` / ``-qa-exclude`` (``categories``), ``-qa-runs N`` with mean, std and 95% interval (``runs``),
``-qa-judges A,B`` and ``-qa-labels FILE`` with agreement and Cohen's kappa (``agreement``), a price table and
``-estimate`` (``cost``, ``estimate``), official judge prompts from the user's checkout (``-qa-prompts``,
``prompt_sets``) and judged retrieval for id-less systems (``-qa-judged-k``, ``judged_retrieval``). The reader and
judge may be Anthropic's API (``MEMINI_LLM_PROVIDER=anthropic``, ``clients.providers``).

memini's own cmd/qa recall stack is the hybrid with temporal targeting 0.40, durable reserve 2 and synchronous
reinforcement (``-temporal-boost 0.4 -semantic-reserve 2 -reinforce``) plus a fused min score of 0.1 that this
harness does not have; its LongMemEval figure counts the abstention questions (``-abstention include``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memini_bench.clients.providers import Client, chat_from_env, judge_from_env
from memini_bench.core.contract import Hit, System
from memini_bench.core.dataset import Dataset
from memini_bench.errors import BenchError
from memini_bench.evaluation.guarded import guarded_systems
from memini_bench.evaluation.hits import RunGuardOptions
from memini_bench.modes.base import Mode, Outcome, Plan, PlanState
from memini_bench.modes.common import (
    build_config,
    check_outputs,
    claim_outputs,
    load_prepared,
    log,
    results_path,
    run_identity,
    table_caption,
    write_results,
)
from memini_bench.modes.options import RunOptions
from memini_bench.modes.specs import QA_DEFAULT_K, QAOptions
from memini_bench.qa import (
    categories,
    estimate,
    full_context,
    hypotheses,
    judged_retrieval,
    lexical,
    losses,
    prompts,
    scores,
    summary,
)
from memini_bench.qa.agreement import read_labels
from memini_bench.qa.checkpoint import Checkpoint, header_identity
from memini_bench.qa.cost import PriceTable, prices_from
from memini_bench.qa.engine import Graded, Task, grade_all
from memini_bench.qa.prompt_sets import PromptSet, prompt_set
from memini_bench.results.identity import Companion, safe_name
from memini_bench.results.schema import study_document
from memini_bench.results.write import check_destinations, write_jsonl
from memini_bench.systems.lineup import build_systems, wanted_names

QA_SYSTEMS = ("memini-hybrid",)

BACKOFF_S = 0.5


def recall_all(systems: Sequence[System], ds: Dataset, depth: int, guard: RunGuardOptions | None = None,
               leaked: dict[str, int] | None = None) -> dict[str, list[list[Hit]]]:
    """Each system's hits for every question, in question order (ingest once, prepare, recall at ``depth``), every
    hook guarded and every recall checked (``evaluation.guarded``; hits without ids are taken, for
    ``-qa-judged-k``); under ``-leaks count`` each system's dropped hits are counted into ``leaked``."""
    out: dict[str, list[list[Hit]]] = {}
    with guarded_systems(systems, guard, questions=ds.questions, id_less=True) as guarded:
        for system in guarded:
            system.ingest(ds.items)
            system.prepare([q.query for q in ds.questions])
            out[system.name] = [system.recall(q.group, q.query, depth, now=q.now, context=dict(q.context))
                                for q in ds.questions]
            if leaked is not None and system.leak_fields():
                leaked[system.name] = system.leaked
            log(f"{system.name}: recalled {depth} memories for {len(ds.questions)} questions")
    return out


def build_tasks(arms: Sequence[summary.Arm], ds: Dataset, recalled: dict[str, list[list[Hit]]]) -> list[Task]:
    """One task per arm and question: the arm's first k hits as the reader's memories (dated by their item)."""
    times = {item.id: item.time for item in ds.items}
    tasks = []
    for arm in arms:
        if arm.system in (full_context.ARM, hypotheses.SYSTEM):
            continue  # their tasks come from the whole history or the answers file (``full_context_tasks`` ...)
        for index, (q, hits) in enumerate(zip(ds.questions, recalled[arm.system], strict=True)):
            top = hits[:arm.k]
            memories = tuple(prompts.Memory(h.content, next((times[i] for i in h.ids if times.get(i)), None))
                             for h in top)
            tasks.append(Task(arm.name, index, q, prompts.qa_category(q.category, q.id),
                              tuple(h.ids for h in top), memories))
    return tasks


def _name_tokens(x: QAOptions, names: list[str], reader: Client, judge: Client) -> tuple[str, ...]:
    tokens = []
    if names and names != list(QA_SYSTEMS):
        tokens.append("sys-" + "+".join(n.removeprefix("memini-") for n in names))
    if x.qa_k != QA_DEFAULT_K:
        tokens.append("qak" + "+".join(map(str, x.qa_k)))
    tokens.append("m-" + safe_name(reader.model))
    if judge.model != reader.model:
        tokens.append("judge-" + safe_name(judge.model))
    tokens += [f"{t}{safe_name(v)}" for t, v in (("cat-", "+".join(x.qa_categories)), ("ex-", "+".join(x.qa_exclude)),
                                                 ("runs", str(x.qa_runs) if x.qa_runs > 1 else ""),
                                                 ("judges-", "+".join(x.qa_judges[1:])),
                                                 ("p-", x.qa_prompts.partition(":")[0]),
                                                 ("jk", str(x.qa_judged_k or "")),
                                                 ("full", str(x.qa_full_context or "")),
                                                 ("hyp-", Path(x.qa_hypotheses).stem if x.qa_hypotheses else ""))
               if v]
    return tuple(tokens)


def _clients(x: QAOptions) -> tuple[Client, Client, list[Client]]:
    """The reader, the judge and the further judges (``-qa-judges``), each call bounded by ``-qa-timeout``; retries
    are the engine's (``-qa-retries``), so each client tries once."""
    if len(x.qa_judges) == 1:
        raise BenchError(f"-qa-judges {x.qa_judges[0]}: give two or more judge models to compare (e.g. A,B), or set "
                         "MEMINI_JUDGE_MODEL for one")
    reader = chat_from_env(retries=0, timeout=x.qa_timeout)
    judge = judge_from_env(reader, retries=0, timeout=x.qa_timeout)
    if x.qa_judges:
        judge = dataclasses.replace(judge, model=x.qa_judges[0])
    return reader, judge, [dataclasses.replace(judge, model=m) for m in x.qa_judges[1:]]


def _qa_settings(x: QAOptions, pset, cats: dict) -> dict:
    """The identity settings beyond memini's (only those that differ from the default, so a default run keeps its
    identity)."""
    out: dict = {}
    if cats["excluded"]:
        out["categories"] = cats["graded"]
    if x.qa_runs > 1:
        out["runs"] = x.qa_runs
    if x.qa_judges:
        out["judges"] = list(x.qa_judges)
    if pset.name != "memini":
        out["prompt_set"] = pset.record()
    if x.qa_judged_k:
        out["judged_k"] = x.qa_judged_k
    if x.qa_full_context:
        out["full_context_tokens"] = x.qa_full_context
    if x.qa_hypotheses:
        from memini_bench.results.provenance import input_sha256

        out["hypotheses"] = input_sha256(x.qa_hypotheses) or x.qa_hypotheses
    return out


def hypotheses_tasks(x: QAOptions, ds: Dataset) -> list[Task]:
    """The tasks of the ``-qa-hypotheses`` arm (``qa.hypotheses``; how many questions it answers on stderr)."""
    if not x.qa_hypotheses:
        return []
    answers = hypotheses.read(x.qa_hypotheses, ds)
    log(f"  note: {x.qa_hypotheses} answers {len(answers)} of the {len(ds.questions)} questions; those are graded")
    return hypotheses.tasks(ds, answers, hypotheses.arm_name(x.qa_hypotheses))


def attribute_losses(suite: str, ds: Dataset, arms: Sequence[summary.Arm], run1: Sequence[Graded],
                     recalled: dict[str, list[list[Hit]]]) -> dict:
    """Every wrong answer of the first pass in one bucket (``qa.losses``), per arm and category."""
    from memini_bench.loaders.known_bad import for_suite

    listed = for_suite(suite)
    gold = {q.id: q.gold for q in ds.questions}
    by_name = {a.name: a for a in arms}
    history: list[set[str]] = []
    if any(a.system == full_context.ARM for a in arms):
        history = [{i.id for i in h} for h in full_context.histories(ds)]

    def retrieved(arm: str, index: int) -> set[str] | None:
        system = by_name[arm].system
        if system == hypotheses.SYSTEM:
            return None
        if system == full_context.ARM:
            return history[index]
        return {i for hit in recalled[system][index] for i in hit.ids}

    return losses.attribute([a.name for a in arms], run1, gold.__getitem__, retrieved,
                            listed.ids if listed is not None else ())


def full_context_tasks(x: QAOptions, ds: Dataset) -> tuple[list[Task], dict | None]:
    """The full-context arm's tasks and its cut (``qa.full_context``; stated on stderr); none without
    ``-qa-full-context``."""
    if not x.qa_full_context:
        return [], None
    tasks, cut = full_context.tasks(ds, x.qa_full_context)
    log(f"  note: {cut.statement()}")
    return tasks, {**cut.to_json(), "statement": cut.statement()}


def _arms(x: QAOptions, names: list[str]) -> list[summary.Arm]:
    """Each system at each -qa-k, then the full-context arm and the external answers' arm when asked for."""
    arms = [summary.Arm(summary.arm_name(s, k), s, k) for s in names for k in x.qa_k]
    if x.qa_full_context:
        arms.append(summary.Arm(full_context.ARM, full_context.ARM, 0))
    if x.qa_hypotheses:
        arms.append(summary.Arm(hypotheses.arm_name(x.qa_hypotheses), hypotheses.SYSTEM, 0))
    return arms


@dataclass
class QAState(PlanState):
    """-qa's plan state: its own options (``x``), the reader and judge clients (and any extra judges), the prompt
    set, the human labels (None without -qa-labels) and prices (None without -prices), then what the plan built:
    the systems, the graded categories, the arms, the identity settings, the results path, the checkpoint's
    identity and path, the hypotheses' tasks, and the full-context arm's cut (filled by ``run``)."""

    x: QAOptions | None = None
    reader: Client | None = None
    judge: Client | None = None
    extra: list[Client] = field(default_factory=list)
    pset: PromptSet | None = None
    labels: dict | None = None
    prices: PriceTable | None = None
    systems: list[System] = field(default_factory=list)
    cats: dict = field(default_factory=dict)
    arms: list[summary.Arm] = field(default_factory=list)
    mode_settings: dict = field(default_factory=dict)
    path: Path | None = None
    checkpoint_identity: dict = field(default_factory=dict)
    ckpt_path: Path | None = None
    hyp_tasks: list[Task] = field(default_factory=list)
    cut: dict | None = None


@dataclass
class QARun:
    """-qa's result: the results document and every graded answer; ``estimate``: -estimate printed the cost and
    nothing was graded."""

    doc: dict = field(default_factory=dict)
    graded: list[Graded] = field(default_factory=list)
    estimate: bool = False


def _checked_inputs(opts: RunOptions) -> QAState:
    """Every refusal of -qa's own inputs (outputs, clients, prompts, labels, prices), before any data is read."""
    x = opts.mode(QAOptions)
    if x.estimate and opts.output.no_write:
        raise BenchError("-estimate writes nothing already; drop -no-write")
    check_outputs(opts)
    if not opts.output.no_write:
        check_destinations(files=[("-qa-checkpoint", x.qa_checkpoint), ("-qa-archive", x.qa_archive)])
    lexical.check_available()
    reader, judge, extra = _clients(x)
    pset = prompt_set(x.qa_prompts)
    labels = read_labels(x.qa_labels) if x.qa_labels else None
    prices = prices_from(x.prices)
    if prices is not None:
        prices.require([reader.model, judge.model, *(j.model for j in extra)])
    if x.qa_judged_k > max(x.qa_k):
        raise BenchError(f"-qa-judged-k {x.qa_judged_k}: above the recall depth {max(x.qa_k)} (-qa-k); lower it")
    return QAState(x=x, reader=reader, judge=judge, extra=extra, pset=pset, labels=labels, prices=prices)


def _prepared(opts: RunOptions, pset) -> tuple[Dataset, dict]:
    """The data set, cut to the graded categories, with the notes a reader needs."""
    x = opts.mode(QAOptions)
    ds, cats = categories.select(load_prepared(opts), x.qa_categories, x.qa_exclude)
    pset.check_categories({prompts.qa_category(q.category, q.id) for q in ds.questions},
                          {q.id: prompts.qa_category(q.category, q.id) for q in ds.questions})
    if opts.suite == "longmemeval" and opts.load.abstention == "exclude":
        log("  note: the abstention (_abs) questions are excluded; memini's QA figure counts them "
            "(-abstention include)")
    log(f"  {categories.heading(cats, ds.category_labels)}")
    return ds, cats


def _qa_config(st: QAState, mode_settings: dict, cats: dict) -> dict:
    """What a -qa results file records of the reader, the judges, the prompts and the prices."""
    x, reader, judge, extra, prices = st.x, st.reader, st.judge, st.extra, st.prices
    return {**mode_settings, "reader_url": reader.url, "judge_url": judge.url, "concurrency": x.concurrency,
            "retries": x.qa_retries, "timeout_s": x.qa_timeout,
            "system_prompts": {"reader": prompts.READER_SYSTEM, **prompts.RUBRICS},
            "categories": cats, "runs": x.qa_runs, "prompt_set": st.pset.record(),
            "lexical": "SQuAD normalisation; F1, EM, BLEU-1 (nltk, method1 smoothing) over run 1",
            "prices": prices.to_json([reader.model, judge.model, *(j.model for j in extra)]) if prices else None}


def _grade(st: QAState, tasks: list[Task], ckpt_path: Path | None, identity: dict) -> list[Graded]:
    """Answer and grade every task not in the checkpoint yet; every task graded, or a BenchError saying how to
    resume."""
    x, reader, judge, extra = st.x, st.reader, st.judge, st.extra
    checkpoint = Checkpoint(ckpt_path, identity, decode=Graded.from_json, encode=Graded.to_json,
                            key=lambda g: g.key)
    try:
        done = checkpoint.open()
        pending = [t for t in tasks if t.key not in done]
        if ckpt_path is not None:
            log(f"checkpoint {ckpt_path}: {len(tasks) - len(pending)} of {len(tasks)} already graded"
                + ("; dropped a torn last line" if checkpoint.torn else ""))
        log(f"answering {len(pending)} with {reader.model}, judging with {judge.model} ({len(st.arms)} arms"
            + (f", {x.qa_runs} runs" if x.qa_runs > 1 else "") + ")")
        outcome = grade_all(pending, reader.chat, judge.chat, checkpoint.append, concurrency=x.concurrency,
                            retries=x.qa_retries, backoff=BACKOFF_S,
                            extra_judges=[(j.model, j.chat) for j in extra], prompt_set=st.pset)
    finally:
        checkpoint.close()
    graded = [checkpoint.records[t.key] for t in tasks if t.key in checkpoint.records]
    if len(graded) < len(tasks):
        why = outcome.aborted or (f"last error: {outcome.failed[-1][1]}" if outcome.failed else "not attempted")
        kept = (f"the {len(graded)} graded are kept in {ckpt_path}: rerun the same command to resume"
                if ckpt_path is not None else "-no-write keeps no checkpoint")
        raise BenchError(f"-qa: {len(tasks) - len(graded)} of {len(tasks)} answers are not graded ({why}); {kept}")
    return graded


def _document(st: QAState, config: dict, graded: list[Graded], judged: list[dict], relevance_dollars: float,
              leaked: dict[str, int]) -> dict:
    """The -qa results document: the arms' scores and comparisons, lexical scores, runs, agreement, cost."""
    x, arms, judge, extra, prices = st.x, st.arms, st.judge, st.extra, st.prices
    run1 = [g for g in graded if g.run == 1]
    doc = summary.document(config, [summary.score_arm(a, run1) for a in arms], summary.compare_arms(arms, run1))
    doc["verdicts"] = scores.verdicts_block(graded, judge.model, [j.model for j in extra])
    doc["lexical"] = {a.name: scores.lexical_block([g for g in graded if g.arm == a.name]) for a in arms}
    if x.qa_runs > 1:
        doc["runs"] = {a.name: scores.runs_block([g for g in graded if g.arm == a.name], x.qa_runs) for a in arms}
    if extra or st.labels is not None:
        doc["agreement"] = scores.agreement_block(graded, judge.model, [j.model for j in extra], st.labels)
    if prices is not None:
        doc["cost"] = {**scores.cost_block(prices, graded, [a.name for a in arms], st.reader.model, judge.model,
                                           relevance_dollars), "prices": config["qa"]["prices"]}
    if judged:
        doc["judged_retrieval"] = judged
    if leaked:  # -leaks count
        doc["leaked"] = leaked
    return doc


class QAMode(Mode):
    """``memini-bench qa`` (see the module docstring): ``plan`` checks the clients, prompts and prices, builds the
    systems and arms, and claims the results path and its checkpoint; ``run`` recalls, answers and grades (or,
    under -estimate, prints what that would cost and stops); ``render`` prints the tables; ``write`` the results
    file and the archive."""

    verb = "qa"

    def plan(self, opts: RunOptions) -> Plan:
        st = _checked_inputs(opts)
        x, reader, judge = st.x, st.reader, st.judge
        ctx = opts.context()
        alone = bool(x.qa_hypotheses) and not {"systems", "system", "rewrite"} & opts.given
        systems = [] if alone else build_systems(wanted_names(opts.lineup, QA_SYSTEMS), ctx)
        ds, cats = _prepared(opts, st.pset)
        names = [s.name for s in systems]
        arms = _arms(x, names)
        st.hyp_tasks = hypotheses_tasks(x, ds)  # a bad answers file: refused before any recall
        mode_settings = {"qa_k": list(x.qa_k), "arms": [a.name for a in arms], "reader_model": reader.model,
                         "judge_model": judge.model, "temperature": 0.0, "max_tokens": reader.max_tokens,
                         "prompts": prompts.fingerprint(), **_qa_settings(x, st.pset, cats)}
        ident = run_identity(opts, ds, ctx, systems, mode="qa", mode_settings=mode_settings)
        identity = {**ident, "dataset": ds.name, "data_sha256": ds.source_sha256}  # the checkpoint's
        path = results_path(opts, ds, ctx, None, suffix="-qa", extra_tokens=_name_tokens(x, names, reader, judge))
        if not opts.output.no_write:  # before any recall: the path this run's results (and checkpoint) take
            own = () if x.qa_checkpoint else (Companion(".ckpt.jsonl", identity, header_identity),)
            path = claim_outputs(opts, path, ident, names, companions=own)
        ckpt_path = None if opts.output.no_write else Path(x.qa_checkpoint or path.with_suffix(".ckpt.jsonl"))
        st.ctx, st.systems, st.ds, st.cats, st.arms, st.mode_settings = ctx, systems, ds, cats, arms, mode_settings
        st.path, st.checkpoint_identity, st.ckpt_path = path, identity, ckpt_path
        writes = [] if opts.output.no_write else [path, ckpt_path, Path(x.qa_archive or
                                                                           path.with_suffix(".archive.jsonl"))]
        calls = len(arms) * len(ds.questions) * x.qa_runs
        notes = [f"arms ({len(arms)}): {', '.join(a.name for a in arms)}",
                 f"answers to grade: {calls} ({len(arms)} arms x {len(ds.questions)} questions x {x.qa_runs} runs), "
                 f"reader {reader.model}, judge {judge.model}; -estimate prices them"]
        return Plan(self.verb, opts, systems=names, items=len(ds.items), questions=len(ds.questions),
                    identity=ident, writes=writes, state=st, notes=notes)

    def run(self, plan: Plan) -> Outcome:
        opts, st = plan.opts, plan.state
        x, ds, ckpt_path, identity = st.x, st.ds, st.ckpt_path, st.checkpoint_identity
        leaked: dict[str, int] = {}
        recalled = recall_all(st.systems, ds, max(x.qa_k), opts.guard, leaked)
        names = [s.name for s in st.systems]
        id_less = [n for n in names if x.qa_judged_k and judged_retrieval.id_less(recalled[n])]
        fc_tasks, st.cut = full_context_tasks(x, ds)
        first = build_tasks(st.arms, ds, recalled) + fc_tasks + st.hyp_tasks
        tasks = [dataclasses.replace(t, run=r) for r in range(1, x.qa_runs + 1) for t in first]
        config = build_config(opts, ds, st.ctx, st.systems, mode="qa", mode_settings=st.mode_settings,
                              ks=list(x.qa_k), identity=plan.identity,
                              qa=_qa_config(st, st.mode_settings, st.cats))
        if x.estimate:
            text = _estimate(x, ckpt_path, identity, tasks, st.pset, ds, recalled, id_less, st.reader,
                             st.judge, st.extra, st.prices, len(st.arms))
            return Outcome(plan, 0, text, QARun(estimate=True))
        graded = _grade(st, tasks, ckpt_path, identity)
        judged, relevance_dollars = _judged(x, ckpt_path, identity, ds, recalled, id_less, st.judge,
                                            st.prices)
        doc = _document(st, config, graded, judged, relevance_dollars, leaked)
        doc["losses"] = attribute_losses(opts.suite, ds, st.arms, [g for g in graded if g.run == 1], recalled)
        if st.cut is not None:
            doc["full_context"] = st.cut
        return Outcome(plan, 0, _tables(opts, st, doc, graded), QARun(doc, graded))

    def write(self, outcome: Outcome) -> None:
        opts, st = outcome.plan.opts, outcome.plan.state
        if opts.output.no_write or outcome.result.estimate:
            return
        path = st.path
        write_results(path, study_document(outcome.result.doc))
        archive = Path(st.x.qa_archive or path.with_suffix(".archive.jsonl"))
        write_jsonl(archive, (g.to_json(timing=False) for g in outcome.result.graded))
        log(f"wrote {archive}")


def _tables(opts: RunOptions, st: QAState, doc: dict, graded: list[Graded]) -> str:
    """What -qa prints: memini's one line per arm, the categories graded, the tables."""
    ds, arms = st.ds, st.arms
    run1 = [g for g in graded if g.run == 1]
    lines = "".join(summary.memini_lines(s, len(ds.questions)) for s in (summary.score_arm(a, run1) for a in arms))
    caption = table_caption(opts, ds)
    text = (lines + "\n" + f"{categories.heading(st.cats, ds.category_labels)}\n\n"
            + (f"{caption}.\n\n" if caption else "")
            + summary.render_markdown(doc) + "\n" + scores.render(doc) + "\n" + losses.render(doc["losses"]))
    return text + (f"\n{doc['full_context']['statement']}\n" if "full_context" in doc else "")


def _relevance_checkpoint(ckpt_path: Path | None, identity: dict) -> Checkpoint:
    path = None if ckpt_path is None else ckpt_path.with_name(ckpt_path.name.replace(".ckpt.", ".relevance."))
    return Checkpoint(path, identity, decode=judged_retrieval.Relevance.from_json,
                      encode=judged_retrieval.Relevance.to_json, key=lambda r: r.key)


def _judged(x: QAOptions, ckpt_path, identity, ds, recalled, id_less, judge, prices) -> tuple[list[dict], float]:
    """Judged retrieval of the id-less systems (``qa.judged_retrieval``) and the dollars of its calls."""
    if not x.qa_judged_k:
        return [], 0.0
    skipped = [n for n in recalled if n not in id_less]
    if skipped:
        log(f"-qa-judged-k: {', '.join(skipped)} return data-set ids (id-based recall applies; not judged)")
    if not id_less:
        return [], 0.0
    checkpoint = _relevance_checkpoint(ckpt_path, identity)
    try:
        done = checkpoint.open()
        for name in id_less:
            judged_retrieval.judge_all(name, ds.questions, recalled[name], x.qa_judged_k, judge.chat, done,
                                       checkpoint.append, concurrency=x.concurrency, retries=x.qa_retries,
                                       backoff=BACKOFF_S)
    finally:
        checkpoint.close()
    rows = [judged_retrieval.metrics(n, ds.questions, checkpoint.records, x.qa_judged_k) for n in id_less]
    dollars = 0.0
    if prices is not None:
        dollars = sum(prices.price(judge.model).cost(r.call.tokens_in, r.call.tokens_out)
                      for r in checkpoint.records.values())
    return rows, dollars


def _estimate(x: QAOptions, ckpt_path, identity, tasks, pset, ds, recalled, id_less, reader, judge, extra, prices,
              arms: int) -> str:
    """``-estimate``: read what an earlier run graded (never written to); what the rest would take, as text."""
    done: dict = {}
    if ckpt_path is not None and ckpt_path.exists():
        done = Checkpoint(ckpt_path, identity, decode=Graded.from_json, encode=Graded.to_json,
                          key=lambda g: g.key).read()
    pending = [t for t in tasks if t.key not in done]
    relevance = [(q.query, q.answer, h.content) for n in id_less
                 for q, row in zip(ds.questions, recalled[n], strict=True) for h in row[:x.qa_judged_k]]
    p = estimate.plan(pending, list(done.values()), pset, 1 + len(extra), relevance, reader=reader.model,
                      judge_models=[judge.model, *(j.model for j in extra)], prices=prices,
                      concurrency=x.concurrency)
    return estimate.render(p, arms=arms, runs=x.qa_runs, concurrency=x.concurrency, prices=prices)
