"""Reading what ``prefeval eval -q`` (or pref_eval.py -q) wrote, for ``aggregate`` and friends.

Per-query pair lines (``"type":"preference"``, with ``runi`` and ``runj``) and metric lines
(``"type":"metric"``, with ``run``) are gathered per sample into columns; summary lines (``qid``
"all") are skipped. Every other key of a line is a measure and must hold a number. A measure found on
metric lines is a metric; one found only on pair lines is a preference (a metric's differences on
pair lines are not needed: its values are on the metric lines).

Every value is a finite number (:mod:`prefeval.io.jsonl`): ``inf``, ``NaN`` and ``1e400`` are refused,
naming the line; so is one beyond :data:`MAX_VALUE` in magnitude. Errors, naming the lines: a metric
line given twice (one sample, query and run), a pair line given
twice (one sample, query and pair of runs, in either order), and a per-query pair line (it has a
``type``, which a summary pair line has not) of a query named ``all``, which eval lines reserve for
the summary (a metric line of such a query cannot be told from a summary line; ``prefeval eval``
refuses qrels with a query named ``all``).

Files laid out as eval writes them are read column by column in C (see :func:`_read_regular`);
other files are read line by line, which is also what reports the first bad line of a malformed file.
pandas is imported by the functions that use it, not with the module, which ``eval`` imports
without reading eval lines.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import orjson

from prefeval.errors import InputError
from prefeval.io.jsonl import non_finite_message, numbered_records
from prefeval.io.keys import METRIC, METRIC_KEYS, PAIR_KEYS, PREFERENCE, QID, RUN, RUNI, RUNJ, SAMPLE, SUMMARY_QID, TYPE
from prefeval.io.source import display_name, read_bytes

if TYPE_CHECKING:
    import pandas as pd

MAX_VALUE = 1e30
"""The largest magnitude of a value: beyond any measure's (the largest, utility's, with coefficients
of at most 1e12 and a collection of at most 1e15 documents, stays below 1e28), and far enough from
the largest double (1.8e308) that the sums, squares and sums of squares over the queries behind every
statistic stay finite (values of 1e300 overflowed the variance of significance's t-test) and a
figure's labels stay legible (values of 1e60 printed with two decimals collapsed plot preferences'
layout)."""


@dataclass
class SampleScores:
    """One sample's per-query values, queries and runs numbered by first appearance.

    Metric lines: ``metric_query``, ``metric_run`` and ``metrics[name]`` (NaN where a line lacks the
    measure); pair lines: ``pair_query``, ``pair_first``, ``pair_second`` and ``pairs[name]``.
    """

    sample: int
    qids: list[str]
    runs: list[str]
    metric_query: np.ndarray
    metric_run: np.ndarray
    metrics: dict[str, np.ndarray]
    pair_query: np.ndarray
    pair_first: np.ndarray
    pair_second: np.ndarray
    pairs: dict[str, np.ndarray]

    def metric_scores(self, measure: str) -> np.ndarray:
        """(Q, R) values of a metric, NaN where a run has no value on a query."""
        scores = np.full((len(self.qids), len(self.runs)), np.nan)
        scores[self.metric_query, self.metric_run] = self.metrics[measure]
        return scores

    def net_preferences(self, measure: str) -> np.ndarray:
        """(Q, R) net preference Σ_j pref(run, j), NaN where a run is in no pair of the query."""
        values = self.pairs[measure]
        known = ~np.isnan(values)
        query, first, second = self.pair_query[known], self.pair_first[known], self.pair_second[known]
        shape = (len(self.qids), len(self.runs))
        net = np.zeros(shape)
        np.add.at(net, (query, first), values[known])
        np.add.at(net, (query, second), -values[known])
        seen = np.zeros(shape, dtype=bool)
        seen[query, first] = seen[query, second] = True
        return np.where(seen, net, np.nan)

    def pair_values(self, measure: str) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The pairs of runs (run numbers) of the pair lines, in order of first appearance, and their
        (P, Q) per-query values of ``measure``, NaN where a pair has no value on a query: the
        preference, or for a metric the difference metric(first) − metric(second) of its values on
        the metric lines (what eval writes on the pair lines)."""
        keys, first_seen, pair_of_line = np.unique(
            self.pair_first * len(self.runs) + self.pair_second, return_index=True, return_inverse=True)
        order = np.argsort(first_seen)
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        ordered = keys[order]
        firsts, seconds = ordered // len(self.runs), ordered % len(self.runs)
        if measure in self.pairs:
            values = np.full((len(keys), len(self.qids)), np.nan)
            values[position[pair_of_line.ravel()], self.pair_query] = self.pairs[measure]
        else:
            scores = self.metric_scores(measure)
            values = (scores[:, firsts] - scores[:, seconds]).T
        return list(zip(firsts.tolist(), seconds.tolist())), values

    def has_values(self, measure: str) -> bool:
        return measure in self.pairs or measure in self.metrics


