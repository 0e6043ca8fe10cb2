"""``extract-e2e``: the decision transcripts through our own extraction prompt; what it returns becomes the corpus.

The plain retrieval conditions read the corpus with ``rejected[]`` already structured, as if capture had been
perfect. Here every decision's transcript (``transcripts``, the bytes a third-party system ingests) goes to an
OpenAI-compatible chat model with ``EXTRACTION_PROMPT``, which asks for the decision with its rejected options as a
first-class field; the reply is parsed defensively (``parse_extraction``) and the extracted decision replaces the
fixture's decision, rationale and ``rejected``. Carried over from the fixture, as production gets them from
elsewhere: id, files affected, dates, historical relevance, status and ``superseded_by``. A reply with no decision
(null, empty, not JSON) loses the decision; a superseded decision whose final replacement was lost has no active
decision to carry its vetoes to, so they are lost too (noted in its record). The extracted corpus then goes
through the usual lifecycle carry-over and is ranked by ``veto-composite``.

One ``ExtractionRecord`` per decision is archived: what came back, and which of the fixture's vetoes survived. A
fixture veto is *kept* when some extracted option matches it by the judge's rule (``judge.names_match``:
normalised containment either way, the reverse only for entries longer than 2 characters), else *dropped*; a lost
decision keeps none. An endpoint failure is recorded in the decision's record (the decision is lost);
``MAX_CONSECUTIVE_ERRORS`` failures in a row end the run (the endpoint is down).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from memini_bench.errors import BenchError
from memini_bench.loaders.vetobench import Decision, Rejection, VetoSuite, active_with_inherited
from memini_bench.vetobench.judge import names_match, strip_fences
from memini_bench.vetobench.transcripts import suite_transcripts

MAX_CONSECUTIVE_ERRORS = 3
KEPT, LOST, UNPARSED, ERROR = "kept", "decision lost", "reply not JSON", "call failed"
EXTRACTION_PROMPT = (
    "You keep a software team's decision log. You are given one exchange from a working session. Record the "
    "durable technical decision it settles, if any, together with every alternative the team considered and "
    "turned down, because the log exists to stop anyone from proposing a rejected alternative again.\n"
    "Answer with one JSON object and nothing else:\n"
    '{"decision": "<what was decided, one imperative sentence; null if nothing durable was decided>", '
    '"rationale": "<why, in one sentence; null if no reason is given>", '
    '"rejected": [{"option": "<an alternative that was considered and declined>", '
    '"reason": "<why it was declined>"}]}\n'
    "Rules: give each declined alternative its own entry in \"rejected\", with its reason; name each option exactly "
    "as the exchange names it (that is how the team will look it up); use [] only when no alternative was "
    "discussed; never invent an alternative the exchange does not mention."
)

Complete = Callable[[str, str], str]  # (system prompt, user message) -> reply text


@dataclass(frozen=True, slots=True)
class Extracted:
    """A parsed extraction reply: the decision (None = nothing usable), its rationale and rejected options."""

    decision: str | None
    rationale: str = ""
    rejected: tuple[Rejection, ...] = ()
    parsed: bool = True  # False when the reply held no JSON object


@dataclass(frozen=True)
class ExtractionRecord:
    """One decision's extraction: ``outcome`` (kept / decision lost / reply not JSON / call failed), what came back,
    the fixture's vetoes and which of them were kept or dropped."""

    id: str
    outcome: str
    vetoes_in_fixture: tuple[str, ...]
    vetoes_kept: tuple[str, ...] = ()
    vetoes_dropped: tuple[str, ...] = ()
    extracted_decision: str | None = None
    extracted_rationale: str = ""
    extracted_rejected: tuple[dict, ...] = ()
    reply: str = ""
    error: str = ""
    note: str = ""

    def as_json(self) -> dict:
        return asdict(self)


def _json_object(text: str) -> dict | None:
    """The reply as a JSON object: whole, else its first fenced block, else from its first ``{`` to its last ``}``."""
    body = text.strip()
    candidates = [body, strip_fences(body)]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start:end + 1])
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _rejections(value: object) -> tuple[Rejection, ...]:
    """``rejected`` as given: a list of ``{option, reason}`` objects (a lone object or a string entry accepted; an
    entry without a non-empty string ``option`` skipped)."""
    entries = [value] if isinstance(value, dict | str) else value if isinstance(value, list) else []
    out = []
    for entry in entries:
        if isinstance(entry, str) and entry.strip():
            out.append(Rejection(entry.strip(), ""))
        elif isinstance(entry, dict) and _text(entry.get("option")):
            out.append(Rejection(_text(entry.get("option")), _text(entry.get("reason"))))
    return tuple(out)


