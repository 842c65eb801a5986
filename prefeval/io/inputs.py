"""Qrels and runs given as file paths, pandas DataFrames or dicts, for the Python API.

* **qrels**: a path (``-`` for stdin); a DataFrame with one row per judgment and columns
  ``query_id``, ``doc_id``, ``relevance`` (ir_measures' names; ``q_id``/``qid``, ``docid`` and
  ``grade``/``score`` are accepted too, ``score`` being ranx's name for the grade), and optionally
  ``iteration`` (ir_measures' name; ``iter`` and ``subtopic_id`` too), the subtopic of a diversity
  qrels (:mod:`prefeval.io.subtopics`); or a dict ``{qid: {docid: grade}}``.
* **a run**: a path; a DataFrame with columns ``query_id``, ``doc_id``, ``score`` (or the same
  alternatives); or a dict ``{qid: {docid: score}}``. Like a run file's ``nan`` lines, rows whose
  score is NaN are skipped.
* **runs**: a dict ``{run name: run}``, a list of runs, or one path or DataFrame. A run's name is its
  dict key; in a list, a path gives its run id (file name without ``input.`` and ``.gz``), and a
  DataFrame or dict is named ``run1``, ``run2``, ... by its position. A dict of runs is always
  read as named runs: wrap a single ``{qid: {docid: score}}`` run as ``{"name": run}``.

Query and document ids are compared as text (``str(id)``: the integer 301 is the qid ``"301"``).
Anything malformed is an :class:`~prefeval.errors.InputError` whose source is ``<qrels>`` or
``<run NAME>``; more than one ``-`` is a :class:`~prefeval.errors.UsageError`.
"""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Mapping
from itertools import chain
from typing import TYPE_CHECKING, Union

import numpy as np

from prefeval.errors import InputError, UsageError, shown
from prefeval.io.fields import TextColumn
from prefeval.io.judgments import JudgmentsPath, read_judgments
from prefeval.io.trec import QRELS_FORMAT, Qrels, RunColumns, qrels_from_columns, read_qrels, read_run

if TYPE_CHECKING:
    import pandas as pd

PathLike = str | os.PathLike
Judgments = Union[PathLike, "pd.DataFrame", Mapping]
"""A qrels or a run: a path, a DataFrame, or a dict of dicts."""

QUERY_COLUMNS = ("query_id", "q_id", "qid")
DOCUMENT_COLUMNS = ("doc_id", "docid")
GRADE_COLUMNS = ("relevance", "grade", "score")
ITERATION_COLUMNS = ("iteration", "iter", "subtopic_id")
SCORE_COLUMNS = ("score",)
QRELS_SOURCE = "<qrels>"


def load_qrels(qrels: Judgments, binary_relevance: float | None = None, relevance_floor: float | None = None,
               keep_empty: bool = False) -> Qrels:
    """Read or convert qrels (see the module docstring) into :class:`~prefeval.io.trec.Qrels`;
    ``keep_empty`` keeps the queries without a relevant document (trec_eval's convention). Judgments
    of another kind (a :class:`~prefeval.io.judgments.JudgmentsPath`) are read by their kind's reader."""
    if isinstance(qrels, JudgmentsPath):
        return read_judgments(qrels, binary_relevance, relevance_floor, keep_empty)
    if _is_path(qrels):
        return read_qrels(os.fspath(qrels), binary_relevance, relevance_floor, keep_empty)
    qids, docids, grades = _columns(qrels, QRELS_SOURCE, GRADE_COLUMNS, "grade")
    refused = np.flatnonzero(QRELS_FORMAT.refused(grades))
    if len(refused):
        row = refused[0]
        value = float(grades[row])
        what = "is missing (NaN)" if np.isnan(value) else f"is out of range ({value!r}): {QRELS_FORMAT.limit_text}"
        raise InputError(QRELS_SOURCE, f"the grade of document {docids[row]!r} in query {qids[row]!r} {what}")
    return qrels_from_columns(QRELS_SOURCE, TextColumn.of_texts(qids), TextColumn.of_texts(docids), grades,
                              binary_relevance, relevance_floor, keep_empty=keep_empty, iters=_iterations(qrels))


def _iterations(qrels) -> TextColumn | None:
    """The iter column of qrels given as a DataFrame (:data:`ITERATION_COLUMNS`), as text; None
    when it has none."""
    if not _is_frame(qrels):
        return None
    name = next((name for name in ITERATION_COLUMNS if name in qrels.columns), None)
    if name is None:
        return None
    column = qrels[name]
    if column.isna().any():
        row = column.index[column.isna().to_numpy()][0]
        raise InputError(QRELS_SOURCE, f"column {name!r} is missing a value (row {shown(row)})")
    return TextColumn.of_texts(_as_text(column.to_numpy(dtype=object)))


def named_runs(runs) -> list[tuple[str | None, Judgments]]:
    """(name, run) for each run, in order; the name is None when it comes from a file name."""
    if _is_path(runs) or _is_frame(runs):
        runs = [runs]
    if isinstance(runs, Mapping):
        if _looks_like_one_run(runs):
            raise UsageError(
                "runs look like a single run {qid: {docid: score}}; pass runs as a list or as "
                "{run name: run}, e.g. {'mine': run}"
            )
        named = [(str(name), run) for name, run in runs.items()]
        for name, run in named:
            if not (_is_path(run) or _is_frame(run) or isinstance(run, Mapping)):
                raise UsageError(
                    f"run {name!r} is of type {type(run).__name__}, not a path, DataFrame or dict; to pass one run "
                    f"as {{qid: {{docid: score}}}}, name it: {{'name': run}}"
                )
    else:
        named = [(None if _is_path(run) else f"run{number}", run) for number, run in enumerate(runs, start=1)]
    if not named:
        raise UsageError("at least one run is needed")
    return named