@dataclass
class EvalLines:
    """Everything read from one file of eval lines: the samples (ascending) and the measures, in
    order of first appearance, each marked as a metric (found on metric lines) or a preference."""

    source: str
    samples: list[SampleScores]
    measures: list[str]
    metric_names: set[str]

    def is_metric(self, measure: str) -> bool:
        return measure in self.metric_names


class _Irregular(Exception):
    """The file is not in the regular layout of eval's output: read it line by line."""


def read_eval_lines(path: str) -> EvalLines:
    """Read per-query eval lines; an error names the file and line of anything malformed."""
    source = display_name(path)
    lines = read_bytes(path).split(b"\n")
    try:
        return _read_regular(lines, source)
    except _Irregular:
        return eval_lines_from_records(source, numbered_records(lines, source))


def _read_regular(lines: list[bytes], source: str) -> EvalLines:
    """The fast path, for files laid out as eval (or pref_eval.py) writes them: every per-query pair
    line has the same keys in the same order, and every metric line too.

    Such lines are flat JSON objects of strings and numbers; without their braces and with their
    colons made commas, they are CSV rows of key, value, key, value ... that pandas' C tokeniser reads
    column by column, converting only the values needed. Every assumption is checked (no escapes,
    braces around each line, quotes only around keys and labels, no comma or colon in a label, the
    key before every value read being its key, every value of its type) and any surprise sends the
    file to the line-by-line reader.
    """
    per_query = [line for line in lines if not line.startswith(_SUMMARY_STARTS)]
    if any(_TYPE_KEY in line and _RUNI_KEY in line for line in lines if line.startswith(_SUMMARY_STARTS)):
        raise _Irregular  # a per-query pair line of a query named "all": the line-by-line reader says which
    groups = {PREFERENCE: [line for line in per_query if _RUNI_KEY in line]}
    groups[METRIC] = [line for line in per_query if _RUNI_KEY not in line and _RUN_KEY in line]
    summary_lines = len(lines) - len(per_query)
    if len(groups[PREFERENCE]) + len(groups[METRIC]) != len(per_query) - sum(not line.strip() for line in per_query):
        raise _Irregular
    metrics_first = bool(groups[METRIC]) and (
        not groups[PREFERENCE] or lines.index(groups[METRIC][0]) < lines.index(groups[PREFERENCE][0]))
    if not groups[PREFERENCE] and not groups[METRIC]:
        _no_per_query_lines(source, summary_only=summary_lines > 0)
    pair_layout = _layout(groups[PREFERENCE], PAIR_KEYS)
    metric_layout = _layout(groups[METRIC], METRIC_KEYS)
    metric_measures = [key for key in metric_layout if key not in METRIC_KEYS]
    pair_measures = [key for key in pair_layout if key not in PAIR_KEYS]
    preferences = [m for m in pair_measures if m not in metric_measures]
    pairs = _regular_columns(groups[PREFERENCE], pair_layout, PREFERENCE, (QID, RUNI, RUNJ), preferences)
    metrics = _regular_columns(groups[METRIC], metric_layout, METRIC, (QID, RUN), metric_measures)
    scores = []
    for sample in sorted(set(pairs[SAMPLE].tolist()) | set(metrics[SAMPLE].tolist())):
        in_pairs, in_metrics = pairs[SAMPLE] == sample, metrics[SAMPLE] == sample
        scores.append(_sample_scores(
            int(sample),
            pair_labels=[pairs[key][in_pairs] for key in (QID, RUNI, RUNJ)],
            pair_values={m: pairs[m][in_pairs] for m in preferences},
            metric_labels=[metrics[key][in_metrics] for key in (QID, RUN)],
            metric_values={m: metrics[m][in_metrics] for m in metric_measures},
        ))
    in_file_order = metric_measures + pair_measures if metrics_first else pair_measures + metric_measures
    return EvalLines(source, scores, list(dict.fromkeys(in_file_order)), set(metric_measures))


