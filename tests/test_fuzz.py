"""Every reader, fed random bytes and near-valid lines, returns a valid result or raises InputError."""

from __future__ import annotations

import gzip

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefeval.errors import InputError
from prefeval.io.evallines import read_eval_lines
from prefeval.io.trec import QRELS_FORMAT, RUN_FORMAT, read_columns, read_columns_leniently, read_qrels, read_run

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

field = st.one_of(
    st.sampled_from(["q1", "q2", "Q0", "0", "1", "2", "-1", "d1", "d2", "nan", "inf", "-inf", "1,5", "1e309", "x",
                     '"', "#", "\\", "é", "\x00", "1.0", "0.5", "NaN", "", " "]),
    st.text(max_size=6),
)
separator = st.sampled_from([" ", "\t", "  ", "\r", "\v", ""])
line = st.lists(field, min_size=0, max_size=8).flatmap(
    lambda parts: st.lists(separator, min_size=len(parts), max_size=len(parts)).map(
        lambda seps: "".join(p + s for p, s in zip(parts, seps))))
text_file = st.lists(line, max_size=12).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
raw_bytes = st.binary(max_size=300)
maybe_gzip = st.one_of(text_file, raw_bytes, text_file.map(gzip.compress),
                       text_file.map(lambda b: gzip.compress(b)[: max(len(gzip.compress(b)) // 2, 3)]))


def survives(reader, path) -> None:
    try:
        reader(str(path))
    except InputError as error:
        assert str(error).startswith(str(path)) and "\n" not in str(error)


@FUZZ
@given(maybe_gzip)
def test_qrels_reader(tmp_path, data):
    path = tmp_path / "qrels"
    path.write_bytes(data)
    survives(read_qrels, path)


@FUZZ
@given(maybe_gzip)
def test_run_reader(tmp_path, data):
    path = tmp_path / "run"
    path.write_bytes(data)
    survives(read_run, path)


@FUZZ
@given(st.one_of(text_file, raw_bytes))
def test_lenient_reader_never_raises_and_accounts_for_every_bad_line(data):
    for fmt in (QRELS_FORMAT, RUN_FORMAT):
        read = read_columns_leniently(data, "<fuzz>", fmt, shown=3)
        assert len({len(values) for values in read.columns.values()}) == 1
        assert len(read.malformed_lines) == min(read.malformed, 3)
        assert (read.first_problem is None) == (read.malformed == 0)
        try:
            read_columns(data, "<fuzz>", fmt)
        except InputError as error:
            no_lines = read.malformed == 0 and len(read.columns["qid"]) == 0
            assert no_lines or error.line == read.malformed_lines[0]
        else:
            assert read.malformed == 0


json_value = st.one_of(st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4),
                       st.booleans(), st.none(), st.just([1]))
record = st.fixed_dictionaries(
    {},
    optional={"qid": st.one_of(st.sampled_from(["q1", "q2", "all"]), json_value),
              "runi": st.sampled_from(["A", "B", "C"]), "runj": st.sampled_from(["A", "B", "C"]),
              "run": st.sampled_from(["A", "B"]), "sample": st.one_of(st.sampled_from([0, 1]), json_value),
              "type": st.sampled_from(["preference", "metric", "other"]),
              "rpp": json_value, "ap": json_value},
)
eval_file = st.lists(record, max_size=10).map(lambda records: b"\n".join(orjson.dumps(r) for r in records))
damaged = st.tuples(eval_file, st.integers(0, 400), st.binary(max_size=5)).map(
    lambda t: t[0][: t[1]] + t[2] + t[0][t[1]:])


@FUZZ
@given(st.one_of(eval_file, damaged, raw_bytes))
def test_eval_lines_reader(tmp_path, data):
    path = tmp_path / "prefs"
    path.write_bytes(data)
    try:
        lines = read_eval_lines(str(path))
    except InputError as error:
        assert str(error).startswith(str(path)) and "\n" not in str(error)
        return
    for sample in lines.samples:
        for values in list(sample.pairs.values()) + list(sample.metrics.values()):
            assert values.dtype == np.float64
