"""The entity-bridge diagnostic (memini ``bench/entitydiag_test.go → TestEntityBridgeDiagnostic``): could an
entity link between a missing gold and what one recall found have bridged a failed multi-hop question, and does
promoting linked candidates help?

Vocabulary (``VOCABULARIES``): ``entities.extract`` (capitalised spans; the default) or ``concepts.extract``
(memini's lowercase concept leg: stemmed content words and adjacent pairs) on every item of the studied groups;
``df(e, g)`` = the items of group g that mention entity e; ``n_g`` = the items of g. Under a document-frequency
cap c (a share of the conversation), an entity is usable when ``df(e, g) <= floor(c * n_g)`` (hub-safe: an
entity in half the conversation is a hub, not a bridge). An item m is *linked* to a set of anchors A under c when
some usable entity of m is an entity of an anchor in A.

Per question (k = 10, deep = the system's recall at ``pool_size(k)`` = 50, got = deep[:k], anchors = got[:3]):

- a failure is a question whose gold is not all in got; each gold not in got is a *missing* gold, *in pool* when
  it is in deep;
- a failure is *bridgeable* under c when every missing gold is linked to the anchors; *bridgeable in pool* when,
  besides, every missing gold is in the pool;
- promotion (every question, as production would run it): the candidates below k in deep that are linked to the
  anchors are marked promotable and memini's reserve gate (``retrieval.reserve.reserve_order`` with reserve 3)
  swaps up to 3 of them in, each evicting the lowest remaining window entry, only while its score is at least
  ``max(0.5 x evictee score, 0.4 x top-1 score)``; the question is covered when its whole gold is in the new
  window. Promotions of gold ids are counted apart from noise.
- entity-anchored second hop (memini's section 4): on a failure, the usable entities of the anchors (sorted)
  are appended to the query, and the union of got with that second recall at k is scored as in ``multihop``.

Shares: bridgeable / failures; linked misses / missing golds; covered / questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from memini_bench.core.contract import System
from memini_bench.core.dataset import Dataset, Question
from memini_bench.core.table import Cell, Column, Table, fmt_share
from memini_bench.core.table import render as render_table
from memini_bench.evaluation.guarded import leaked_line
from memini_bench.retrieval.reserve import reserve_order
from memini_bench.studies import concepts, entities, published
from memini_bench.studies.defaults import DEFAULT_CAPS, DEFAULT_VOCABULARY
from memini_bench.studies.multihop import found, union
from memini_bench.systems.config import pool_size

ANCHORS = 3
MAX_PROMOTE = 3
HOP_CAPS = (1.0, 0.10)
VOCABULARIES: dict[str, Callable[[str], list[str]]] = {"entities": entities.extract, "concepts": concepts.extract}


class Vocabulary:
    """Each item's entities and each group's document frequencies."""

    def __init__(self, ds: Dataset, extract: Callable[[str], list[str]] = entities.extract) -> None:
        self.of: dict[str, tuple[str, ...]] = {}
        self.df: dict[str, Counter] = {}
        self.size: Counter = Counter()
        for it in ds.items:
            terms = tuple(extract(it.content))
            self.of[it.id] = terms
            self.df.setdefault(it.group, Counter()).update(set(terms))
            self.size[it.group] += 1

    def usable(self, item: str, group: str, cap: float) -> set[str]:
        limit = int(cap * self.size[group])
        return {e for e in self.of.get(item, ()) if self.df[group][e] <= limit}

    def linked(self, item: str, anchors: Sequence[str], group: str, cap: float) -> bool:
        usable = self.usable(item, group, cap)
        return any(usable.intersection(self.of.get(a, ())) for a in anchors)


@dataclass
class CapTally:
    cap: float
    linked_misses: int = 0
    linked_in_pool: int = 0
    bridgeable: int = 0
    bridgeable_in_pool: int = 0
    promoted_full: int = 0
    promotions: int = 0
    promoted_gold: int = 0


@dataclass
class HopTally:
    cap: float
    full: int = 0
    recall_sum: float = 0.0


@dataclass
class BridgeResult:
    system: str
    questions: int = 0
    single_full: int = 0
    failures: int = 0
    missing: int = 0
    missing_in_pool: int = 0
    caps: list[CapTally] = field(default_factory=list)
    hops: list[HopTally] = field(default_factory=list)
    vocabulary: str = DEFAULT_VOCABULARY

    def as_dict(self) -> dict:
        """Every field; ``vocabulary`` only when it is not the default (entity rows stay as they were)."""
        out = asdict(self)
        if out["vocabulary"] == DEFAULT_VOCABULARY:
            del out["vocabulary"]
        return out


Deep = Callable[[Question, str, int], tuple[list[str], list[float]]]  # (question, query, k) -> ids, scores


def deep_recall(system: System) -> Deep:
    def recall(q: Question, query: str, k: int) -> tuple[list[str], list[float]]:
        ids, scores = [], []
        for hit in system.recall(q.group, query, k, now=q.now, context=dict(q.context)):
            ids.append(hit.ids[0])
            scores.append(hit.score)
        return ids, scores

    return recall


def promote(vocab: Vocabulary, q: Question, deep: list[str], scores: list[float], k: int, cap: float) -> list[str]:
    """The new top-k window after promoting up to 3 anchor-linked pool candidates under the reserve gate."""
    anchors = deep[:ANCHORS]
    promotable = [i >= k and vocab.linked(item, anchors, q.group, cap) for i, item in enumerate(deep)]
    order = reserve_order(scores, promotable, k, MAX_PROMOTE)
    return [deep[i] for i in order[:k]]


def diagnose(system: System, ds: Dataset, vocab: Vocabulary, k: int = 10, caps: Sequence[float] = DEFAULT_CAPS,
             warm: Callable[[list[str]], None] | None = None, vocabulary: str = DEFAULT_VOCABULARY) -> BridgeResult:
    """The diagnostic for one system over the study's questions (module docstring); ``vocabulary`` names
    ``vocab``'s extractor in the result."""
    recall = deep_recall(system)
    depth = pool_size(k)
    result = BridgeResult(system.name, len(ds.questions), caps=[CapTally(c) for c in caps],
                          hops=[HopTally(c) for c in HOP_CAPS], vocabulary=vocabulary)
    if warm is not None:
        warm([q.query for q in ds.questions])
    firsts = [recall(q, q.query, depth) for q in ds.questions]
    hop_text: list[dict[float, str]] = []
    for q, (deep, scores) in zip(ds.questions, firsts, strict=True):
        got = deep[:k]
        anchors = got[:ANCHORS]
        for tally in result.caps:
            window = promote(vocab, q, deep, scores, k, tally.cap)
            promoted = [i for i in window if i not in got]
            tally.promotions += len(promoted)
            tally.promoted_gold += sum(1 for i in promoted if i in q.gold)
            tally.promoted_full += found(window, q.gold) == len(q.gold)
        texts: dict[float, str] = {}
        if found(got, q.gold) == len(q.gold):
            result.single_full += 1
            hop_text.append(texts)
            continue
        result.failures += 1
        missing = [g for g in q.gold if g not in set(got)]
        in_pool = [g in set(deep) for g in missing]
        result.missing += len(missing)
        result.missing_in_pool += sum(in_pool)
        for tally in result.caps:
            links = [vocab.linked(g, anchors, q.group, tally.cap) for g in missing]
            tally.linked_misses += sum(links)
            tally.linked_in_pool += sum(a and b for a, b in zip(links, in_pool, strict=True))
            tally.bridgeable += all(links)
            tally.bridgeable_in_pool += all(a and b for a, b in zip(links, in_pool, strict=True))
        for hop in result.hops:
            terms = sorted(set().union(*(vocab.usable(a, q.group, hop.cap) for a in anchors)))
            if terms:
                texts[hop.cap] = f"{q.query} {' '.join(terms)}"
        hop_text.append(texts)
    if warm is not None:
        warm([t for texts in hop_text for t in texts.values()])
    for q, (deep, _), texts in zip(ds.questions, firsts, hop_text, strict=True):
        got = deep[:k]
        for hop in result.hops:
            covered = got
            if hop.cap in texts:
                covered = union(got, recall(q, texts[hop.cap], k)[0])
            hop.full += found(covered, q.gold) == len(q.gold)
            hop.recall_sum += found(covered, q.gold) / len(q.gold)
    return result


