"""``run_cli(args, capsys)``: the CLI run in this process, as ``(exit code, stdout, stderr)``."""

from __future__ import annotations

from memini_bench.cli import main


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def untimed(rows: list[dict]) -> list[dict]:
    """A results file's rows without what the clock decides: the ``*_ms`` fields and the latency scores."""
    return [{k: ({m: x for m, x in v.items() if not m.startswith("latency")} if k == "scores" else v)
             for k, v in r.items() if not k.endswith("_ms")} for r in rows]