def parse_extraction(reply: str) -> Extracted:
    """A reply to ``EXTRACTION_PROMPT``, tolerantly: a decision that is not a non-empty string is None; a missing or
    malformed ``rationale`` is ""; ``rejected`` keeps the entries it can read."""
    obj = _json_object(reply)
    if obj is None:
        return Extracted(None, parsed=False)
    return Extracted(_text(obj.get("decision")) or None, _text(obj.get("rationale")), _rejections(obj.get("rejected")))


def _kept(fixture: Decision, extracted: Extracted) -> tuple[str, ...]:
    return tuple(r.option for r in fixture.rejected
                 if any(names_match(x.option, r.option) for x in extracted.rejected))


def _record(d: Decision, extracted: Extracted, reply: str) -> ExtractionRecord:
    vetoes = tuple(r.option for r in d.rejected)
    outcome = KEPT if extracted.decision else LOST if extracted.parsed else UNPARSED
    kept = _kept(d, extracted) if extracted.decision else ()
    return ExtractionRecord(d.id, outcome, vetoes, kept, tuple(v for v in vetoes if v not in kept),
                            extracted.decision, extracted.rationale,
                            tuple({"option": r.option, "reason": r.reason} for r in extracted.rejected), reply)


@dataclass
class Extraction:
    """The extracted suite (its decisions and active ones rebuilt from the replies) and one record per decision."""

    suite: VetoSuite
    records: list[ExtractionRecord] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        """decisions, kept, lost (any outcome but kept), vetoes (in the fixture), vetoes kept, call errors."""
        return {"decisions": len(self.records), "kept": sum(r.outcome == KEPT for r in self.records),
                "lost": sum(r.outcome != KEPT for r in self.records),
                "vetoes": sum(len(r.vetoes_in_fixture) for r in self.records),
                "vetoes_kept": sum(len(r.vetoes_kept) for r in self.records),
                "errors": sum(r.outcome == ERROR for r in self.records)}

    def summary_line(self) -> str:
        t = self.totals()
        dropped = [f"{v} ({r.id})" for r in self.records for v in r.vetoes_dropped]
        return (f"{t['kept']}/{t['decisions']} decisions kept, {t['vetoes_kept']}/{t['vetoes']} vetoes kept"
                + (f"; dropped: {', '.join(dropped)}" if dropped else "")
                + (f"; {t['errors']} calls failed" if t["errors"] else ""))


def _final_heir(d: Decision, by_id: dict[str, Decision]) -> str:
    seen = {d.id}
    while d.status == "superseded" and d.superseded_by in by_id and d.superseded_by not in seen:
        d = by_id[d.superseded_by]
        seen.add(d.id)
    return d.id


def _rebuilt(suite: VetoSuite, extracted: dict[str, Decision], records: list[ExtractionRecord]) -> VetoSuite:
    """The suite over the kept decisions; each superseded one points at its final replacement, or is dropped (with a
    note in its record) when that replacement was lost."""
    by_id = {d.id: d for d in suite.decisions}
    decisions = []
    for i, record in enumerate(records):
        d = extracted.get(record.id)
        if d is None:
            continue
        if d.status == "superseded":
            heir = _final_heir(by_id[d.id], by_id)
            if heir not in extracted:
                records[i] = replace(record, note=f"its replacement {heir} was lost; its vetoes reach no active "
                                     "decision")
                continue
            d = replace(d, superseded_by=heir)
        decisions.append(d)
    decisions_t = tuple(decisions)
    return replace(suite, decisions=decisions_t, active=active_with_inherited(decisions_t, f"{suite.name} "
                                                                              "(extracted)"))


def extract_suite(suite: VetoSuite, complete: Complete, *, echo: Callable[[str], None] = lambda m: None
                  ) -> Extraction:
    """Every decision's transcript through ``EXTRACTION_PROMPT`` (one call each, in corpus order)."""
    by_id = {d.id: d for d in suite.decisions}
    records: list[ExtractionRecord] = []
    extracted: dict[str, Decision] = {}
    failures = 0
    for transcript in suite_transcripts(suite):
        d = by_id[transcript.decision_id]
        try:
            reply = complete(EXTRACTION_PROMPT, transcript.text)
        except BenchError as exc:
            failures += 1
            records.append(ExtractionRecord(d.id, ERROR, tuple(r.option for r in d.rejected),
                                            vetoes_dropped=tuple(r.option for r in d.rejected), error=str(exc)))
            echo(f"extract-e2e {d.id}  ERROR: {exc}")
            if failures >= MAX_CONSECUTIVE_ERRORS:
                raise BenchError(f"-live: extract-e2e: {failures} extraction calls failed in a row; last: {exc}; "
                                 "check MEMINI_LLM_BASE_URL, the model (-extract-model) and the API key") from None
            continue
        failures = 0
        parsed = parse_extraction(reply)
        record = _record(d, parsed, reply)
        records.append(record)
        if record.outcome == KEPT:
            extracted[d.id] = replace(d, decision=parsed.decision, rationale=parsed.rationale,
                                      rejected=parsed.rejected)
    return Extraction(_rebuilt(suite, extracted, records), records)
