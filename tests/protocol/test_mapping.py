"""Mapping files: every shipped one reads; each fault of a hand-written one is one line naming the file and the key;
JSON paths and placeholders behave as documented (hand-computed cases)."""

from __future__ import annotations

import pytest

from memini_bench.core import builtins
from memini_bench.core.registry import SYSTEMS
from memini_bench.errors import BenchError
from memini_bench.systems.protocol import mapping
from memini_bench.systems.protocol.factory import split_argument
from tests.conftest import needs_extra

MINIMAL = """name = "x"
command = ["srv"]
[ingest]
tool = "put"
arguments = { text = "{content}" }
[recall]
tool = "find"
arguments = { q = "{query}" }
results = "$.hits"
id = "id"
"""


def _parse(tmp_path, text: str, kind: str = "mcp", name: str = "m.toml"):
    path = tmp_path / name
    path.write_text(text)
    return mapping.load(kind, str(path))


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k in ("mcp", "http") for n in mapping.shipped(k)])
def test_every_shipped_mapping_reads_and_is_listed(kind, name):
    spec = mapping.load(kind, name)
    assert spec.label == f"{kind}:{name}"
    help_line = next(b.help for b in builtins.SYSTEMS if b.name == kind)
    assert name in help_line  # -list systems names every shipped mapping


def test_the_shipped_set():
    assert mapping.shipped("mcp") == ["basic-memory", "bm25s-served", "server-memory"]
    assert mapping.shipped("http") == ["mem0", "zep"]


@pytest.mark.parametrize(("change", "said"), [
    (("name = \"x\"", "name = \"x\"\ncolour = 1"), "unknown key 'colour'"),
    (('tool = "put"', 'tool = ""'), "[ingest]: needs tool = the tool name"),
    (('{content}', '{contents}'), "placeholder {contents} does not exist here"),
    (('q = "{query}"', 'q = "{key}"'), "[recall] arguments: placeholder {key} does not exist here"),
    (('command = ["srv"]', 'command = "srv"'), "command must be a list of strings"),
    (('command = ["srv"]', ''), "give command (a stdio server) or url"),
    (('results = "$.hits"', 'results = "$..hits"'), "is not a JSON path this reads"),
    (('id = "id"', 'id = "id"\nid_pattern = "("'), "is not a regular expression"),
    (("name = \"x\"", "name = \"x\"\ngroups = \"magic\""), "groups = 'magic'; use argument"),
    (("name = \"x\"", "name = \"x\"\nbatch = 0"), "batch = 0 must be a positive whole number"),
    (("name = \"x\"", "name = \"x\"\nbatch = 5"), "batch = 5 needs each ="),
    (('tool = "put"', 'path = "/put"'), "'path' is for HTTP mappings"),
])
def test_a_faulty_mapping_is_one_line_naming_the_key(tmp_path, change, said):
    old, new = change
    with pytest.raises(BenchError) as caught:
        _parse(tmp_path, MINIMAL.replace(old, new, 1))
    assert said in str(caught.value) and str(tmp_path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreadable_files_and_unknown_names(tmp_path):
    with pytest.raises(BenchError, match="not valid TOML"):
        _parse(tmp_path, "name = ")
    with pytest.raises(BenchError, match="not valid JSON"):
        _parse(tmp_path, "{", name="m.json")
    with pytest.raises(BenchError, match="no such mapping; use one of basic-memory, bm25s-served, server-memory"):
        mapping.load("mcp", "nope")
    with pytest.raises(BenchError, match="give a mapping name"):
        mapping.load("mcp", "")
    with pytest.raises(BenchError, match="unknown setting; use timeout"):
        mapping.load("mcp", "basic-memory", {"colour": "red"})
    with pytest.raises(BenchError, match="not a number"):
        mapping.load("mcp", "basic-memory", {"timeout": "soon"})


def test_json_mapping_and_overrides(tmp_path):
    import json
    import tomllib

    spec = _parse(tmp_path, json.dumps(tomllib.loads(MINIMAL)), name="m.json")
    assert spec.recall.target == "find" and spec.timeout == 30.0 and spec.concurrency == 1
    name, overrides = split_argument("mcp", "basic-memory?timeout=5&concurrency=3")
    assert (name, overrides) == ("basic-memory", {"timeout": "5", "concurrency": "3"})
    spec = mapping.load("mcp", name, overrides)
    assert spec.timeout == 5.0 and spec.concurrency == 3


def test_render_keeps_a_lone_placeholders_type():
    values = {"k": 10, "query": "a b", "items": [{"x": 1}]}
    assert mapping.render({"n": "{k}", "s": "top {k}", "l": ["{query}"], "i": "{items}"}, values) == \
        {"n": 10, "s": "top 10", "l": ["a b"], "i": [{"x": 1}]}


@pytest.mark.parametrize(("path", "expected"), [
    ("$", [{"a": [{"b": 1}, {"b": 2}], "c": {"d": "e"}}]),
    ("$.a[*].b", [1, 2]),
    ("$.a[1].b", [2]),
    ("$.a[-1].b", [2]),
    ('$["c"].d', ["e"]),
    ("c.d", ["e"]),
    ("$.missing", []),
    ("$.a[5]", []),
])
def test_json_paths(path, expected):
    assert mapping.select({"a": [{"b": 1}, {"b": 2}], "c": {"d": "e"}}, path) == expected


def test_the_registry_answers_name_colon_argument_for_declared_entries_only():
    needs_extra("mcp", "mcp")
    assert SYSTEMS.known("mcp:basic-memory") and SYSTEMS.known("http:mem0")
    factory = SYSTEMS.get("mcp:basic-memory")
    assert factory.keywords == {"argument": "basic-memory"}
    with pytest.raises(BenchError, match="bm25s"):  # bm25s does not take an argument: module:attr, which fails
        SYSTEMS.get("bm25s:thing")


def test_the_environment_fills_urls(monkeypatch):
    monkeypatch.setenv("MEM0_URL", "http://127.0.0.1:1234")
    assert mapping.environ("${MEM0_URL:-http://x}") == "http://127.0.0.1:1234"
    monkeypatch.delenv("MEM0_URL")
    assert mapping.environ("${MEM0_URL:-http://x}/v1") == "http://x/v1"
