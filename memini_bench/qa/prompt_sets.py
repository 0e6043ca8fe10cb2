"""Judge prompt sets (``-qa-prompts``): our own wording (the default), or a benchmark's official judge prompts read
from the user's own checkout of its repository (the project never holds their text).

``PROMPT_SETS`` maps a set's name to its reader: ``memini`` (``prompts.RUBRICS``, no path), ``longmemeval:PATH`` and
``locomo:PATH``. A set gives, for one graded answer, the judge's request ``(name, system, user)`` and the verdict rule
for its reply; the results record the set's name, where it was read from and ``sha256``, the SHA-256 of its prompt
texts (canonical JSON of ``{name: text}``), beside the SHA-256 of the file they came from.

LongMemEval (``PATH`` = a checkout of github.com/xiaowu0162/LongMemEval, or its ``src/evaluation/evaluate_qa.py``): the
file is parsed, never run. Its ``get_anscheck_prompt(task, question, answer, response, abstention)`` holds one template
string per question type (the branches ``task in [...]`` / ``task == '...'`` under ``if not abstention``) and one
abstention template (the ``else``); LongMemEval formats it as ``template.format(question, answer, response)`` and sends
it as the only (user) message -- reproduced here; its verdict rule, ``'yes' in reply.lower()``, is not: every prompt
set's reply is read by ``prompts.parse_verdict`` (``yes`` / ``no`` and ``correct`` / ``incorrect`` alone, anything else
unparseable). The task is the question's category without our ``_abs`` suffix; the abstention template serves the
questions whose id contains ``_abs`` (LongMemEval's test). A category with no template is an error before any call
(LongMemEval raises NotImplementedError). Not reproduced: its ``max_tokens`` 10 (the judge keeps its client's limit).

LoCoMo (snap-research/locomo) ships no judge prompt: its ``task_eval/evaluation.py`` scores answers with token F1,
which the lexical metrics report (``qa.lexical``); ``locomo:PATH`` says so and stops.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from memini_bench.core.inputs import read_regular
from memini_bench.errors import BenchError
from memini_bench.qa import prompts

LME_FILE = "src/evaluation/evaluate_qa.py"
LME_FUNCTION = "get_anscheck_prompt"
MAX_PROMPT_FILE_BYTES = 16 << 20  # evaluate_qa.py is a few kB


def _sha256(texts: Mapping[str, str]) -> str:
    return hashlib.sha256(orjson.dumps(dict(texts), option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class PromptSet:
    """One judge prompt set (module docstring); ``texts`` are every prompt by name."""

    name: str
    texts: Mapping[str, str]
    source: str = ""
    file_sha256: str = ""
    templates: Mapping[str, str] = field(default_factory=dict)  # longmemeval: question type -> template name

    @property
    def sha256(self) -> str:
        return _sha256(self.texts)

    def record(self) -> dict:
        return {"name": self.name, "source": self.source, "sha256": self.sha256, "file_sha256": self.file_sha256}

    def check_categories(self, categories: set[str], question_ids: Mapping[str, str]) -> None:
        """Refuse a data set with a category this set has no prompt for (before any call)."""
        if self.name == "memini":
            return
        for category in sorted(categories):
            abstention = any("_abs" in i for i, c in question_ids.items() if c == category)
            if not abstention and category.removesuffix("_abs") not in self.templates:
                raise BenchError(f"-qa-prompts {self.name}: {self.source} has no judge prompt for category "
                                 f"{category!r} (it has {', '.join(sorted(self.templates))}); use it on LongMemEval "
                                 "or drop -qa-prompts")

    def judge(self, category: str, question_id: str, question: str, reference: str,
              candidate: str) -> tuple[str, str, str]:
        """``(prompt name, system, user)`` of the judge's request for one answer."""
        if self.name == "memini":
            name = prompts.rubric_name(category)
            return name, prompts.RUBRICS[name], prompts.judge_message(question, reference, candidate)
        name = "abstention" if "_abs" in question_id else self.templates[category.removesuffix("_abs")]
        return name, "", self.texts[name].format(question, reference, candidate)

    def verdict(self, reply: str) -> bool | None:
        """The judge's reply read strictly (``prompts.parse_verdict``); None is unparseable."""
        return prompts.parse_verdict(reply)


