"""Answering and grading questions with ``concurrency`` worker threads, bounded retries and per-call tokens.

One *task* is one question in one arm, with the memories that arm recalled for it. A worker makes two calls: the
reader (memini's reader prompt over the memories, ``prompts.reader_message``) and the judge (the category's rubric,
``prompts.judge_message``); each call is tried at most ``1 + retries`` times, waiting
``min(backoff * 2**(attempt - 1), 8)`` seconds before attempt ``attempt`` (a failure is any BenchError: an HTTP
error, a refused connection, a timeout, a reply that is not JSON or has no message). A graded task goes to
``on_graded`` (the checkpoint) at once. A task whose call still fails is left ungraded (a resumed run tries it
again); after ``MAX_CONSECUTIVE_FAILURES`` failed tasks in a row the endpoint is taken to be down and no further
task starts.

Tokens per call: the endpoint's ``usage.prompt_tokens`` / ``usage.completion_tokens``; a count it does not send is
estimated as memini's CountingChat does, ``(bytes + 3) // 4`` of the system and user messages (in) and of the reply
(out), and the call is marked ``estimated``. ``seconds`` is a call's wall time, retries included (kept in the
checkpoint for ``-estimate``'s time, left out of the archive, which stays the same between reruns).

Judges: the first judge grades ``correct``; each further judge (``-qa-judges``) grades the same answer with the
same prompt and its verdict goes to ``extra``. The judge's prompt is the prompt set's (``prompt_sets``, default our
rubrics); every reply is read by ``prompts.parse_verdict``: ``correct`` is True, False, or None when the reply is no
documented label (unparseable: counted per judge, left out of the accuracy, not asked again). Runs (``-qa-runs``):
a task carries its run number, part of its key.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from memini_bench.clients.llm import ChatReply
from memini_bench.core.dataset import Question
from memini_bench.core.runs import estimate_tokens
from memini_bench.errors import BenchError
from memini_bench.progress import Ticker
from memini_bench.qa import prompts
from memini_bench.qa.prompt_sets import MEMINI, PromptSet

MAX_CONSECUTIVE_FAILURES = 3
MAX_BACKOFF_S = 8.0
Chat = Callable[[str, str], ChatReply]  # (system, user) -> reply, temperature 0


@dataclass(frozen=True, slots=True)
class Task:
    """One question of one arm, with what the arm recalled (ids in rank order, memories as the reader sees them)."""

    arm: str
    index: int
    question: Question
    category: str
    recalled: tuple[tuple[str, ...], ...]
    memories: tuple[prompts.Memory, ...]
    run: int = 1
    #: an answer produced elsewhere (``-qa-hypotheses``): graded as is, no reader call
    hypothesis: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.arm, self.question.id, self.run)


@dataclass(frozen=True, slots=True)
class Call:
    """One LLM call as archived: the system prompt's name, the user message, the reply, its tokens, attempts."""

    system: str
    user: str
    reply: str
    tokens_in: int
    tokens_out: int
    estimated: bool
    attempts: int
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Verdict:
    """A further judge's grade of an answer: the judge's model, its call and its verdict."""

    judge: str
    call: Call
    correct: bool | None  # None: the reply was no label (unparseable)


