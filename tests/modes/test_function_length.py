"""No function in the modes or the CLI's verbs runs over 60 lines (a mode is plan, run, render, write, each made of
named steps), counted with ast from ``def`` to its last line, decorators and docstring included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "memini_bench"
MOST = 60


def long_functions(folder: Path, most: int = MOST) -> list[str]:
    """``path:line name: N lines`` for every function of ``folder``'s modules over ``most`` lines."""
    out = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = node.end_lineno - first + 1
                if length > most:
                    out.append(f"{path.name}:{node.lineno} {node.name}: {length} lines")
    return out


def test_no_function_in_the_modes_or_the_verbs_is_over_60_lines():
    assert not long_functions(ROOT / "modes") + long_functions(ROOT / "cli") + long_functions(ROOT / "api")


def test_the_count_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MOST))
    (tmp_path / "m.py").write_text(f"def short():\n    return 1\n\n\n@staticmethod\ndef long():\n{body}\n")
    assert long_functions(tmp_path) == [f"m.py:6 long: {MOST + 2} lines"]
