"""Scale support: the streaming JSON array reader (against orjson and the whole-file reader), the LongMemEval
loader's text interning and streamed loading, and the LongMemEval-shaped file generator."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest
from conftest import SHARED_DATA, shared

from devbench import synth
from memini_bench.errors import BenchError
from memini_bench.loaders import _stream, load

TRICKY = [
    {"a": "]}[{,\"\\", "b": [1, 2.5e-3, -0.0, True, None], "c": {"d": "é😀\u2028"}},
    {}, [], "x", 12345678901234567890, -7.25e10, {"long": "y" * 300, "n": 9007199254740993},
]


@pytest.fixture(params=["scanner", "json"])
def streamed(monkeypatch, request):
    """Every regular file is streamed, in blocks of ``block`` bytes (set by the test), by the byte stream with the
    C element scanner and by the text stream with json's scanner."""
    if request.param == "scanner" and _stream._jsonscan is None:
        pytest.skip("the C scanner is not built here")
    monkeypatch.setenv("MEMINI_BENCH_KERNELS", "1" if request.param == "scanner" else "0")
    monkeypatch.setattr(_stream, "STREAM_ABOVE", -1)

    def block(n: int) -> None:
        monkeypatch.setattr(_stream, "BLOCK_BYTES", n)
    return block


def _read(path, suite="x"):
    rows, source = _stream.json_array(path, suite)
    return list(rows), source()


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 20])
def test_stream_reader_matches_orjson(tmp_path, streamed, block):
    streamed(block)
    path = tmp_path / "a.json"
    for text in (json.dumps(TRICKY), json.dumps(TRICKY, indent=3, ensure_ascii=False), "[]", " [ 1 ,2 ] \n",
                 "\ufeff[1]", "\ufeff [\"\\\\\", \"a\\\"]\"]", '[{"a": "\\\\"}, "\\\\\\"", 5]'):
        path.write_bytes(text.encode("utf-8"))
        rows, source = _read(path)
        assert rows == orjson.loads(text.removeprefix("\ufeff").encode())
        assert (source.sha256, source.size) == (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)


@pytest.mark.parametrize(("text", "message"), [
    ("", "not a JSON data file"), ('{"a": 1}', "expected an array, got an object"), ("[1, 2", "not valid JSON"),
    ('[{"a": "b}]', "not valid JSON"), ("[1] x", "extra data"), ("[1 2]", "expected ',' or ']'"),
    ("[NaN]", "not valid JSON"), ("[1,]", "not valid JSON"), ("x", "not a JSON data file"),
])
def test_stream_reader_refuses_malformed_files(tmp_path, streamed, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    for block in (2, 1 << 20):
        streamed(block)
        with pytest.raises(BenchError, match=message):
            _read(path, "longmemeval")


def test_stream_reader_refuses_bad_utf8(tmp_path, streamed):
    streamed(1 << 20)
    path = tmp_path / "bad.json"
    path.write_bytes(b'["\xff"]')
    with pytest.raises(BenchError, match="not UTF-8"):
        _read(path, "longmemeval")


def _small_shape(**kw) -> synth.Shape:
    return synth.Shape(records=6, sessions=12, session_chars=1500, pool=20, **kw)


def test_generator_is_deterministic_and_has_the_shape(tmp_path):
    shared("locomo/locomo10.json")
    source = synth.load_source(SHARED_DATA)
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    synth.write(a, source, _small_shape())
    synth.write(b, source, _small_shape())
    synth.write(c, source, _small_shape(seed=1))
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    rows = json.loads(a.read_text())
    assert len(rows) == 6 and all(len(r["haystack_sessions"]) == len(r["haystack_session_ids"]) == 12 for r in rows)
    texts: dict[str, str] = {}
    for r in rows:
        assert set(r["answer_session_ids"]) <= set(r["haystack_session_ids"])
        assert len(set(r["haystack_session_ids"])) == 12
        assert r["haystack_dates"] == sorted(r["haystack_dates"])
        for sid, turns in zip(r["haystack_session_ids"], r["haystack_sessions"], strict=True):
            assert [t["role"] for t in turns[:2]] == ["user", "assistant"]
            assert texts.setdefault(sid, json.dumps(turns)) == json.dumps(turns)  # a session id has one text
    assert len(texts) < 6 * 12  # filler sessions recur across records


def test_longmemeval_streamed_equals_whole_file_and_interns_texts(tmp_path, monkeypatch):
    shared("locomo/locomo10.json")
    path = tmp_path / "lme.json"
    synth.write(path, synth.load_source(SHARED_DATA), _small_shape())
    whole = load("longmemeval", str(path))
    monkeypatch.setattr(_stream, "STREAM_ABOVE", -1)
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 4096)
    streamed = load("longmemeval", str(path))
    assert streamed == whole  # items, questions, notes and the source's hash and size
    by_text: dict[str, object] = {}
    for it in streamed.items:
        assert by_text.setdefault(it.content, it.content) is it.content  # equal texts are one object
    assert len(by_text) < len(streamed.items) == 6 * 12
