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

memini's own cmd/qa recall stack is the hybrid with temporal targeting 0.40, durable reserve 2 and synchronous
reinforcement (``-temporal-boost 0.4 -semantic-reserve 2 -reinforce``) plus a fused min score of 0.1 that this
harness does not have; its LongMemEval figure counts the abstention questions (``-abstention include``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memini_bench.clients.llm import ChatClient, judge_from_env
from memini_bench.core.contract import Hit, Preparable, System
from memini_bench.core.dataset import Dataset
from memini_bench.core.settings import CommaList, Int, Real, setting
from memini_bench.embed.factory import EmbedSettings
from memini_bench.errors import BenchError
from memini_bench.evaluation.runner import close_all
from memini_bench.loaders import LoadOptions
from memini_bench.modes.common import build_config, check_outputs, load_prepared, log, results_path, write_results
from memini_bench.modes.options import RunOptions
from memini_bench.qa import prompts, summary
from memini_bench.qa.checkpoint import Checkpoint
from memini_bench.qa.engine import Graded, Task, grade_all
from memini_bench.results.identity import check_overwrite, safe_name
from memini_bench.results.write import check_destinations, write_jsonl
from memini_bench.systems.config import HybridConfig
from memini_bench.systems.lineup import build_systems, wanted_names

NAME = "-qa"
SUMMARY = "end-to-end QA accuracy with an LLM reader and judge"
QA_SYSTEMS = ("memini-hybrid",)
DEFAULT_K = (10,)
BACKOFF_S = 0.5


@dataclass(frozen=True)
class QAOptions:
    qa: bool = setting("qa", False, "End-to-end QA (memini's cmd/qa): recall, a reader LLM (MEMINI_LLM_*) answers "
                       "from the memories, a judge LLM (MEMINI_JUDGE_*, default the reader's) grades; per-category "
                       "accuracy, tokens, McNemar between arms; resumable.")
    qa_k: tuple[int, ...] = setting("qa-k", DEFAULT_K, "-qa: memories given to the reader, comma-separated; each "
                                    "value times each system is one arm (memini's 10).",
                                    type=CommaList(Int(min=1, max=100), sort=True))
    concurrency: int = setting("concurrency", 6, "-qa: questions answered and graded at once (memini's 6 workers).",
                               type=Int(min=1, max=64))
    qa_retries: int = setting("qa-retries", 3, "-qa: retries of a failed LLM call (HTTP error, timeout, reply "
                              "without a message); a question still failing is left for a resumed run.",
                              type=Int(min=0, max=10))
    qa_timeout: float = setting("qa-timeout", 120.0, "-qa: seconds per reader or judge call (one try; a reply "
                                "still arriving after it is cut, and the call is retried per -qa-retries).",
                                type=Real(min=0, min_open=True))
    qa_checkpoint: str = setting("qa-checkpoint", "", "-qa: resume checkpoint, JSONL keyed by arm and question id "
                                 "(default <out>/<results stem>.ckpt.jsonl).")
    qa_archive: str = setting("qa-archive", "", "-qa: every prompt, reply and verdict, JSONL (default "
                              "<out>/<results stem>.archive.jsonl).")


OPTIONS = QAOptions
USES = (LoadOptions, HybridConfig, EmbedSettings, "limit", "holdout", "systems", "system", "rewrite", "out", "name",
        "no_write")


def selected(opts: RunOptions) -> bool:
    return opts.mode(QAOptions).qa


def recall_all(systems: Sequence[System], ds: Dataset, depth: int) -> dict[str, list[list[Hit]]]:
    """Each system's hits for every question, in question order (ingest once, prepare, recall at ``depth``)."""
    out: dict[str, list[list[Hit]]] = {}
    try:
        for system in systems:
            system.ingest(ds.items)
            if isinstance(system, Preparable):
                system.prepare([q.query for q in ds.questions])
            out[system.name] = [system.recall(q.group, q.query, depth, now=q.now, context=dict(q.context))
                                for q in ds.questions]
            log(f"{system.name}: recalled {depth} memories for {len(ds.questions)} questions")
    finally:
        close_all(systems)
    return out


def build_tasks(arms: Sequence[summary.Arm], ds: Dataset, recalled: dict[str, list[list[Hit]]]) -> list[Task]:
    """One task per arm and question: the arm's first k hits as the reader's memories (dated by their item)."""
    times = {item.id: item.time for item in ds.items}
    tasks = []
    for arm in arms:
        for index, (q, hits) in enumerate(zip(ds.questions, recalled[arm.system], strict=True)):
            top = hits[:arm.k]
            memories = tuple(prompts.Memory(h.content, next((times[i] for i in h.ids if times.get(i)), None))
                             for h in top)
            tasks.append(Task(arm.name, index, q, prompts.qa_category(q.category, q.id),
                              tuple(h.ids for h in top), memories))
    return tasks


def _name_tokens(x: QAOptions, names: list[str], reader: ChatClient, judge: ChatClient) -> tuple[str, ...]:
    tokens = []
    if names != list(QA_SYSTEMS):
        tokens.append("sys-" + "+".join(n.removeprefix("memini-") for n in names))
    if x.qa_k != DEFAULT_K:
        tokens.append("qak" + "+".join(map(str, x.qa_k)))
    tokens.append("m-" + safe_name(reader.model))
    if judge.model != reader.model:
        tokens.append("judge-" + safe_name(judge.model))
    return tuple(tokens)


def _clients(timeout: float = 120.0) -> tuple[ChatClient, ChatClient]:
    """The reader and the judge, each call bounded by ``timeout`` (``-qa-timeout``); retries are the engine's
    (``-qa-retries``), so each client tries once."""
    reader = ChatClient.from_env(retries=0, timeout=timeout)
    return reader, judge_from_env(reader, retries=0, timeout=timeout)


def run(opts: RunOptions) -> int:
    x = opts.mode(QAOptions)
    check_outputs(opts)
    if not opts.output.no_write:
        check_destinations(files=[("-qa-checkpoint", x.qa_checkpoint), ("-qa-archive", x.qa_archive)])
    reader, judge = _clients(x.qa_timeout)
    ctx = opts.context()
    systems = build_systems(wanted_names(opts.lineup, QA_SYSTEMS), ctx)
    ds = load_prepared(opts)
    if opts.suite == "longmemeval" and opts.load.abstention == "exclude":
        log("  note: the abstention (_abs) questions are excluded; memini's QA figure counts them "
            "(-abstention include)")
    recalled = recall_all(systems, ds, max(x.qa_k))
    names = [s.name for s in systems]
    arms = [summary.Arm(summary.arm_name(s, k), s, k) for s in names for k in x.qa_k]
    tasks = build_tasks(arms, ds, recalled)
    mode_settings = {"qa_k": list(x.qa_k), "arms": [a.name for a in arms], "reader_model": reader.model,
                     "judge_model": judge.model, "temperature": 0.0, "max_tokens": reader.max_tokens,
                     "prompts": prompts.fingerprint()}
    qa_config = {**mode_settings, "reader_url": reader.url, "judge_url": judge.url, "concurrency": x.concurrency,
                 "retries": x.qa_retries, "timeout_s": x.qa_timeout,
                 "system_prompts": {"reader": prompts.READER_SYSTEM, **prompts.RUBRICS}}
    config = build_config(opts, ds, ctx, systems, mode="qa", mode_settings=mode_settings, ks=list(x.qa_k),
                          qa=qa_config)
    path = results_path(opts, ds, ctx, None, suffix="-qa", extra_tokens=_name_tokens(x, names, reader, judge))
    if not opts.output.no_write:
        check_overwrite(path, config["identity"])
    ckpt_path = None if opts.output.no_write else Path(x.qa_checkpoint or path.with_suffix(".ckpt.jsonl"))
    identity = {**config["identity"], "dataset": ds.name, "data_sha256": config["data_sha256"]}
    checkpoint = Checkpoint(ckpt_path, identity, decode=Graded.from_json, encode=Graded.to_json,
                            key=lambda g: g.key)
    try:
        done = checkpoint.open()
        pending = [t for t in tasks if t.key not in done]
        if ckpt_path is not None:
            log(f"checkpoint {ckpt_path}: {len(tasks) - len(pending)} of {len(tasks)} already graded"
                + ("; dropped a torn last line" if checkpoint.torn else ""))
        log(f"answering {len(pending)} with {reader.model}, judging with {judge.model} ({len(arms)} arms)")
        outcome = grade_all(pending, reader.chat, judge.chat, checkpoint.append, concurrency=x.concurrency,
                            retries=x.qa_retries, backoff=BACKOFF_S)
    finally:
        checkpoint.close()
    graded = [checkpoint.records[t.key] for t in tasks if t.key in checkpoint.records]
    if len(graded) < len(tasks):
        why = outcome.aborted or (f"last error: {outcome.failed[-1][1]}" if outcome.failed else "not attempted")
        kept = (f"the {len(graded)} graded are kept in {ckpt_path}: rerun the same command to resume"
                if ckpt_path is not None else "-no-write keeps no checkpoint")
        raise BenchError(f"-qa: {len(tasks) - len(graded)} of {len(tasks)} answers are not graded ({why}); {kept}")
    scores = [summary.score_arm(a, graded) for a in arms]
    comparisons = summary.compare_arms(arms, graded)
    doc = summary.document(config, scores, comparisons)
    sys.stdout.write("".join(summary.memini_lines(s, len(ds.questions)) for s in scores) + "\n")
    sys.stdout.write(summary.render_markdown(doc))
    sys.stdout.flush()
    if opts.output.no_write:
        return 0
    write_results(path, doc)
    archive = Path(x.qa_archive or path.with_suffix(".archive.jsonl"))
    write_jsonl(archive, (g.to_json() for g in graded))
    log(f"wrote {archive}")
    return 0