def _layout(lines: list[bytes], required: tuple[str, ...]) -> list[str]:
    """The keys of the first line, which must be a JSON object with the ``required`` keys."""
    if not lines:
        return list(required)
    try:
        first = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        raise _Irregular from None
    if not isinstance(first, dict) or not all(key in first for key in required):
        raise _Irregular
    return list(first)


_COLON_TO_COMMA = bytes.maketrans(b":", b",")
_SUMMARY_STARTS = tuple(b"{" + orjson.dumps(QID) + separator + orjson.dumps(SUMMARY_QID) for separator in (b":", b": "))
_RUNI_KEY, _RUN_KEY, _TYPE_KEY = orjson.dumps(RUNI), orjson.dumps(RUN), orjson.dumps(TYPE)


def _regular_columns(lines: list[bytes], layout: list[str], kind: str, labels: tuple[str, ...],
                     measures: list[str]) -> dict[str, np.ndarray]:
    """The label columns (object arrays), ``sample`` (integers) and the measure columns (floats) of
    lines that all have exactly ``layout``'s keys, in its order."""
    import pandas as pd


    dtypes_by_key = {**{label: object for label in labels}, SAMPLE: np.int64, **{m: np.float64 for m in measures}}
    if not lines:
        return {key: np.empty(0, dtype=dtype) for key, dtype in dtypes_by_key.items()}
    if not all(line[:1] == b"{" and line[-1:] == b"}" for line in lines):
        raise _Irregular
    # the keys after the last one read are cut off each line (eval writes metric differences last)
    width = 1 + max(layout.index(key) for key in (*dtypes_by_key, TYPE))
    if width == len(layout):
        text = b"\n".join(line[1:-1] for line in lines)
    else:
        marker = orjson.dumps(layout[width]) + b":"
        ends = [line.find(marker) for line in lines]
        if min(ends) < 0:
            raise _Irregular
        separator = len(lines[0][:ends[0]]) - len(lines[0][:ends[0]].rstrip(b", "))
        text = b"\n".join(line[1:end - separator] for line, end in zip(lines, ends))
    # the quotes are those of the keys, the labels and the type: labels are strings, measures not
    if b"\\" in text or text.count(b'"') != len(lines) * 2 * (width + len(labels) + 1):
        raise _Irregular
    value_column = {key: 2 * k + 1 for k, key in enumerate(layout)}
    read = {*dtypes_by_key, TYPE}
    dtypes = {value_column[key] - 1: "category" for key in read}  # the key before each value read
    dtypes[value_column[TYPE]] = "category"
    for key, dtype in dtypes_by_key.items():
        dtypes[value_column[key]] = dtype  # labels as text: as categories, '01' and '1' could both become 1
    try:
        with warnings.catch_warnings():  # a cast numpy doubts (1e300 as a sample) is irregular: the
            warnings.simplefilter("error", RuntimeWarning)  # line-by-line reader names its line
            frame = pd.read_csv(
                io.BytesIO(text.translate(_COLON_TO_COMMA)), sep=",", header=None, names=range(2 * width),
                usecols=sorted(dtypes), dtype=dtypes, skipinitialspace=True, quoting=csv.QUOTE_MINIMAL,
                doublequote=False, keep_default_na=False, na_filter=False, engine="c",
                encoding="utf-8", encoding_errors="strict",  # JSON is UTF-8: the line-by-line reader says where not
            )
    except (ValueError, OverflowError, RuntimeWarning, pd.errors.ParserError):
        raise _Irregular from None
    for key in read:
        if list(frame[value_column[key] - 1].cat.categories) != [key]:
            raise _Irregular
    if list(frame[value_column[TYPE]].cat.categories) != [kind]:
        raise _Irregular
    columns = {key: frame[value_column[key]].to_numpy() for key in dtypes_by_key}
    if any("," in label for key in labels for label in pd.unique(columns[key])):
        raise _Irregular  # a comma, or a colon the translation turned into one
    if not all((np.abs(columns[measure]) <= MAX_VALUE).all() for measure in measures):
        raise _Irregular  # pandas reads inf, Infinity, 1e400: the line-by-line reader names the line
    return columns


