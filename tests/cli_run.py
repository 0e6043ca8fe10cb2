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
