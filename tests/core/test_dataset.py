"""Preparation: memini's holdout split and even subsample, and our -limitN naming."""

from __future__ import annotations

import pytest

from memini_bench.core.dataset import Dataset, Item, Question, prepare, split_holdout, subsample
from memini_bench.errors import BenchError


def _toy(n: int) -> Dataset:
    items = tuple(Item(id=f"i{g}", content=f"text {g}", group=f"g{g}") for g in range(n))
    questions = tuple(Question(id=f"q{i}", query="q", gold=(f"i{i}",), group=f"g{i}") for i in range(n))
    return Dataset("toy", items, questions)


def test_holdout_on_locomo(locomo):
    held = split_holdout(locomo, "held")
    tune = split_holdout(locomo, "tune")
    assert (len(held.questions), len(tune.questions)) == (198, 1784)
    assert held.name == "locomo-held" and tune.name == "locomo-tune"
    assert held.questions[0] is locomo.questions[9] and held.questions[1] is locomo.questions[19]


def test_holdout_prunes_items_to_kept_groups():
    ds = split_holdout(_toy(20), "held")
    assert [q.id for q in ds.questions] == ["q9", "q19"]
    assert [i.id for i in ds.items] == ["i9", "i19"]
    with pytest.raises(BenchError):
        split_holdout(ds, "bogus")


def test_even_subsample_and_name():
    ds = subsample(_toy(10), 4)  # step 2.5 -> indices 0, 2, 5, 7
    assert [q.id for q in ds.questions] == ["q0", "q2", "q5", "q7"]
    assert ds.name == "toy-limit4"
    assert subsample(_toy(3), 5).name == "toy"
    assert prepare(_toy(100), holdout="tune", limit=9).name == "toy-tune-limit9"


# --- empty preparations, holdout with excluded questions, identity of the data -----------------------------------

def test_a_preparation_that_leaves_nothing_is_an_error_naming_the_flags():
    from memini_bench.core.dataset import EmptyDataset

    with pytest.raises(EmptyDataset, match="-holdout held: leaves none of the 8 questions of toy to score; use "
                                           "-holdout all or tune"):
        prepare(_toy(8), holdout="held")
    # questions whose groups have no items: the prune leaves 0 items (this crashed in the composite re-rank)
    ds = Dataset("toy", (Item("a", "x", group="g"),),
                 (Question("q0", "q", ("a",), group="nobody"), Question("q1", "q", ("a",), group="g")))
    with pytest.raises(EmptyDataset, match="-limit 1: leaves no item of toy in the groups of the 1 questions"):
        prepare(ds, limit=1)
    with pytest.raises(BenchError, match="-limit -3"):
        prepare(ds, limit=-3)
    assert prepare(ds, limit=2) is ds


def _abstention_records(n: int, abs_at: set[int]) -> list[dict]:
    return [{"question_id": f"q{i}" + ("_abs" if i in abs_at else ""), "question": f"question {i}",
             "answer_session_ids": ["s"], "haystack_session_ids": ["s"], "haystack_dates": [""],
             "haystack_sessions": [[{"role": "user", "content": f"text {i}"}]]} for i in range(n)]


@pytest.mark.parametrize("abstention", ["exclude", "include"])
def test_longmemeval_holdout_is_memini_s_whatever_abstention_says(tmp_path, abstention):
    """memini holds out i % 10 == 9 of the full question list; excluding _abs questions must not shift it."""
    import json

    from memini_bench.loaders import LoadOptions, load

    path = tmp_path / "lme.json"
    path.write_text(json.dumps(_abstention_records(30, abs_at={3, 19})))
    ds = load("longmemeval", str(path), LoadOptions(abstention=abstention))
    held = prepare(ds, holdout="held")
    expected = ["q9", "q19_abs", "q29"] if abstention == "include" else ["q9", "q29"]
    assert [q.id for q in held.questions] == expected
    # memini's held corpus: every held question's haystack, the excluded one's included
    assert [i.group for i in held.items] == ["q9", "q19_abs", "q29"]
    tune = prepare(ds, holdout="tune")
    assert len(tune.questions) == (27 if abstention == "include" else 26) and "q3_abs" in tune.groups


def test_longmemeval_real_file_held_set_is_memini_s(lme_dir):
    import json

    from memini_bench.loaders import load

    path = lme_dir / "longmemeval_oracle_sample97.json"
    ids = [r["question_id"] for r in json.loads(path.read_text())]
    held = prepare(load("longmemeval", str(path)), holdout="held")
    assert [q.id for q in held.questions] == [q for i, q in enumerate(ids) if i % 10 == 9 and not q.endswith("_abs")]


def test_names_are_safe_and_prepare_suffixes_survive():
    long = Dataset("x" * 300, (), ())
    assert long.name == "x" * 200
    from memini_bench.core.dataset import MAX_NAME_BYTES, file_safe_name

    loaded = file_safe_name("é" * 300)
    assert len(loaded.encode()) <= MAX_NAME_BYTES
    assert prepare(_toy(100).with_(name=loaded), holdout="tune", limit=9).name == loaded + "-tune-limit9"


def test_source_sha256_of_several_files_is_their_listing_s():
    import hashlib

    from memini_bench.core.dataset import Source

    one = Dataset("d", (), (), sources=(Source("b", "22", 1),))
    two = Dataset("d", (), (), sources=(Source("b", "22", 1), Source("a", "11", 1)))
    assert one.source_sha256 == "22" and Dataset("d", (), ()).source_sha256 == ""
    assert two.source_sha256 == hashlib.sha256(b"11  a\n22  b\n").hexdigest()


def test_several_files_hash_by_their_paths_inside_the_set_so_two_copies_hash_the_same():
    import hashlib

    from memini_bench.core.dataset import Source

    def copy_at(root: str) -> Dataset:
        return Dataset("d", (), (), sources=(Source(f"{root}/2/chat.json", "bb", 1),
                                             Source(f"{root}/1/chat.json", "aa", 1)))

    listing = hashlib.sha256(b"aa  1/chat.json\nbb  2/chat.json\n").hexdigest()
    assert copy_at("/work/beam/chats/100K").source_sha256 == copy_at("/root/.cache/data/beam-100k/.").source_sha256 \
        == copy_at("../shared/beam-100k").source_sha256 == listing
    # different bytes or a different layout inside the set is another data set
    assert Dataset("d", (), (), sources=(Source("/a/1/chat.json", "aa", 1), Source("/a/3/chat.json", "bb", 1))) \
        .source_sha256 != listing