def _no_per_query_lines(source: str, summary_only: bool) -> None:
    hint = "it holds only summary lines; " if summary_only else ""
    raise InputError(source, f"no per-query lines: {hint}run `prefeval eval` with -q to write them")


FRAME_SOURCE = "<DataFrame>"


def eval_lines_from_frames(frames) -> EvalLines:
    """Eval lines from DataFrames: what :func:`prefeval.evaluate` and :func:`prefeval.compare` return
    (per query), or eval JSON lines read by ``pandas.read_json(..., lines=True)``; one frame or several.

    A row with ``runi`` and ``runj`` is a pair line, a row with ``run`` a metric line (a ``type``
    column, when present, must agree); ``sample`` defaults to 0; an empty (NaN) cell is an absent key,
    as on a JSON line that lacks it. Errors name the row as ``<DataFrame>:ROW`` (1-based, within
    its frame).
    """
    import pandas as pd


    frames = [frames] if isinstance(frames, pd.DataFrame) else list(frames)
    return eval_lines_from_records(FRAME_SOURCE, chain.from_iterable(_frame_records(frame) for frame in frames))


def _frame_records(frame: pd.DataFrame) -> Iterator[tuple[int, dict]]:
    present = frame.notna().to_numpy()
    columns = list(frame.columns)
    for number, (values, keep) in enumerate(zip(frame.itertuples(index=False, name=None), present), start=1):
        record = {column: value for column, value, kept in zip(columns, values, keep) if kept}
        record.setdefault(SAMPLE, 0)
        if TYPE not in record and record.get(QID) != SUMMARY_QID:  # a summary pair line has no type
            record[TYPE] = PREFERENCE if RUNI in record else METRIC if RUN in record else None
        for key, value in record.items():
            if isinstance(value, np.generic):
                record[key] = value = value.item()
            if key == SAMPLE and isinstance(value, float) and value.is_integer():
                record[key] = int(value)
        yield number, record


def eval_lines_from_records(source: str, records: Iterable[tuple[int, dict]]) -> EvalLines:
    """Gather (line number, record) pairs of eval lines, which may have different keys; an error
    names ``source`` and the line."""
    pair_rows: list[tuple] = []
    metric_rows: list[tuple] = []
    measures: dict[str, None] = {}
    metric_names: set[str] = set()
    summary_only = False
    for number, record in records:
        if record.get(QID) == SUMMARY_QID:
            if RUNI in record and TYPE in record:
                raise InputError(source, f"a per-query pair line (it has a 'type') of a query named {SUMMARY_QID!r}, "
                                         "the id of the summary lines; rename the query", number)
            summary_only = True
            continue
        kind, keys = _kind(record, source, number)
        values = {}
        for measure, value in record.items():
            if measure in keys:
                continue
            if type(value) not in (int, float) or value != value:
                raise InputError(source, f"value of {measure!r} must be a number, found {value!r}", number)
            if not math.isfinite(value):  # from a DataFrame (JSON has no infinity: numbered_records)
                raise InputError(source, non_finite_message(measure, value), number)
            if abs(value) > MAX_VALUE:
                raise InputError(source, f"value of {measure!r} is too large ({value!r}): eval lines hold values of "
                                         f"at most {MAX_VALUE:g} in magnitude", number)
            measures.setdefault(measure, None)
            values[measure] = value
        if kind == METRIC:
            metric_names.update(values)
            metric_rows.append((str(record[QID]), record[SAMPLE], str(record[RUN]), values, number))
        else:
            pair_rows.append((str(record[QID]), record[SAMPLE], str(record[RUNI]), str(record[RUNJ]), values, number))
    if not pair_rows and not metric_rows:
        _no_per_query_lines(source, summary_only)
    scores = []
    for sample in sorted({row[1] for row in pair_rows} | {row[1] for row in metric_rows}):
        pairs = [r for r in pair_rows if r[1] == sample]
        metrics = [r for r in metric_rows if r[1] == sample]
        preferences = list(dict.fromkeys(m for r in pairs for m in r[4] if m not in metric_names))
        metric_measures = list(dict.fromkeys(m for r in metrics for m in r[3]))
        scores.append(_sample_scores(
            sample,
            pair_labels=[np.array([r[k] for r in pairs], dtype=object) for k in (0, 2, 3)],
            pair_values={m: np.array([r[4].get(m, np.nan) for r in pairs], dtype=np.float64) for m in preferences},
            metric_labels=[np.array([r[k] for r in metrics], dtype=object) for k in (0, 2)],
            metric_values={m: np.array([r[3].get(m, np.nan) for r in metrics], dtype=np.float64)
                           for m in metric_measures},
            lines=(source, [r[5] for r in pairs], [r[4] for r in metrics]),
        ))
    return EvalLines(source, scores, list(measures), metric_names)


