"""The contradiction study (memini ``bench/contradiction_test.go``) on our authored quads:
``python -m memini_bench.studies.contradiction -embedders hash,minilm -locomo L -lme F``.

1. Detector pricing (pure text): each quad's restatement, update and distinct probe is classified against its
   base (``contradict.classify(probe, base)``); per probe class the verdict counts; update recall by trigger kind
   (value, polarity); the costly error is restatement -> update. Then one setting at a time is swept.
2. Similarity gate, per embedder: the bases are the store; each probe is routed to its top-1 base by the vector
   score 1/(1+L2) (its *neighbour*, not necessarily its own base) and the detector runs on (probe, neighbour) when
   that score reaches the floor. Per floor 0.500, 0.525, ..., 0.700: updates routed, updates fired (recall over
   all quads), restatements fired, distincts fired.
3. Wild false positives: real nearest-neighbour pairs, all distinct memories by construction: the first ``-wild``
   unique items of at least 40 characters of LoCoMo (turns) and of the LongMemEval file (sessions), each paired
   with its nearest other item by 1/(1+L2); the update rate among pairs at or above each floor.
4. Stale vs fresh (``studies.stale``), per embedder.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import orjson

from memini_bench.core.settings import Int, command, setting
from memini_bench.core.table import Cell, Column, Table, fmt_pct
from memini_bench.core.table import render as render_table
from memini_bench.embed import endpoints
from memini_bench.embed.encoder import TextEncoder
from memini_bench.embed.factory import EmbedSettings, build_encoder
from memini_bench.errors import BenchError
from memini_bench.results.identity import claim, script_identity
from memini_bench.results.provenance import file_sha256, harness
from memini_bench.results.schema import study_document
from memini_bench.results.write import write_results_file
from memini_bench.studies import published, stale
from memini_bench.studies.contradict import CLASSES, DEFAULT, UPDATE, DetectorConfig, classify
from memini_bench.studies.entity_eval import display_path

QUADS_PATH = Path(__file__).resolve().parents[2] / "data" / "contradiction-quads.json"
PROBES = ("restatement", "update", "distinct")
KINDS = ("value", "polarity")
GATE_FLOORS = tuple(round(0.5 + 0.025 * i, 3) for i in range(9))
WILD_FLOORS = (0.0, 0.575, 0.6, 0.625, 0.65)
SWEEPS = (("overlap_floor", (0.4, 0.5, 0.6)), ("residue_max", (1, 2, 3)), ("neg_overlap_floor", (0.5, 0.6, 0.75)),
          ("alias_prefix_min", (3, 4, 5)))
MIN_QUADS = 36


@dataclass(frozen=True, slots=True)
class Quad:
    kind: str
    base: str
    restatement: str
    update: str
    distinct: str


def read_quads(path: Path = QUADS_PATH) -> tuple[list[Quad], list[stale.Topic]]:
    try:
        doc = orjson.loads(Path(path).read_bytes())
        quads = [Quad(**q) for q in doc["quads"]]
        topics = [stale.Topic(**t) for t in doc["stale_topics"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BenchError(f"{path}: not a quads file ({type(exc).__name__}: {exc}); see data/README.md") from None
    bad = [i for i, q in enumerate(quads) if q.kind not in KINDS or not all(
        isinstance(getattr(q, f), str) and getattr(q, f).strip() for f in ("base", *PROBES))]
    if bad or len(quads) < MIN_QUADS:
        raise BenchError(f"{path}: needs >= {MIN_QUADS} quads of four non-empty texts and kind value|polarity "
                         f"(bad: {bad[:5]}, have {len(quads)})")
    return quads, topics


def pricing(quads: Sequence[Quad], config: DetectorConfig = DEFAULT) -> dict:
    """Verdict counts per probe class and update recall per kind."""
    counts = {p: Counter(classify(getattr(q, p), q.base, config).label for q in quads) for p in PROBES}
    fired = [classify(q.update, q.base, config).label == UPDATE for q in quads]
    by_kind = {k: [sum(f for f, q in zip(fired, quads, strict=True) if q.kind == k), sum(q.kind == k for q in quads)]
               for k in KINDS}
    return {"config": asdict(config), "verdicts": {p: {c: counts[p][c] for c in CLASSES} for p in PROBES},
            "update_by_kind": by_kind, "quads": len(quads)}


def sweeps(quads: Sequence[Quad]) -> list[dict]:
    return [{"setting": name, "value": v, **pricing(quads, dataclasses.replace(DEFAULT, **{name: v}))}
            for name, values in SWEEPS for v in values]


def nearest(queries: np.ndarray, store: np.ndarray, exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each query's nearest store row by ``1/(1 + L2)`` (float64), and that score."""
    d2 = (np.sum(queries.astype(np.float64) ** 2, axis=1)[:, None] + np.sum(store.astype(np.float64) ** 2, axis=1)
          - 2.0 * queries.astype(np.float64) @ store.astype(np.float64).T)
    dist = np.sqrt(np.maximum(d2, 0.0))
    if exclude_self:
        np.fill_diagonal(dist, np.inf)
    best = np.argmin(dist, axis=1)
    return best, 1.0 / (1.0 + dist[np.arange(len(best)), best])


