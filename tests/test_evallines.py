"""Reading eval lines: the fast column reader and the line-by-line reader agree on every file."""

from __future__ import annotations

import json
import warnings

import numpy as np
import orjson
import pandas as pd
import pytest
from conftest import EXAMPLES, QRELS

import prefeval
from prefeval.engine.evaluation import Evaluation
from prefeval.errors import InputError
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


# --- lines given twice, and a query named "all" (issue 11) -----------------------------------------------

def numbered(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@pytest.mark.parametrize("layout", [lambda d: d, reference_style], ids=["eval", "reference style"])
@pytest.mark.parametrize("kind", ["metric", "pair", "reversed pair"])
def test_a_line_given_twice_is_an_error_naming_both(tmp_path, layout, kind):
    """A repeated metric line silently replaced the first; a pair given twice (or as both B, A and
    A, B) was counted twice."""
    lines = numbered(layout(eval_output(measures=["rpp", "ap"])))
    marker = b'"type":"metric"' if kind == "metric" else b'"runi"'
    first = next(number for number, line in enumerate(lines, start=1) if marker in line.replace(b": ", b":"))
    repeated = lines[first - 1]
    if kind == "reversed pair":
        record = orjson.loads(repeated)
        record["runi"], record["runj"] = record["runj"], record["runi"]
        record = {key: -value if key in ("rpp", "ap") else value for key, value in record.items()}
        repeated = orjson.dumps(record)
    lines.insert(len(lines) - 1, repeated)
    path = tmp_path / "prefs"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError, match=f"a second {kind.split()[-1]} line for sample 0, query 'q101', ") as caught:
        evallines.read_eval_lines(str(path))
    assert caught.value.line == len(lines) - 1
    assert caught.value.message.endswith(f"(the first is line {first})")


def test_a_metric_line_given_twice_in_frames_names_the_rows():
    frame = prefeval.evaluate(QRELS, RUNS, ["ap"])
    with pytest.raises(InputError, match=r"a second metric line .* \(the first is line 1\)") as caught:
        evallines.eval_lines_from_frames([frame, frame.head(1)])
    assert caught.value.source == "<DataFrame>" and caught.value.line == 1


@pytest.mark.parametrize("layout", [lambda d: d, reference_style], ids=["eval", "reference style"])
def test_a_per_query_pair_line_of_a_query_named_all_is_an_error(tmp_path, layout):
    """A per-query pair line has a type, a summary pair line has none: one of a query named "all" was
    silently skipped as a summary line."""
    data = layout(eval_output(measures=["rpp"])).replace(b'"q101"', b'"all"')
    path = tmp_path / "prefs"
    path.write_bytes(data)
    with pytest.raises(InputError, match="a per-query pair line .* of a query named 'all'") as caught:
        evallines.read_eval_lines(str(path))
    assert caught.value.line == 1


def test_summary_lines_read_back_from_pandas_are_still_summaries(tmp_path):
    path = tmp_path / "prefs"
    path.write_bytes(eval_output(measures=["rpp", "ap"]))
    read_back = pd.read_json(path, lines=True, dtype={"qid": str}, precise_float=True)
    assert_same(evallines.eval_lines_from_frames(read_back), evallines.read_eval_lines(str(path)))


def test_both_readers_refuse_what_json_refuses(tmp_path):
    """Text that is not UTF-8 in a later line was read by the column reader (and then crashed the
    JSON writer); a sample number beyond 64 bits overflowed in it. Both are errors of their line."""
    lines = numbered(eval_output(measures=["rpp", "ap"]))
    path = tmp_path / "prefs"
    broken = list(lines)
    at = next(number for number, line in enumerate(lines) if number > 2 and b'"dense"' in line)
    broken[at] = broken[at].replace(b'"dense"', b'"de\xffnse"')
    path.write_bytes(b"\n".join(broken))
    with pytest.raises(InputError, match="malformed JSON") as caught:
        evallines.read_eval_lines(str(path))
    assert caught.value.line == at + 1
    huge = [line.replace(b'"sample":0', b'"sample":100000000000000000000000') for line in lines]
    path.write_bytes(b"\n".join(huge))
    with pytest.raises(InputError, match="'sample' must be an integer") as caught:
        evallines.read_eval_lines(str(path))
    assert caught.value.line == 1
    # a float beyond 64 bits made numpy warn in the fast reader's cast (printed by aggregate, CI run 30)
    beyond = [line.replace(b'"sample":0', b'"sample":1e300') for line in lines]
    path.write_bytes(b"\n".join(beyond))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="'sample' must be an integer") as caught:
            evallines.read_eval_lines(str(path))
    assert caught.value.line == 1


@pytest.mark.parametrize("options", [{}, {"conventions": "trec_eval"}, {"missing_queries": "skip"},
                                     {"samples": 2, "query_fraction": 0.7, "seed": 4}])
def test_lines_built_a_few_queries_at_a_time_are_the_same_bytes(monkeypatch, options):
    """A block's lines are built a slice of queries at a time (RENDER_BYTES): slices of one query,
    of a few, and the whole block give the same lines, the queries a run lacks left out alike."""
    from prefeval.report import eval_lines

    whole = eval_output(**options)
    assert whole.count(b"\n") > 20
    for size in (1, 5000):  # a slice per query; a few queries a slice
        monkeypatch.setattr(eval_lines, "RENDER_BYTES", size)
        assert eval_output(**options) == whole