def vocabulary_stats(vocab: Vocabulary, top: int = 5) -> dict:
    """Coverage (items with >= 1 entity) and each group's most frequent entities."""
    with_entity = sum(1 for terms in vocab.of.values() if terms)
    return {"items": len(vocab.of), "items_with_entity": with_entity,
            "top_df": {g: [[e, n, n / vocab.size[g]] for e, n in df.most_common(top)] for g, df in vocab.df.items()}}


def _caps_table(r: dict) -> Table:
    """One system's DF-cap rows (the one table model): links, bridgeable failures, promotions."""
    f, n, missing = r["failures"], r["questions"], r["missing"]
    cols = tuple(Column(key, header) for key, header in (
        ("cap", "DF cap"), ("linked_misses", "linked misses"), ("linked_in_pool", "of which in pool"),
        ("bridgeable", "bridgeable failures"), ("bridgeable_in_pool", "bridgeable in pool"),
        ("promoted_full", "covered after promotion (<= 3)"), ("promotions", "promotions (gold / noise)")))
    body = tuple((Cell(c["cap"], f"{c['cap']:.2f}"),
                  Cell(c["linked_misses"],
                       f"{c['linked_misses']}/{missing} ({fmt_share(c['linked_misses'], missing)})"),
                  Cell(c["linked_in_pool"], str(c["linked_in_pool"])),
                  Cell(c["bridgeable"], f"{c['bridgeable']}/{f} ({fmt_share(c['bridgeable'], f)})"),
                  Cell(c["bridgeable_in_pool"], str(c["bridgeable_in_pool"])),
                  Cell(c["promoted_full"], f"{c['promoted_full']}/{n} (vs {r['single_full']})"),
                  Cell(c["promotions"], f"{c['promotions']} ({c['promoted_gold']} / "
                                        f"{c['promotions'] - c['promoted_gold']})")) for c in r["caps"])
    return Table(cols, body)


