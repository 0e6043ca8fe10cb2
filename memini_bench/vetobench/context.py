"""The context blocks VetoBench puts in front of the agent, and how a System gets to build its own.

- ``render_decision``: one corpus decision as a log line, with its rejected options as ``REJECTED`` warnings.
- ``decisions_context``: the default for a system ranking the corpus: each hit naming corpus decisions renders
  them (vetoes included, each decision once); a hit naming none of them (a system returning its own memories)
  renders its own content. At most ``RETRIEVAL_K`` entries; no hits, no context.
- ``memories_context``: a third-party system fed transcripts: only what it returned, its hits' content, never the
  corpus's structured ``rejected[]`` (even when its hits name the decisions they came from).
- ``recall_context``: the system's top 5 for the task and, from them, its own
  ``ContextBuilder.build_context(question, hits)`` when it has the hook, else the default given. The question it
  sees is ``public_question``: no gold, answer, trap kind or suite meta.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from memini_bench.core import hooks
from memini_bench.core.contract import ContextBuilder, Hit, System
from memini_bench.core.dataset import Question
from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Decision

RETRIEVAL_K = 5
DECISIONS_HEADER = "Relevant prior decisions for this task (from team memory):"
MEMORIES_HEADER = "Relevant memories for this task (from team memory):"


def render_decision(d: Decision, *, vetoes: bool, dates: bool = False) -> str:
    """``- [date] decision — rationale`` and, with ``vetoes``, one ``REJECTED: option — reason`` line each (no
    `` — reason`` when the reason is empty)."""
    date = f"[{d.created_at.date().isoformat()}] " if dates else ""
    lines = [f"- {date}{d.decision} — {d.rationale}"]
    if vetoes:
        for r in d.rejected:
            origin = ""
            if r.inherited_from:
                when = f", {r.inherited_date.date().isoformat()}" if r.inherited_date else ""
                origin = f" (still-standing rejection carried from a superseded decision{when})"
            lines.append(f"  - REJECTED{origin}: {r.option}" + (f" — {r.reason}" if r.reason else ""))
    return "\n".join(lines)


def memory_line(hit: Hit) -> str:
    """``- content``, continuation lines indented by two spaces."""
    return "- " + hit.content.strip().replace("\n", "\n  ")


def decisions_context(hits: Sequence[Hit], decisions: Mapping[str, Decision], *, dates: bool = False,
                      k: int = RETRIEVAL_K) -> str:
    """The header and up to ``k`` entries: the corpus decisions the hits name (with vetoes), else the hit's own
    content. The header speaks of decisions when every entry is one, of memories otherwise."""
    entries: list[str] = []
    seen: set[str] = set()
    own = False
    for hit in hits:
        named = [decisions[i] for i in hit.ids if i in decisions]
        if not named:
            own = True
            entries.append(memory_line(hit))
        for d in named:
            if d.id not in seen:
                seen.add(d.id)
                entries.append(render_decision(d, vetoes=True, dates=dates))
    entries = entries[:k]
    if not entries:
        return ""
    return f"{MEMORIES_HEADER if own else DECISIONS_HEADER}\n" + "\n".join(entries)


def memories_context(hits: Sequence[Hit], *, k: int = RETRIEVAL_K) -> str:
    """The header and the content of the first ``k`` hits; no hits, no context."""
    if not hits:
        return ""
    return f"{MEMORIES_HEADER}\n" + "\n".join(memory_line(h) for h in hits[:k])


def public_question(q: Question) -> Question:
    """What a system may see of a question: its id, text, group, date and context (no gold, answer, trap, meta)."""
    return Question(id=q.id, query=q.query, gold=(), group=q.group, now=q.now, context=q.context)


def recall_context(system: System, question: Question, default: Callable[[Sequence[Hit]], str],
                   k: int = RETRIEVAL_K) -> tuple[list[Hit], str]:
    """The system's top ``k`` for the (public) question and the context built from them: the system's own
    ``build_context`` when it has one, else ``default(hits)``. Both hooks run under ``core.hooks.call``: whatever
    they raise is one line naming the system, the hook and the scenario. The hits are not checked
    (``evaluation.hits``): a condition may recall the system's own memory ids, rendered by their content."""
    q = public_question(question)
    name = str(system.name)
    hits = hooks.call(name, f"recall for scenario {q.id!r}", system.recall, q.group, q.query, k, now=q.now,
                      context=dict(q.context))
    if isinstance(system, ContextBuilder):
        text = hooks.call(name, f"build_context for scenario {q.id!r}", system.build_context, q, hits)
        if not isinstance(text, str):
            raise BenchError(f"{system.name}: build_context returned {type(text).__name__}; it should return the "
                             "context text (str)")
        return hits, text
    return hits, default(hits)