def _kind(record: dict, source: str, number: int) -> tuple[str, tuple[str, ...]]:
    kind = record.get(TYPE)
    keys = PAIR_KEYS if kind == PREFERENCE else METRIC_KEYS if kind == METRIC else None
    if keys is None:
        raise InputError(source, f"not an eval line: 'type' must be \"preference\" or \"metric\", found {kind!r}",
                         number)
    missing = [key for key in keys if key not in record]
    if missing:
        raise InputError(source, f"{kind} line without {', '.join(repr(k) for k in missing)}", number)
    if type(record[SAMPLE]) is not int or not -(2**63) <= record[SAMPLE] < 2**63:
        raise InputError(source, f"'sample' must be an integer (of 64 bits), found {record[SAMPLE]!r}", number)
    for label in keys[:-2] if kind == PREFERENCE else keys[:2]:
        if type(record[label]) not in (str, int):
            raise InputError(source, f"{label!r} must be a string, found {orjson.dumps(record[label]).decode()}",
                             number)
    return kind, keys


def _sample_scores(sample: int, pair_labels: list[np.ndarray], pair_values: dict[str, np.ndarray],
                   metric_labels: list[np.ndarray], metric_values: dict[str, np.ndarray],
                   lines: tuple[str, list[int], list[int]] | None = None) -> SampleScores:
    """Number a sample's queries and runs by first appearance (pair lines first) and keep its values.

    ``pair_labels`` are the qid, runi and runj columns of its pair lines; ``metric_labels`` the qid
    and run columns of its metric lines. A line given twice is an :class:`InputError` naming both,
    from ``lines`` (the source, and the line numbers of the pair lines and of the metric lines);
    without them (the column reader, which has no line numbers), it sends the file to the
    line-by-line reader.
    """
    import pandas as pd


    pair_qids, firsts, seconds = pair_labels
    metric_qids, metric_runs = metric_labels
    count = len(pair_qids)
    query_codes, qids = pd.factorize(np.concatenate([pair_qids, metric_qids]).astype(object))
    run_codes, runs = pd.factorize(np.concatenate([firsts, seconds, metric_runs]).astype(object))
    num_runs = max(len(runs), 1)
    low = np.minimum(run_codes[:count], run_codes[count:2 * count])
    high = np.maximum(run_codes[:count], run_codes[count:2 * count])
    for kind, keys, labels, at in (
        ("pair", (query_codes[:count] * num_runs + low) * num_runs + high, (pair_qids, firsts, seconds), 1),
        ("metric", query_codes[count:] * num_runs + run_codes[2 * count:], (metric_qids, metric_runs), 2),
    ):
        repeated = _first_repeat(keys)
        if repeated is None:
            continue
        if lines is None:
            raise _Irregular
        source, numbers = lines[0], lines[at]
        first, second = repeated
        what = f"query {labels[0][second]!r}, " + (
            f"runs {labels[1][second]!r} and {labels[2][second]!r}" if kind == "pair" else f"run {labels[1][second]!r}")
        raise InputError(source, f"a second {kind} line for sample {sample}, {what} (the first is line "
                                 f"{numbers[first]})", numbers[second])
    return SampleScores(
        sample=sample,
        qids=[str(q) for q in qids],
        runs=[str(r) for r in runs],
        metric_query=query_codes[count:],
        metric_run=run_codes[2 * count:],
        metrics=metric_values,
        pair_query=query_codes[:count],
        pair_first=run_codes[:count],
        pair_second=run_codes[count:2 * count],
        pairs=pair_values,
    )


def _first_repeat(keys: np.ndarray) -> tuple[int, int] | None:
    """The first key that repeats an earlier one, as (index of the earlier, index of the repeat)."""
    import pandas as pd


    index = pd.Index(keys)
    if index.is_unique:
        return None
    second = int(np.flatnonzero(index.duplicated())[0])
    return int(np.flatnonzero(keys == keys[second])[0]), second