def render(doc: dict) -> str:
    """Markdown from a ``-entity-bridge`` results file, memini's published figures beside ours."""
    config, vocab = doc["config"], doc["vocabulary"]
    key = published.embedder_key(config.get("embedder", ""))
    lo, hi = published.ENTITY_BRIDGEABLE_RANGE
    out = [f"Entity bridge — {config['dataset']}: {config['questions']} questions, k {config['bridge_k']}, pool "
           f"{config['bridge_pool']}, embedder {config.get('embedder') or '-'}; {vocab['items_with_entity']} of "
           f"{vocab['items']} items have an entity ({fmt_share(vocab['items_with_entity'], vocab['items'])})"]
    for name, stats in doc.get("vocabularies", {}).items():
        out[0] += (f", {stats['items_with_entity']} ({fmt_share(stats['items_with_entity'], stats['items'])}) have a "
                   f"{name[:-1]}")
    for r in doc["results"]:
        f, n = r["failures"], r["questions"]
        label = r.get("vocabulary", DEFAULT_VOCABULARY)
        out += ["", f"**{r['system']}**" + (f" ({label})" if label != DEFAULT_VOCABULARY else "")
                + f": single recall covers {r['single_full']}/{n}; {f} failures, {r['missing']} "
                f"missing golds, {r['missing_in_pool']} in the {config['bridge_pool']}-deep pool "
                f"({fmt_share(r['missing_in_pool'], r['missing'])}; not in it: "
                f"{fmt_share(r['missing'] - r['missing_in_pool'], r['missing'])}"
                + (f", memini {published.MISSING_NOT_IN_POOL:.0f}%" if key else "") + ")", "",
                render_table(_caps_table(r), "md").rstrip("\n")]
        hops = "; ".join(f"DF cap {h['cap']:.2f}: full-gold {fmt_share(h['full'], n)}, mean gold recall "
                         f"{fmt_share(h['recall_sum'], n)}" for h in r["hops"])
        out += ["", f"{label.capitalize()[:-1] if label != DEFAULT_VOCABULARY else 'Entity'}-anchored 2nd hop — "
                f"{hops}."]
        if "leaked" in r:  # -leaks count
            out += ["", leaked_line({r["system"]: r["leaked"]})]
    if key:
        q, m = published.ENTITY_HOP_FULL_GOLD["qwen3-0.6b"], published.ENTITY_HOP_FULL_GOLD["minilm"]
        clo, chi = published.CONCEPT_LINKED_RANGE
        cq, cm = published.CONCEPT_PROMOTION["qwen3-0.6b"], published.CONCEPT_PROMOTION["minilm"]
        out += ["", f"memini (its hybrid, 277 questions): {lo}-{hi}% of failures bridgeable under a DF cap <= 10%; "
                f"2nd hop full-gold {m['entities']}% anchored on entities / {m['concepts']}% on concepts (MiniLM), "
                f"{q['entities']} / {q['concepts']}% (qwen3-0.6b); its text names the vocabulary, not the DF cap. "
                f"Concept links: {clo}-{chi}% in principle, but promotion covers {cm[0]}-{cm[1]} questions vs "
                f"{cm[2]} without (MiniLM), {cq[0]}-{cq[1]} vs {cq[2]} (qwen3-0.6b)."]
    return "\n".join(out) + "\n"
