"""The speed, scale and GPU blocks (docs/performance.md), rendered from the benchmark files in ``results/bench/``.

``make scale`` writes ``results/bench/scale.json`` (``devbench.scale``) and ``make speed`` writes
``results/bench/speed.json`` (``devbench.speed``); each block shows what that file holds, the machine's load
when it ran, and each of the speed and scale targets beside the measured figure with whether it was met. A missing file
renders as a one-line note naming the command that writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from memini_bench.core.table import fmt_num, fmt_pct, markdown, table_of

# Issue 15's targets, as (label, limit, at_least): a figure meets its target when it is at most the limit, or at
# least the limit where ``at_least``.
#: The shared-file rate the less-shared M file is held to (memory growing with distinct texts at no more than it):
#: issue 42's M run, 3.24 GB (run + child) over 50,685 distinct texts, in KB per distinct text.
SHARED_RATE_KB = round(3.24e6 / 50_685, 1)
SCALE_TARGETS = {"wall_s": ("S warm wall time", 30.0, False), "peak_gb": ("S warm peak RSS (GB)", 2.0, False),
                 "p50_ms": ("S warm hybrid p50 (ms)", 0.5, False), "m_peak_gb": ("M peak RSS (GB)", 24.0, False),
                 "m_tree_gb": ("M peak RSS, run + child processes (GB)", 2.5, False),
                 "m_pss_gb": ("M sampled peak PSS, run + child processes, shared pages once (GB)", 2.5, False),
                 "m_cpu_s": ("M CPU time, run + child processes (s)", 30.0, False),
                 "less_kb": ("M-less: run + child processes peak per distinct text past M's (KB)", SHARED_RATE_KB,
                             False)}
SPEED_TARGETS = {"keyword_x": ("keyword leg vs FTS5 (x faster, at least)", 30.0, True),
                 "hybrid_p50_ms": ("memini-hybrid p50, LoCoMo turn level (ms)", 0.2, False),
                 "warm_s": ("warm full LoCoMo run (s)", 1.5, False),
                 "bf16_x": ("-precision bf16 vs model.encode fp32 (x faster, at least)", 2.0, True),
                 "bf16_r5_pp": ("-precision bf16 LoCoMo vector R@5 vs fp32 (pp, absolute)", 0.3, False),
                 "overhead": ("harness CPU per recall / memini-hybrid's own", 0.1, False),
                 "overhead_outside": ("the same, from outside: run_system less a bare recall loop / that loop", 0.1,
                                      False)}
MILLISECONDS = ("p50_ms", "hybrid_p50_ms")  # shown to three decimals


def _read(results_dir: Path, name: str) -> dict | None:
    path = Path(results_dir) / "bench" / name
    return json.loads(path.read_text()) if path.exists() else None


def _verdict(value: float | None, limit: float, at_least: bool = False) -> str:
    if value is None:
        return "not measured"
    met = value >= limit if at_least else value <= limit
    return "met" if met else "**not met**"


def _targets_table(targets: dict, values: dict, verdicts: dict | None = None) -> list[str]:
    """The targets table: each target's limit, the measured value and met / not met (``verdicts`` overrides)."""
    rows = []
    for key, (label, limit, at_least) in targets.items():
        value = values.get(key)
        verdict = (verdicts or {}).get(key) or _verdict(value, limit, at_least)
        rows.append([label, (limit, f"{limit:g}"), (value, fmt_num(value, 3 if key in MILLISECONDS else 2)),
                     verdict])
    return _lines("target:l|limit:r|measured:r|verdict:l", rows)


def _lines(header: str, rows: list) -> list[str]:
    """A table (``core.table.table_of``) as Markdown lines."""
    return markdown(table_of(header, rows)).rstrip("\n").split("\n")


def _machine(config: dict) -> str:
    load = config.get("load_average") or []
    loads = f", load average {load[0]:.1f} when it started" if load else ""
    return f"{config.get('cpus', '?')} CPUs{loads}; commit {config.get('git_commit', '?')}"