MEMINI = PromptSet("memini", dict(prompts.RUBRICS), source="memini_bench.qa.prompts")


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values if len(values) == len(node.elts) else None
    return None


def _template(body: list[ast.stmt]) -> str | None:
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["template"]
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
            return stmt.value.value
    return None


def _walk(body: list[ast.stmt], abstention: bool | None, by_task: dict[str, str], out: dict[str, str]) -> None:
    for stmt in body:
        if not isinstance(stmt, ast.If):
            continue
        test = stmt.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and getattr(test.operand, "id", "") == \
                "abstention":
            _walk(stmt.body, False, by_task, out)
            if (template := _template(stmt.orelse)) is not None:
                out["abstention"] = template
            _walk(stmt.orelse, True, by_task, out)
        elif (isinstance(test, ast.Compare) and getattr(test.left, "id", "") == "task" and len(test.ops) == 1
              and isinstance(test.ops[0], ast.In | ast.Eq) and (tasks := _strings(test.comparators[0]))):
            if (template := _template(stmt.body)) is not None:
                name = "+".join(tasks)
                out[name] = template
                by_task.update(dict.fromkeys(tasks, name))
            _walk(stmt.orelse, abstention, by_task, out)


def read_longmemeval(path: str) -> PromptSet:
    """LongMemEval's judge templates from the user's checkout (module docstring)."""
    where = Path(path)
    file = where / LME_FILE if where.is_dir() else where
    spec = f"-qa-prompts longmemeval:{path}"
    try:
        if not file.exists():
            raise FileNotFoundError(file)
        raw = read_regular(file, spec, limit=MAX_PROMPT_FILE_BYTES)  # a FIFO, a device, a huge file: one line
    except OSError:
        raise BenchError(f"{spec}: no {LME_FILE} there; give the path of your checkout of "
                         "github.com/xiaowu0162/LongMemEval") from None
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError) as exc:
        raise BenchError(f"{spec}: {file} is not Python ({exc}); give an unmodified checkout") from None
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == LME_FUNCTION), None)
    by_task: dict[str, str] = {}
    texts: dict[str, str] = {}
    if function is not None:
        _walk(function.body, None, by_task, texts)
    if not by_task or "abstention" not in texts or any(t.count("{}") != 3 for t in texts.values()):
        raise BenchError(f"{spec}: {file} has no {LME_FUNCTION} of the shape this reader knows (one template per "
                         "question type and an abstention one, each with three {} fields); give a checkout of "
                         "LongMemEval's main branch")
    return PromptSet("longmemeval", texts, source=str(file), file_sha256=hashlib.sha256(raw).hexdigest(),
                     templates=by_task)


def read_locomo(path: str) -> PromptSet:
    raise BenchError(f"-qa-prompts locomo:{path}: LoCoMo's repository has no judge prompt (its "
                     "task_eval/evaluation.py scores answers with token F1, reported beside the judge here); drop "
                     "-qa-prompts or give longmemeval:PATH")


PROMPT_SETS = {"longmemeval": read_longmemeval, "locomo": read_locomo}


def prompt_set(spec: str) -> PromptSet:
    """The set named by ``-qa-prompts`` (``""`` or ``memini``: ours; ``NAME:PATH``: an official set)."""
    if spec in ("", "memini"):
        return MEMINI
    name, sep, path = spec.partition(":")
    if not sep or name not in PROMPT_SETS or not path:
        raise BenchError(f"-qa-prompts {spec}: give memini (the default) or one of "
                         f"{', '.join(f'{n}:PATH' for n in PROMPT_SETS)} (PATH: your checkout of its repository)")
    return PROMPT_SETS[name](path)