def load_run(run: Judgments, name: str | None = None) -> RunColumns:
    """One run as :class:`~prefeval.io.trec.RunColumns`; ``name`` overrides a file's run id."""
    if _is_path(run):
        columns = read_run(os.fspath(run))
        if name is None or name == columns.run_id:
            return columns
        return columns._replace(run_id=name)
    source = f"<run {name}>"
    qids, docids, scores = _columns(run, source, SCORE_COLUMNS, "score")
    scored = ~np.isnan(scores)
    if not scored.all():
        qids, docids, scores = qids[scored], docids[scored], scores[scored]
    return RunColumns(source=source, run_id=str(name), qids=TextColumn.of_texts(qids),
                      docids=TextColumn.of_texts(docids), scores=scores)


def _looks_like_one_run(runs: Mapping) -> bool:
    """True when the values of ``runs`` map to numbers ({qid: {docid: score}}), not to queries."""
    first = next(iter(runs.values()), None)
    if not isinstance(first, Mapping) or not first:
        return False
    return isinstance(next(iter(first.values())), numbers.Number)


def _is_path(value) -> bool:
    return isinstance(value, (str, os.PathLike))


def _is_frame(value) -> bool:
    """Whether ``value`` is a pandas DataFrame. pandas is not imported for the question (its import
    takes longer than evaluating a run): no DataFrame exists before something else imported it."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _columns(value, source: str, number_columns: tuple[str, ...],
             number_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qids, docids as text, numbers as float64) of a DataFrame or a dict of dicts."""
    if _is_frame(value):
        qids, docids, numbers = _frame_columns(value, source, number_columns, number_name)
    elif isinstance(value, Mapping):
        qids, docids, numbers = _dict_columns(value, source, number_name)
    else:
        raise UsageError(f"{source}: expected a path, a DataFrame or a dict, not a value of type "
                         f"{type(value).__name__}")
    if len(numbers) == 0:
        raise InputError(source, "no judgments" if source == QRELS_SOURCE else "no scored documents")
    return _as_text(qids), _as_text(docids), numbers


def _frame_columns(frame: pd.DataFrame, source: str, number_columns: tuple[str, ...], number_name: str):
    names = []
    for wanted in (QUERY_COLUMNS, DOCUMENT_COLUMNS, number_columns):
        found = next((name for name in wanted if name in frame.columns), None)
        if found is None:
            raise InputError(
                source, f"no column {' or '.join(map(repr, wanted))}; found {', '.join(map(repr, frame.columns))}"
            )
        names.append(found)
    query, document, number = (frame[name] for name in names)
    for column in (query, document):
        if column.isna().any():
            row = column.index[column.isna().to_numpy()][0]
            raise InputError(source, f"column {column.name!r} is missing a value (row {shown(row)})")
    import pandas as pd

    numbers = pd.to_numeric(number, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(numbers) & number.notna().to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(source, f"{number_name} {shown(number.iloc[row])} (row {shown(number.index[row])}) "
                                 "is not a number")
    return query.to_numpy(dtype=object), document.to_numpy(dtype=object), numbers


def _dict_columns(judgments: Mapping, source: str, number_name: str):
    per_query = list(judgments.values())
    for qid, documents in zip(judgments, per_query):
        if not isinstance(documents, Mapping):
            raise InputError(
                source, f"query {qid!r} holds a value of type {type(documents).__name__}; expected "
                        f"{{qid: {{docid: {number_name}}}}}"
            )
    counts = np.fromiter((len(documents) for documents in per_query), dtype=np.int64, count=len(per_query))
    total = int(counts.sum())
    qids = np.repeat(np.array(list(judgments), dtype=object), counts)
    docids = np.fromiter(chain.from_iterable(per_query), dtype=object, count=total)
    try:
        numbers = np.fromiter(_only_numbers(chain.from_iterable(d.values() for d in per_query)), dtype=np.float64,
                              count=total)
    except (TypeError, ValueError):
        raise InputError(source, _first_non_number(judgments, number_name)) from None
    return qids, docids, numbers


def _only_numbers(values):
    """``values``, a TypeError at the first that is text: numpy would parse it with Python's float,
    which reads more than a number (``"1_000"``)."""
    for value in values:
        if isinstance(value, (str, bytes)):
            raise TypeError(value)
        yield value


def _first_non_number(judgments: Mapping, number_name: str) -> str:
    """The message for the first value that is not a number (only called to report an error)."""
    for qid, documents in judgments.items():
        for docid, value in documents.items():
            try:
                np.fromiter(_only_numbers([value]), dtype=np.float64, count=1)
            except (TypeError, ValueError):
                return f"{number_name} {value!r} of document {docid!r} in query {qid!r} is not a number"
    return f"a {number_name} is not a number"


def _as_text(ids: np.ndarray) -> np.ndarray:
    """Ids as Python strings (object array), whatever type they were given in (``str(id)``)."""
    if all(type(value) is str for value in ids.tolist()):
        return ids
    return np.array([str(value) for value in ids.tolist()] or [], dtype=object)