def gate(encoder: TextEncoder, quads: Sequence[Quad]) -> dict:
    bases = encoder.documents([q.base for q in quads])
    out: dict = {"score_stats": {}, "floors": []}
    routed: dict[str, list[tuple[float, int]]] = {}
    for p in PROBES:
        best, score = nearest(encoder.documents([getattr(q, p) for q in quads]), bases)
        routed[p] = list(zip(score.tolist(), best.tolist(), strict=True))
        s = np.sort(score)
        out["score_stats"][p] = {"min": float(s[0]), "median": float(np.median(s)), "p90": float(s[int(0.9 *
                                 (len(s) - 1))]), "max": float(s[-1]),
                                 "own_base": int(sum(b == i for i, b in enumerate(best.tolist())))}
    for floor in GATE_FLOORS:
        row = {"floor": floor}
        for p in PROBES:
            hits = [(i, b) for i, (s, b) in enumerate(routed[p]) if s >= floor]
            row[f"{p}_routed"] = len(hits)
            row[f"{p}_fired"] = sum(classify(getattr(quads[i], p), quads[b].base).label == UPDATE for i, b in hits)
        out["floors"].append(row)
    return out


def wild_texts(suite: str, path: str, limit: int) -> list[str]:
    from memini_bench.loaders import load

    seen: dict[str, None] = {}
    for it in load(suite, path).items:
        if len(it.content) >= 40 and it.content not in seen:
            seen[it.content] = None
            if len(seen) == limit:
                break
    return list(seen)


def wild(encoder: TextEncoder, texts: Sequence[str]) -> dict:
    vectors = encoder.documents(list(texts))
    best, score = nearest(vectors, vectors, exclude_self=True)
    flags = [classify(texts[i], texts[b]).label == UPDATE for i, b in enumerate(best.tolist())]
    rows = []
    for floor in WILD_FLOORS:
        routed = [f for f, s in zip(flags, score.tolist(), strict=True) if s >= floor]
        rows.append({"floor": floor, "routed": len(routed), "flagged": sum(routed)})
    examples = [[texts[i][:160], texts[b][:160]] for i, b in enumerate(best.tolist()) if flags[i]][:5]
    return {"pairs": len(texts), "floors": rows, "flagged_examples": examples}


def run(embedders: Sequence[str], *, locomo: str = "", lme: str = "", wild_limit: int = 500,
        quads_path: Path = QUADS_PATH, emit=print) -> dict:
    quads, topics = read_quads(quads_path)
    doc: dict = {"config": {"quads_file": display_path(quads_path), "quads_sha256": file_sha256(quads_path),
                            "quads": len(quads), "stale_topics": len(topics), "detector": asdict(DEFAULT),
                            "locomo": locomo, "lme": lme, "wild_limit": wild_limit, "embedders": {}, **harness()},
                 "pricing": pricing(quads), "sweeps": sweeps(quads), "gate": {}, "wild": {}, "stale": {}}
    sources = [(name, suite, path) for name, suite, path in (("locomo", "locomo", locomo), ("longmemeval",
               "longmemeval", lme)) if path]
    wild_sets = {name: wild_texts(suite, path, wild_limit) for name, suite, path in sources}
    for name in embedders:
        encoder = build_encoder(EmbedSettings(embedder=name))
        doc["config"]["embedders"][name] = encoder.embedder.identity
        doc["gate"][name] = gate(encoder, quads)
        doc["wild"][name] = {src: wild(encoder, texts) for src, texts in wild_sets.items()}
        doc["stale"][name] = stale.study(encoder, topics)
    emit(render(doc))
    return doc


def class_scores(p: dict) -> dict[str, tuple[float, float]]:
    """Per class c: precision = verdicts c on c-probes / all verdicts c; recall = verdicts c on c-probes / quads."""
    v = p["verdicts"]
    out = {}
    for cls in PROBES:
        said = sum(v[probe][cls] for probe in PROBES)
        out[cls] = (v[cls][cls] / said if said else 0.0, v[cls][cls] / p["quads"])
    return out