@dataclass(frozen=True, slots=True)
class Graded:
    """One graded (arm, question): what the reader answered, what the judge said and the verdict."""

    arm: str
    id: str
    index: int
    category: str
    reference: str
    recalled: tuple[tuple[str, ...], ...]
    answer: str
    correct: bool | None  # None: the judge's reply was no label (unparseable)
    reader: Call
    judge: Call
    run: int = 1
    extra: tuple[Verdict, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.arm, self.id, self.run)

    def to_json(self, timing: bool = True) -> dict:
        obj = asdict(self)
        if not timing:
            for c in (obj["reader"], obj["judge"], *(v["call"] for v in obj["extra"])):
                c.pop("seconds")
        return obj

    @classmethod
    def from_json(cls, obj: dict) -> Graded:
        try:
            return cls(arm=obj["arm"], id=obj["id"], index=int(obj["index"]), category=obj["category"],
                       reference=obj["reference"], recalled=tuple(tuple(ids) for ids in obj["recalled"]),
                       answer=obj["answer"], correct=_verdict(obj["correct"]), reader=Call(**obj["reader"]),
                       judge=Call(**obj["judge"]), run=int(obj.get("run", 1)),
                       extra=tuple(Verdict(v["judge"], Call(**v["call"]), _verdict(v["correct"]))
                                   for v in obj.get("extra", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchError(f"a checkpoint record lacks {exc}; the checkpoint is from another version: delete it "
                             "or give -qa-checkpoint another path") from None


def _verdict(value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError("correct")


@dataclass
class Outcome:
    """What a grading pass did: how many were graded, the tasks that failed (with their last error), and why it
    stopped early (empty when it did not)."""

    graded: int = 0
    failed: list[tuple[Task, str]] = field(default_factory=list)
    aborted: str = ""


def call(chat: Chat, system_name: str, system: str, user: str, *, retries: int, backoff: float) -> Call:
    """One call with bounded retries (module docstring); the last BenchError propagates."""
    start = time.monotonic()
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(backoff * 2 ** (attempt - 1), MAX_BACKOFF_S))
        try:
            reply = chat(system, user)
        except BenchError:
            if attempt == retries:
                raise
            continue
        estimated = reply.prompt_tokens is None or reply.completion_tokens is None
        tokens_in = reply.prompt_tokens if reply.prompt_tokens is not None else (
            estimate_tokens(system) + estimate_tokens(user))
        tokens_out = reply.completion_tokens if reply.completion_tokens is not None else estimate_tokens(
            reply.content)
        return Call(system_name, user, reply.content, tokens_in, tokens_out, estimated, attempt + 1,
                    round(time.monotonic() - start, 3))
    raise AssertionError("unreachable")


def grade(task: Task, reader: Chat, judge: Chat, *, retries: int, backoff: float,
          extra_judges: Sequence[tuple[str, Chat]] = (), prompt_set: PromptSet = MEMINI) -> Graded:
    """Answer ``task`` with the reader and grade the answer with the judge(s) (module docstring)."""
    q = task.question
    if task.hypothesis is not None:
        read = Call("external", "", task.hypothesis, 0, 0, False, 0)
        answer = task.hypothesis
    else:
        read = call(reader, "reader", prompts.READER_SYSTEM, prompts.reader_message(q.query, task.memories, q.now),
                    retries=retries, backoff=backoff)
        answer = prompts.strip_thinking(read.reply)
    request = prompt_set.judge(task.category, q.id, q.query, q.answer, answer)
    verdict = call(judge, *request, retries=retries, backoff=backoff)
    extra = tuple(Verdict(name, c, prompt_set.verdict(c.reply)) for name, chat in extra_judges
                  for c in [call(chat, *request, retries=retries, backoff=backoff)])
    return Graded(task.arm, q.id, task.index, task.category, q.answer, task.recalled, answer,
                  prompt_set.verdict(verdict.reply), read, verdict, task.run, extra)


def grade_all(tasks: Sequence[Task], reader: Chat, judge: Chat, on_graded: Callable[[Graded], None], *,
              concurrency: int = 1, retries: int = 0, backoff: float = 0.5,
              extra_judges: Sequence[tuple[str, Chat]] = (), prompt_set: PromptSet = MEMINI) -> Outcome:
    """Grade every task with ``concurrency`` threads (module docstring), with a progress line and an ETA every
    ~10 s on stderr (``progress.Ticker``); exceptions other than BenchError (bugs, a failed checkpoint write) stop
    the pass and propagate."""
    outcome = Outcome()
    lock = threading.Lock()
    stop = threading.Event()
    queue: Iterator[Task] = iter(tasks)
    streak = [0]

    def next_task() -> Task | None:
        with lock:
            return None if stop.is_set() else next(queue, None)

    def work() -> None:
        while (task := next_task()) is not None:
            try:
                graded = grade(task, reader, judge, retries=retries, backoff=backoff, extra_judges=extra_judges,
                               prompt_set=prompt_set)
            except BenchError as exc:
                with lock:
                    outcome.failed.append((task, str(exc)))
                    streak[0] += 1
                    if streak[0] >= MAX_CONSECUTIVE_FAILURES and not stop.is_set():
                        outcome.aborted = f"{streak[0]} questions in a row failed (last: {exc})"
                        stop.set()
                continue
            on_graded(graded)
            with lock:
                streak[0] = 0
                outcome.graded += 1
            ticker.tick()

    ticker = Ticker("QA answers graded", len(tasks), "answers")
    workers = max(1, min(concurrency, len(tasks)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="qa") as pool:
        futures = [pool.submit(work) for _ in range(workers)]
        try:
            for future in futures:
                future.result()
        finally:
            stop.set()
            ticker.close()
    return outcome
