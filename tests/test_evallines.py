"""Reading eval lines: the fast column reader and the line-by-line reader agree on every file."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest
from conftest import EXAMPLES, QRELS

from prefeval.evaluation import Evaluation
from prefeval.io import evallines
from prefeval.io.jsonl import numbered_records
from prefeval.report.eval_lines import evaluation_lines

RUNS = [str(EXAMPLES / "runs" / name) for name in ("bm25", "dense", "hybrid")]


def eval_output(**options) -> bytes:
    evaluation = Evaluation.from_files(QRELS, RUNS, jobs=1, **options)
    return b"".join(evaluation_lines(evaluation))


def line_by_line(path) -> evallines.EvalLines:
    return evallines.eval_lines_from_records(str(path), numbered_records(path.read_bytes().split(b"\n"), str(path)))


def assert_same(fast: evallines.EvalLines, slow: evallines.EvalLines) -> None:
    assert fast.measures == slow.measures and fast.metric_names == slow.metric_names
    assert len(fast.samples) == len(slow.samples)
    for a, b in zip(fast.samples, slow.samples):
        assert (a.sample, a.qids, a.runs) == (b.sample, b.qids, b.runs)
        for name in ("metric_query", "metric_run", "pair_query", "pair_first", "pair_second"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert list(a.pairs) == list(b.pairs) and list(a.metrics) == list(b.metrics)
        for m in a.pairs:
            np.testing.assert_array_equal(a.pairs[m], b.pairs[m])
        for m in a.metrics:
            np.testing.assert_array_equal(a.metrics[m], b.metrics[m])


def test_eval_output_takes_the_fast_path(tmp_path, monkeypatch):
    path = tmp_path / "prefs"
    path.write_bytes(eval_output(samples=2, query_fraction=0.8, seed=1))
    slow = line_by_line(path)

    def refuse(*args):
        raise AssertionError("fell back to the line-by-line reader")

    monkeypatch.setattr(evallines, "eval_lines_from_records", refuse)
    fast = evallines.read_eval_lines(str(path))
    assert_same(fast, slow)
    assert [s.sample for s in fast.samples] == [0, 1]
    assert fast.measures[:6] == ["rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision"]


def reference_style(data: bytes) -> bytes:
    """The same lines as Python's json.dumps writes them (pref_eval.py): spaces after , and :."""
    return b"".join(json.dumps(orjson.loads(line)).encode() + b"\n" for line in data.splitlines())


def rename(data: bytes, old: bytes, new: bytes) -> bytes:
    return data.replace(old, new)


@pytest.mark.parametrize("transform", [
    lambda d: d,
    reference_style,
    lambda d: rename(d, b'"bm25"', b'"bm:25"'),
    lambda d: rename(d, b'"dense"', b'"de{n}se"'),
    lambda d: rename(d, b'"hybrid"', b'"hy,brid"'),
    lambda d: rename(d, b'"q101"', b'"q\\"101"'),
    lambda d: rename(d, b'"q102"', b'"q\xc3\xa9102"'),
    lambda d: d.replace(b',"rpp":', b',"extra":1,"rpp":', 3),
    lambda d: b"\n\n" + d.replace(b"\n", b"\n\n"),
], ids=["eval", "reference style", "colon", "braces", "comma", "escaped quote", "unicode", "ragged keys",
        "blank lines"])
def test_fast_and_slow_readers_agree(tmp_path, transform):
    path = tmp_path / "prefs"
    path.write_bytes(transform(eval_output()))
    assert_same(evallines.read_eval_lines(str(path)), line_by_line(path))