def _pricing_row(label: str, p: dict) -> tuple[Cell, ...]:
    v, kinds = p["verdicts"], p["update_by_kind"]
    return (Cell(label, label), Cell(v["restatement"]["update"], str(v["restatement"]["update"])),
            Cell(v["restatement"]["distinct"], str(v["restatement"]["distinct"])),
            Cell(v["update"]["update"], f"{v['update']['update']}/{p['quads']} (value {kinds['value'][0]}/"
                                        f"{kinds['value'][1]}, polarity {kinds['polarity'][0]}/"
                                        f"{kinds['polarity'][1]})"),
            Cell(v["distinct"]["update"], str(v["distinct"]["update"])))


PRICING_COLUMNS = (Column("config", "config", "left"), Column("restatement_update", "restatement -> update"),
                   Column("restatement_distinct", "restatement -> distinct"), Column("update", "update recall"),
                   Column("distinct_update", "distinct -> update"))


def _fraction(k: int, n: int) -> Cell:
    return Cell(k, f"{k}/{n}")


def gate_table(floors: list[dict], n: int, published_gate: dict) -> Table:
    """One embedder's similarity gate, a row per floor; memini's figures (its own 36 quads) beside where known."""
    cols = (Column("floor", "floor"), Column("update_routed", "updates routed"),
            Column("update_fired", "updates fired (recall)"), Column("restatement_fired", "restatements fired"),
            Column("distinct_fired", "distincts fired"))
    cols += (Column("memini", "memini (its quads): recall, misfires"),) if published_gate else ()
    body = []
    for r in floors:
        row = (Cell(r["floor"], f"{r['floor']:.3f}"), _fraction(r["update_routed"], n),
               _fraction(r["update_fired"], n), Cell(r["restatement_fired"], str(r["restatement_fired"])),
               Cell(r["distinct_fired"], str(r["distinct_fired"])))
        m = published_gate.get(r["floor"]) if published_gate else None
        body.append(row + ((Cell(m, f"{m[0]}/36, {m[1]}/{m[2]}" if m else "-"),) if published_gate else ()))
    notes = (f"N: {n} authored quads; each probe is routed when its top-1 base scores at least the floor, fired when "
             "the detector then calls it an update. No marks.",)
    return Table(cols, tuple(body), notes=notes)


def wild_table(w: dict) -> Table:
    """Per floor: the wild pairs whose neighbour scores at least the floor, and those the detector calls updates
    (every one a false positive: the pairs are distinct memories)."""
    cols = (Column("floor", "floor"), Column("routed", "pairs at or above the floor"),
            Column("flagged", "flagged as updates (false positives)", better="lower"))
    body = tuple((Cell(r["floor"], f"{r['floor']:.3f}"), Cell(r["routed"], str(r["routed"])),
                  Cell(r["flagged"], f"{r['flagged']}/{r['routed']}")) for r in w["floors"])
    return Table(cols, body, notes=(f"N: {w['pairs']} nearest-neighbour pairs of distinct memories. No marks.",))


def stale_table(rows: list[dict]) -> Table:
    """Stale against fresh facts per condition: the fresh fact in the window, the stale one above it."""
    cols = (Column("condition", "condition", "left"), Column("k", "k"), Column("fresh_in_window", "fresh in window"),
            Column("stale_above_fresh", "stale above fresh"), Column("both_in_window", "both in window"),
            Column("fresh_mean_rank", "fresh mean rank", better="lower"))
    body = tuple((Cell(r["condition"], r["condition"]), Cell(r["k"], str(r["k"])),
                  *(_fraction(r[key], r["topics"]) for key in ("fresh_in_window", "stale_above_fresh",
                                                              "both_in_window")),
                  Cell(r["fresh_mean_rank"], f"{r['fresh_mean_rank']:.1f}")) for r in rows)
    topics = rows[0]["topics"] if rows else 0
    return Table(cols, body, notes=(f"N: {topics} topics, each a stale and a fresh fact. No marks.",))


