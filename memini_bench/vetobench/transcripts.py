"""VetoBench's fairness contract for systems that do their own ingestion: each decision as a session transcript.

A third-party memory system (and our own extraction, ``extract-e2e``) never receives the corpus's structured
``rejected[]``. It gets the same information as prose, one two-turn exchange per decision (RoBrain's shape)::

    User: What did we settle on for this? (<files_affected, comma-separated>)
    Assistant: Decision: <decision>. Rationale: <rationale>. We considered and rejected: <option> — <reason>;
    <option> — <reason>.

(the assistant turn is one line; a decision without rejected options has no last sentence). Lifecycle suites add
what a lifecycle corpus records besides: the decision's date (``Decision (YYYY-MM-DD): ...``) and, for a
superseded decision, ``This was later superseded by: <the replacing decision>.`` Every decision of the corpus is
transcribed, superseded ones too: what to make of them is the ingesting system's job. The same bytes go to every
system that ingests transcripts, so end-to-end conditions compare ingestion on identical input.
"""

from __future__ import annotations

from dataclasses import dataclass

from memini_bench.core.dataset import Item
from memini_bench.loaders.vetobench import Decision, VetoSuite

QUESTION = "What did we settle on for this?"


@dataclass(frozen=True, slots=True)
class Transcript:
    """One decision as a user turn and an assistant turn."""

    decision_id: str
    user: str
    assistant: str

    @property
    def text(self) -> str:
        """``User: ...`` and ``Assistant: ...`` on two lines: what a system ingests as the item's content."""
        return f"User: {self.user}\nAssistant: {self.assistant}"

    @property
    def messages(self) -> tuple[tuple[str, str], ...]:
        """(role, content) pairs, for a system that ingests chat messages."""
        return (("user", self.user), ("assistant", self.assistant))


def _sentence(text: str) -> str:
    """``text`` trimmed, with a full stop unless it already ends a sentence."""
    text = text.strip()
    return text if not text or text[-1] in ".!?" else f"{text}."


def decision_transcript(d: Decision, *, dates: bool = False, replaced_by: Decision | None = None) -> Transcript:
    """The transcript of decision ``d`` (its own rejected options, never inherited ones); ``dates`` adds its date,
    ``replaced_by`` the decision that superseded it."""
    files = f" ({', '.join(d.files_affected)})" if d.files_affected else ""
    when = f" ({d.created_at.date().isoformat()})" if dates else ""
    parts = [f"Decision{when}: {_sentence(d.decision)}"]
    if d.rationale.strip():
        parts.append(f"Rationale: {_sentence(d.rationale)}")
    own = [r for r in d.rejected if not r.inherited_from]
    if own:
        options = "; ".join(f"{r.option} — {r.reason.strip()}" if r.reason.strip() else r.option for r in own)
        parts.append(f"We considered and rejected: {_sentence(options)}")
    if replaced_by is not None:
        parts.append(f"This was later superseded by: {_sentence(replaced_by.decision)}")
    return Transcript(d.id, f"{QUESTION}{files}", " ".join(parts))


def suite_transcripts(suite: VetoSuite) -> tuple[Transcript, ...]:
    """Every decision of the suite as written (superseded ones included), in corpus order."""
    by_id = {d.id: d for d in suite.decisions}
    dates = suite.lifecycle
    return tuple(decision_transcript(d, dates=dates, replaced_by=by_id.get(d.superseded_by) if d.superseded_by
                                     else None) for d in suite.decisions)


def transcript_items(suite: VetoSuite) -> tuple[Item, ...]:
    """The transcripts as items of group ``suite.name``: id = the decision's id (so a hit can name where its
    memory came from), content = the transcript text, time = the decision's date, ``meta["transcript"]`` = the
    (role, content) messages. No item carries the structured decision."""
    times = {d.id: d.created_at for d in suite.decisions}
    return tuple(Item(id=t.decision_id, content=t.text, group=suite.name, time=times[t.decision_id],
                      source=suite.source, meta=(("transcript", t.messages),)) for t in suite_transcripts(suite))