def scale_block(results_dir: Path) -> str:
    """Every ``make scale`` run (the same columns ``make scale`` prints) and the S and M targets."""
    from devbench.scale import HEADER, Measured, row

    doc = _read(results_dir, "scale.json")
    if doc is None:
        return "_(`results/bench/scale.json` is not committed yet: `make scale` writes it)_\n"
    runs = [Measured(**r) for r in doc["runs"]]
    lines = [f"`make scale` ({doc['config']['embedder']} embedder, seed {doc['config']['seed']}; "
             f"{_machine(doc['config'])}):", "", HEADER, *[row(m) for m in runs], ""]
    s_warm = next((m for m in runs if m.label == "S" and m.run == "warm" and not m.error), None)
    m_run = next((m for m in runs if m.label == "M"), None)
    values = {"wall_s": s_warm.wall_s if s_warm else None, "peak_gb": s_warm.peak_gb if s_warm else None,
              "p50_ms": s_warm.report["p50_ms"].get("memini-hybrid") if s_warm else None,
              "m_peak_gb": m_run.peak_gb if m_run else None,
              "m_tree_gb": m_run.report.get("peak_gb_with_children") if m_run and not m_run.error else None,
              "m_cpu_s": m_run.report.get("cpu_s") if m_run and not m_run.error else None,
              "m_pss_gb": m_run.tree_pss_peak_gb or None if m_run and not m_run.error else None}
    less = next((m for m in runs if m.label == "M-less" and not m.error), None)
    if less is not None and m_run is not None and not m_run.error:
        extra = less.report["distinct_texts"] - m_run.report["distinct_texts"]
        grown = less.report["peak_gb_with_children"] - m_run.report["peak_gb_with_children"]
        values["less_kb"] = grown * 1e6 / extra if extra > 0 else None
    sampled = [m for m in runs if m.tree_pss_peak_gb]
    if sampled:
        lines += ["Sampled every half second by `make scale`, the largest proportional set size (PSS: each shared page "
                  "split between the processes sharing it) of the run and its children together, a measure of the "
                  "whole run's memory that counts no page twice (a sample may miss a short peak): "
                  + "; ".join(f"{m.label} {m.run} {m.tree_pss_peak_gb:.2f} GB" for m in sampled) + ".", ""]
    loads = [m for m in runs if len(m.load_average) == 2]
    if loads:
        lines += ["1-minute load average before and after each run: "
                  + "; ".join(f"{m.label} {m.run} {m.load_average[0]:.1f} / {m.load_average[1]:.1f}" for m in loads)
                  + ".", ""]
    forked = [m.report.get("children_peak_gb", 0.0) for m in runs if not m.error]
    if any(forked):
        lines += [f"Peak RSS is the run's own process. A child process of the run peaked at up to {max(forked):.2f} "
                  "GB RSS (pages it shares with the run by fork included); its CPU time is in the CPU column.", ""]
    load, cpus = (doc["config"].get("load_average") or [0.0])[0], doc["config"].get("cpus") or 1
    if load > cpus:
        lines += [f"The machine was shared when this ran (load average {load:.1f} on {cpus} CPUs): the wall-clock "
                  "figures (wall s, the phase columns, the p50s) stretch with the load; CPU s and peak RSS do not.",
                  ""]
    stopped = {"m_peak_gb": f"**not met** ({m_run.error})"} if m_run is not None and m_run.error else {}
    return "\n".join(lines + _targets_table(SCALE_TARGETS, values, stopped)) + "\n"