def render(doc: dict) -> str:
    """Markdown from the study's results file; memini's figures beside ours (they are for its own quads)."""
    c, pub = doc["config"], published.DETECTOR
    n = c["quads"]
    theirs = f"memini's detector on its own {pub['quads']} quads"
    pricing = (_pricing_row("default (ours)", doc["pricing"]),
               (Cell(theirs, theirs), Cell(pub["restatement_as_update"], str(pub["restatement_as_update"])),
                Cell(None, "-"), Cell(pub["update_recall"], f"{pub['update_recall']}/{pub['quads']} (value "
                                      f"{pub['value_recall'][0]}/{pub['value_recall'][1]}, polarity "
                                      f"{pub['polarity_recall'][0]}/{pub['polarity_recall'][1]})"),
                Cell(pub["distinct_as_update"], str(pub["distinct_as_update"]))),
               *(_pricing_row(f"{s['setting']}={s['value']}", s) for s in doc["sweeps"]))
    classes = tuple((Cell(cls, cls), Cell(p, fmt_pct(p)), Cell(r, fmt_pct(r)))
                    for cls, (p, r) in class_scores(doc["pricing"]).items())
    out = [f"Contradiction detector — {n} authored quads ({c['quads_file']}), memini's thresholds", "",
           render_table(Table(PRICING_COLUMNS, pricing), "md"),
           "Per class at the default (expected class = the probe's; precision over every verdict of that class):", "",
           render_table(Table((Column("class", "class", "left"), Column("precision", "precision"),
                               Column("recall", "recall")), classes), "md").rstrip("\n")]
    for name, g in doc["gate"].items():
        gate_pub = published.GATE.get(published.embedder_key(name) or name, {})
        out += ["", f"Similarity gate — {c['embedders'][name]} (top-1 base by 1/(1+L2); own base found: "
                + ", ".join(f"{p} {g['score_stats'][p]['own_base']}/{n}" for p in PROBES) + ")", "",
                render_table(gate_table(g["floors"], n, gate_pub), "md").rstrip("\n")]
    for name, sources in doc["wild"].items():
        for src, w in sources.items():
            out += ["", f"Wild false positives — {src}, {w['pairs']} nearest-neighbour pairs, {name} "
                    f"(memini: {published.WILD_FALSE_POSITIVE_PCT:.2f}% on 500 LongMemEval-S pairs, data we do not "
                    "have)", "", render_table(wild_table(w), "md").rstrip("\n")]
    for name, s in doc["stale"].items():
        pub_stale = published.STALE_ABOVE_FRESH.get(published.embedder_key(name) or name, {})
        out += ["", f"Stale vs fresh — {name}, {s['topics']} topics (ours), detector fires on {s['detected']}/"
                f"{s['topics']} updates, old facts' mean access {s['old_fact_mean_access']:.1f}", "",
                render_table(stale_table(s["rows"]), "md").rstrip("\n")]
        if pub_stale:
            out += ["", f"memini (its 12 topics, k 3): stale above fresh baseline {pub_stale['baseline']}, confidence "
                    f"shrink {pub_stale['shrink']}, valid_to stamp {pub_stale['valid_to']}."]
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class ContradictionOptions:
    """The flags of ``python -m memini_bench.studies.contradiction``."""

    embedders: str = setting("embedders", "hash,minilm", "Comma-separated embedders for the gate, wild and stale "
                             "parts; sweep = every MEMINI_SWEEP_EMBEDDERS endpoint (url|model|dims).")
    locomo: str = setting("locomo", "", "LoCoMo locomo10.json for wild nearest-neighbour pairs (skipped without it).")
    lme: str = setting("lme", "", "A LongMemEval file for wild nearest-neighbour pairs (skipped without it).")
    wild_limit: int = setting("wild", 500, "Items per wild-pair source.", type=Int(min=2))
    quads: str = setting("quads", str(QUADS_PATH), "The authored quads file.")
    out: str = setting("out", "runs/contradiction.json", "The JSON results file.")
    no_write: bool = setting("no-write", False, "Print the tables only.")


@command(ContradictionOptions, name="contradiction")
def contradiction_command(args: ContradictionOptions) -> None:
    """memini's contradiction study: detector pricing, similarity gate, wild false positives, stale vs fresh."""
    embedders, locomo, lme, wild_limit, quads, out, no_write = (args.embedders, args.locomo, args.lme,
                                                                 args.wild_limit, args.quads, args.out, args.no_write)
    names = endpoints.expand([e.strip() for e in embedders.split(",") if e.strip()])
    if not names:
        raise BenchError("-embedders: name at least one embedder (hash, minilm, wordllama, ...)")
    ident = script_identity("contradiction", args, inputs=("locomo", "lme", "quads"), embedders=names)
    path = None if no_write else claim(Path(out), ident)  # before any embedding
    doc = run(names, locomo=locomo, lme=lme, wild_limit=wild_limit, quads_path=Path(quads),
              emit=lambda text: (sys.stdout.write(text), sys.stdout.flush()))
    if path is not None:
        doc["config"]["identity"] = ident
        write_results_file(path, study_document(doc))
        print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    from memini_bench.core.console import run_command

    run_command(contradiction_command, argv, "contradiction")


if __name__ == "__main__":
    main()