def _x(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else "-"


def speed_block(results_dir: Path) -> str:
    """``make speed``'s figures: keyword leg vs FTS5, embedding throughput, the full LoCoMo run cold and warm, the
    fast path vs the reference path per system, the peers' p50 as multiples of memini's, and the targets."""
    doc = _read(results_dir, "speed.json")
    if doc is None:
        return "_(`results/bench/speed.json` is not committed yet: `make speed` writes it)_\n"
    lines = [f"`make speed` ({_machine(doc['config'])}); each ratio is against a reference measured in the same "
             "process:", ""]
    values: dict[str, float | None] = dict.fromkeys(SPEED_TARGETS)
    k = doc.get("keyword")
    if k:
        values["keyword_x"] = k["speedup_p50"]
        lines.append(f"- keyword leg, LoCoMo turn level, pool 50, {k['queries']} queries interleaved: memini "
                     f"({k.get('path', 'numpy')}) p50 {k['memini_p50_ms']:.3f} ms vs SQLite FTS5 p50 "
                     f"{k['fts5_p50_ms']:.3f} ms: "
                     f"**{k['speedup_p50']:.1f}x** (mean {k['speedup_mean']:.1f}x); rankings identical")
    lines += _embedding_lines(doc.get("embedding"), values, doc.get("precision_recall"))
    w = doc.get("end_to_end")
    if w:
        values["warm_s"] = w["warm_s"]
        runs = ", ".join(f"{x:.2f}" for x in w.get("warm_runs_s", [w["warm_s"]]))
        lines.append(f"- full LoCoMo turn-level run (`-k 5,10`, MiniLM, memini's three systems, process start "
                     f"included): cold cache {w['cold_s']:.1f} s, warm cache **{w['warm_s']:.2f} s** (the fastest "
                     f"of {runs} s)")
    h = doc.get("hybrid")
    if h:
        values["hybrid_p50_ms"] = h["hybrid_fast_p50_ms"]
        compiled = h.get("path") == "C kernel"
        path = "C kernels for the keyword leg, the vector top k and fusion" if compiled else "no C kernels"
        lines += ["", f"Fast path ({path}) vs reference path, LoCoMo turn level, k 10, "
                  f"{h.get('embedder', 'minilm')} vectors, "
                  f"{h['queries']:.0f} queries interleaved; every ranking and score identical:", ""]
        rows = [[f"memini-{part}", *((h[f"{part}_{key}"], fmt_num(h[f"{part}_{key}"], 3))
                                     for key in ("fast_p50_ms", "reference_p50_ms")),
                 _x(h[f"{part}_reference_p50_ms"], h[f"{part}_fast_p50_ms"]),
                 *((h[f"{part}_{key}"], fmt_num(h[f"{part}_{key}"], 3))
                   for key in ("fast_cpu_p50_ms", "reference_cpu_p50_ms"))] for part in ("hybrid", "vector", "keyword")]
        lines += _lines("system:l|fast p50 ms:r|reference p50 ms:r|ratio:r|fast CPU p50 ms:r|reference CPU p50 ms:r",
                        rows)
    o = doc.get("overhead")
    if o:
        values["overhead"] = o["harness_over_hybrid"]
        if "outside_harness_over_hybrid" in o:
            values["overhead_outside"] = o["outside_harness_over_hybrid"]
        own_run = f" (measured apart: {_machine(o['config'])})" if "config" in o else ""
        lines += ["", f"The harness per recall (`run_system`: hooks, the recall bound's timer, the checks of each "
                  f"returned list, token counts), LoCoMo turn level, k 10, {o.get('embedder', 'minilm')} vectors, "
                  f"{o['queries']} questions, median of {o['rounds']} runs{own_run}: {o['harness_cpu_ms']:.3f} ms "
                  f"CPU against memini-hybrid's own {o['hybrid_own_cpu_ms']:.3f} ms: "
                  f"**{fmt_pct(o['harness_over_hybrid'], 1)}**{_iqr(o, 'harness_over_hybrid_iqr')}"
                  + _plugin_overhead(o) + _outside_overhead(o)]
    p = doc.get("peers")
    if p:
        base = p["p50_ms"]
        lines += ["", "Recall p50 on the same 500 LoCoMo questions, one process, one shared encoder, as multiples "
                  "of memini-hybrid's:", ""]
        lines += _lines("system:l|p50 ms:r|x memini-hybrid:r",
                        [[name, (ms, fmt_num(ms, 3)), _x(ms, base["memini-hybrid"])] for name, ms in base.items()])
    return "\n".join([*lines, "", *_targets_table(SPEED_TARGETS, values)]) + "\n"


def _plugin_overhead(o: dict) -> str:
    """The overhead sentence's tail: the same hybrid guarded as a plugin (the process checks after every recall
    that memini's own systems are spared), where measured."""
    if "plugin_harness_over_hybrid" not in o:
        return ""
    return (f"; the same system guarded as a plugin is (its threads, standard streams and working folder checked "
            f"after every recall): {o['plugin_harness_cpu_ms']:.3f} ms against {o['plugin_hybrid_own_cpu_ms']:.3f} "
            f"ms, {fmt_pct(o['plugin_harness_over_hybrid'], 1)}")


def _outside_overhead(o: dict) -> str:
    """The overhead sentence's end: the figure from outside (no timer inside the recall), where measured."""
    if "outside_harness_over_hybrid" not in o:
        return "."
    return (f". From outside (a bare loop of the hybrid's recall over the same questions against `run_system` over "
            f"them, its per-run work taken off; no timer inside the recall): "
            f"**{fmt_pct(o['outside_harness_over_hybrid'], 1)}**{_iqr(o, 'outside_harness_over_hybrid_iqr')} of "
            f"the bare loop's {o['outside_bare_cpu_ms']:.3f} ms.")


def _iqr(o: dict, key: str) -> str:
    """`` (rounds' interquartile range a-b%)`` where the file has it, else nothing."""
    if key not in o:
        return ""
    low, high = o[key]
    return f" (rounds' interquartile range {fmt_pct(low, 1, sign='')}-{fmt_pct(high, 1)})"


def _bf16_variant(rows: dict) -> str:
    """The bf16 variant the target is read from: OpenVINO's when it was measured (the fast one), else torch's."""
    return "openvino-bf16" if "openvino-bf16" in rows else "bf16"


def _variant_text(kind: str, row: dict) -> str:
    """``bf16 14.3/s = 1.94x (1 - cos 6.0e-05)``, noting the precision in effect when it fell back to fp32."""
    from devbench.speed import requested_precision

    fallback = "" if row["precision"] == requested_precision(kind) else f", {row['precision']} in effect"
    return f"{kind} {row['texts_per_s']:.1f}/s = {row['ratio']:.2f}x (1 - cos {row['max_1_minus_cos']:.1e}{fallback})"


def _embedding_lines(e: dict | None, values: dict, recall: dict | None = None) -> list[str]:
    """One line per text set (``speed.embedding``: texts/s of each variant as median per-round ratios against plain
    ``model.encode`` fp32, and its max ``1 - cos`` against the harness's fp32), then LoCoMo vector recall per
    variant (``speed.precision_recall``). The bf16 targets take the slowest set's ratio and ``|R@5 - fp32 R@5|``."""
    if not e:
        return []
    lines, ratios, variant = [], [], ""
    for part in e["sets"].values():
        rows = part["rows"]
        variant = _bf16_variant(rows)
        ratios.append(rows[variant]["ratio"])
        shown = "; ".join(_variant_text(kind, row) for kind, row in rows.items() if kind != "direct")
        lines.append(f"- embedding, MiniLM, {part['texts']} {part['label']}, {e['rounds']} interleaved rounds: "
                     f"plain `model.encode` fp32 {rows['direct']['texts_per_s']:.1f} texts/s; harness {shown}")
    values["bf16_x"] = min(ratios) if ratios else None
    if recall:
        lines.append("- LoCoMo turn level, memini-vector, all questions: " + "; ".join(
            f"{name} R@5 {fmt_pct(row['r5'], 2)} R@10 {fmt_pct(row['r10'], 2)} MRR {fmt_pct(row['mrr'], 2)}"
            for name, row in recall.items()))
        base, low = recall.get("fp32-torch"), recall.get("bf16-openvino" if variant == "openvino-bf16" else
                                                            "bf16-torch")
        if base and low:
            values["bf16_r5_pp"] = abs(low["r5"] - base["r5"]) * 100
    if variant:
        lines.append(f"- the bf16 targets below are read from `{variant}`"
                     + (" (`-precision bf16 -embed-backend openvino`)" if variant == "openvino-bf16" else ""))
    return lines


def gpu_block(results_dir: Path) -> str:
    """``make gpu``'s figures (``devbench.gpu``): texts/s per precision and batch size on the device named
    in the file, each against fp32 at the same batch size, and each precision's LoCoMo memini-vector recall."""
    doc = _read(results_dir, "gpu.json")
    if doc is None:
        return ("_(not measured yet: no GPU has been lent to this project's sessions; `make gpu` on a CUDA machine "
                "writes `results/bench/gpu.json`, and this block shows it)_\n")
    c = doc["config"]
    lines = [f"`make gpu` on {c.get('hardware', '?')} (`--device {c.get('device', '?')}`, torch {c.get('torch', '?')}, "
             f"MiniLM at {c.get('max_tokens', '?')} tokens; commit {c.get('git_commit', '?')}); the fastest of "
             f"{c.get('rounds', '?')} passes, device synchronised:", ""]
    fp32 = {(r["set"], r["batch"]): r["texts_per_s"] for r in doc["rows"] if r["precision"] == "fp32"}
    rows = []
    for r in doc["rows"]:
        base = fp32.get((r["set"], r["batch"]))
        rows.append([r["precision"], (r["batch"], str(r["batch"])), f"{r['texts']} {r['set']}",
                     (r["texts_per_s"], fmt_num(r["texts_per_s"], 1)),
                     f"{r['texts_per_s'] / base:.2f}x" if base else "-",
                     (r["max_1_minus_cos"], f"{r['max_1_minus_cos']:.1e}")])
    lines += _lines("precision:l|batch:r|texts:l|texts/s:r|x fp32:r|max 1 - cos vs fp32:r", rows)
    recall = [[p, *((r[m], fmt_pct(r[m], 2)) for m in ("r5", "r10", "mrr"))] for p, r in doc["recall"].items()]
    lines += ["", *_lines("precision:l|recall_any@5:r|recall_any@10:r|mrr:r", recall)]
    return "\n".join(lines) + "\n"
