"""``prefeval check``: what is wrong, or worth knowing, about qrels and run files, without evaluating.

One report record per file, the qrels first, then each run in the order given. Every record has
``file``, ``kind`` (``qrels`` or ``run``), ``status`` (``ok``, ``warning`` or ``error``), the figures
below, and the ``errors`` and ``warnings`` that explain the status, one sentence each.

Qrels: judgment ``lines``; ``queries``; ``judgments`` (distinct query and document pairs);
``relevant`` (grade > 0); ``grades`` (how many judgments of each grade); ``queries_without_relevant``
(left out of every evaluation; a warning); ``malformed_lines``.

Runs: ``run`` (its id); scored ``lines``; ``queries``; ``queries_not_in_qrels`` (ignored by ``eval``;
a warning); ``queries_missing_from_run`` (queries with a relevant document that the run lacks: scored
as retrieving nothing; a warning); ``duplicate_documents`` (a document twice for a query: an error,
as in ``eval``); ``ties``; ``depth`` (documents per query: min, median, max); ``unjudged_at_10`` (the
mean, over the run's queries that are in the qrels, of the fraction of its first 10 documents that
the qrels do not judge); ``nan_scores`` (lines scored ``nan``, skipped; a warning);
``malformed_lines``; ``tie_ranges``.

``ties`` counts *tie groups*: two or more documents of a query with the same score, which
trec_eval (and prefeval) order by docid, descending; ``documents`` in them and ``queries`` with
one. ``across_rank_10`` groups hold ranks both <= 10 and > 10, so which of them count at a cut-off
of 10 is decided by docid alone (a warning); ``at_depth`` groups hold the query's last document, so
the run was probably cut inside a tie (common and mostly harmless, so only counted). More than half
of the documents in tie groups is a warning. A run is *shallow* (a warning) when its median depth
is less than half of the largest median depth of the runs checked together.

``tie_ranges`` says how much the order of tied documents decides the run's results: for every
metric of eval's default list, the mean over the qrels' queries (those with a relevant document, a
query the run lacks scoring 0) in trec_eval's docid order, and its minimum and maximum over all
orders of the tie groups (``eval --ties range``; :mod:`prefeval.measures.ties`):
``{"ap": {"docid": 0.21, "min": 0.20, "max": 0.23}, ...}``. A range of :data:`WIDE_TIE_RANGE`
(0.01) or wider is a warning. It is ``None`` when the qrels or the run has errors.

Malformed lines are all counted, not just the first: ``{"count": n, "first": [line numbers],
"message": "what is wrong with the first"}`` (an error), found by the readers of
:mod:`prefeval.io.trec` (:func:`~prefeval.io.trec.read_columns_leniently`), which judge a line as
``eval`` does. Errors also: a file that cannot be read or holds no lines, two runs with one id,
and a run that shares no query with the qrels (with a hint when the ids differ in zero-padding).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval.errors import InputError
from prefeval.io.codes import distinct
from prefeval.io.fields import TextColumn
from prefeval.io.ids import id_text, id_texts
from prefeval.io.keys import QID, RUN
from prefeval.io.records import (
    ACROSS_RANK_10,
    AT_DEPTH,
    COUNT,
    DEPTH,
    DOCID,
    DOCUMENTS,
    DUPLICATE_DOCUMENTS,
    ERRORS,
    FILE,
    FIRST,
    GRADES,
    GROUPS,
    HIGHEST,
    JUDGMENTS,
    KIND,
    LINES,
    LOWEST,
    MALFORMED_LINES,
    MEDIAN,
    MESSAGE,
    NAN_SCORES,
    QUERIES,
    QUERIES_MISSING_FROM_RUN,
    QUERIES_NOT_IN_QRELS,
    QUERIES_WITHOUT_RELEVANT,
    RELEVANT,
    STATUS,
    TIE_GROUPS,
    TIE_RANGES,
    UNJUDGED_AT_10,
    WARNINGS,
)
from prefeval.io.source import check_stdin_used_once, display_name, read_bytes
from prefeval.io.trec import (
    QRELS_FORMAT,
    QRELS_ITER_FORMAT,
    RUN_FORMAT,
    LineFormat,
    RunColumns,
    Scan,
    find_lines,
    qrels_from_columns,
    read_columns_leniently,
    run_id_from_path,
)
from prefeval.measures import DEFAULT_EVAL_MEASURES, Metric, parse_measures
from prefeval.measures.ties import metric_bounds
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import (
    RankTable,
    RelevantLookup,
    RowRanks,
    query_id_hint,
    rank_relevant,
    rank_within_queries,
)

SHOWN = 5
"""How many line numbers or query ids a record lists (the counts are complete)."""
TOP = 10
"""The rank cut-off for ``across_rank_10`` and ``unjudged_at_10``."""
SHALLOW = 0.5
"""A run is shallow when its median depth is below this fraction of the deepest run's median."""
MOSTLY_TIED = 0.5
"""Warn when more than this fraction of a run's documents are in tie groups."""
WIDE_TIE_RANGE = 0.01
"""Warn when the order of tied documents can move a default metric's mean by this much or more."""

OK, WARNING, ERROR = "ok", "warning", "error"


def check(qrels: str | os.PathLike, runs: Sequence[str | os.PathLike]) -> list[dict]:
    """Check ``qrels`` and ``runs`` (paths, ``-`` for stdin once); one record per file (see above)."""
    qrels, runs = os.fspath(qrels), [os.fspath(run) for run in runs]
    check_stdin_used_once([qrels, *runs])
    judged = _check_qrels(qrels)
    records = [judged.record]
    run_ids: dict[str, str] = {}
    for path in runs:
        records.append(_check_run(path, judged, run_ids))
    _warn_shallow_runs(records[1:])
    for record in records:
        record[STATUS] = ERROR if record[ERRORS] else WARNING if record[WARNINGS] else OK
    return records


def has_errors(records: list[dict]) -> bool:
    return any(record[STATUS] == ERROR for record in records)


@dataclass
class JudgedQrels:
    """What the run checks need from the qrels (None when the qrels could not be read)."""

    record: dict
    qids: pd.Index | None = None
    relevant_qids: pd.Index | None = None
    judged_pairs: pd.MultiIndex | None = None
    lookup: RelevantLookup | None = None
    """The qrels as evaluation reads them, when they have no error (for ``tie_ranges``)."""


def _check_qrels(path: str) -> JudgedQrels:
    source = display_name(path)
    record: dict = {FILE: source, KIND: "qrels", STATUS: OK}
    try:
        data = read_bytes(path, stop_at_nul=False)
    except InputError as error:
        record.update({ERRORS: [error.message], WARNINGS: []})
        return JudgedQrels(record)
    read = read_columns_leniently(data, source, QRELS_ITER_FORMAT, SHOWN)
    qids, docids, grades = read.columns["qid"], read.columns["docid"], read.columns["grade"]
    errors, warnings = [], []
    _report_malformed(read, QRELS_FORMAT, errors)
    _report_subtopics(qids, read.columns["iter"], warnings)
    if len(grades) == 0:
        errors.append(f"no qrels lines ({QRELS_FORMAT.layout})")
    qids, docids = _objects(qids), _objects(docids)
    pairs = pd.MultiIndex.from_arrays([qids, docids])
    best = pd.Series(grades).groupby([qids, docids], sort=False).max()
    query_codes, unique_qids = pd.factorize(qids)
    has_relevant = np.bincount(query_codes[grades > 0], minlength=len(unique_qids)) > 0
    without = unique_qids[~has_relevant]
    if len(without):
        warnings.append(f"{_counted(len(without), 'query has', 'queries have')} no relevant document (grade > 0), "
                        "left out of evaluations")
    if len(grades) and not has_relevant.any():
        errors.append("no query has a relevant document (grade > 0)")
    levels, counts = np.unique(best.to_numpy(), return_counts=True)
    record.update({
        LINES: len(grades),
        QUERIES: len(unique_qids),
        JUDGMENTS: len(best),
        RELEVANT: int((best.to_numpy() > 0).sum()),
        GRADES: {_number_text(level): int(count) for level, count in zip(levels, counts)},
        QUERIES_WITHOUT_RELEVANT: _listed(without),
        MALFORMED_LINES: _malformed_summary(read),
        ERRORS: errors,
        WARNINGS: warnings,
    })
    lookup = None
    if not errors:
        try:
            lookup = RelevantLookup(qrels_from_columns(source, TextColumn.of_texts(qids), TextColumn.of_texts(docids),
                                                       grades))
        except InputError as error:  # a query named "all"
            errors.append(error.message)
    return JudgedQrels(record, _objects(unique_qids), _objects(unique_qids[has_relevant]), pairs.unique(), lookup)


def _objects(texts) -> pd.Index:
    """Ids as an index of Python strings: pandas 3 would infer its ``str`` dtype, which with pyarrow
    installed is stored as Arrow strings, which cannot hold an id whose bytes are not UTF-8 (a
    surrogate escape)."""
    return pd.Index(texts, dtype=object)


def _report_subtopics(qids: np.ndarray, iters: np.ndarray, warnings: list[str]) -> None:
    """A warning when some query is judged on several subtopics (two iter values,
    :mod:`prefeval.io.subtopics`): which view of them the measures read."""
    if not len(qids):
        return
    several = pd.Series(iters, dtype=object).groupby(_objects(qids), sort=False).nunique()
    count = int((several >= 2).sum())
    if count:
        warnings.append(f"{_counted(count, 'query is', 'queries are')} judged on several subtopics (the iter column): "
                        "the classic measures read each document's largest grade over them, the intent-aware ones "
                        "(alpha_ndcg, err_ia, ...) the judgments per subtopic, and trec_eval's layout stops on "
                        "the documents judged twice")


def _check_run(path: str, qrels: JudgedQrels, run_ids: dict[str, str]) -> dict:
    source = display_name(path)
    run_id = run_id_from_path(path)
    record: dict = {FILE: source, KIND: "run", RUN: id_text(run_id), STATUS: OK}
    errors: list[str] = []
    warnings: list[str] = []
    if run_id in run_ids:
        errors.append(f"run id {run_id!r} is also the id of {run_ids[run_id]}; rename one file")
    run_ids.setdefault(run_id, source)
    try:
        data = read_bytes(path, stop_at_nul=False)
    except InputError as error:
        record.update({ERRORS: [error.message, *errors], WARNINGS: warnings})
        return record
    read = read_columns_leniently(data, source, RUN_FORMAT, SHOWN)
    _report_malformed(read, RUN_FORMAT, errors)
    scores = read.columns["score"]
    scored = ~np.isnan(scores)
    qids, docids, scores = read.columns["qid"][scored], read.columns["docid"][scored], scores[scored]
    nan_scores = int((~scored).sum())
    if nan_scores:
        warnings.append(f"{_counted(nan_scores, 'line is', 'lines are')} scored nan and skipped")
    if len(scores) == 0:
        errors.append(f"no scored run lines ({RUN_FORMAT.layout})")
    query_codes, unique_qids = pd.factorize(qids)
    unique_qids = pd.Index(unique_qids, dtype=object)
    record.update({LINES: len(scores), QUERIES: len(unique_qids)})
    record.update(_against_qrels(unique_qids, qrels, errors, warnings))
    record[DUPLICATE_DOCUMENTS] = _duplicates(data, query_codes, unique_qids, docids, errors)
    ranking = rank_within_queries(query_codes, TextColumn.of_texts(docids), scores)
    rank = ranking.rank
    depth = np.bincount(query_codes, minlength=len(unique_qids))
    record[TIE_GROUPS] = _ties(query_codes, ranking, depth, warnings)
    record[DEPTH] = (
        {LOWEST: int(depth.min()), MEDIAN: float(np.median(depth)), HIGHEST: int(depth.max())} if len(depth) else None
    )
    record[UNJUDGED_AT_10] = _unjudged_at_top(qids, docids, rank, qrels)
    usable = qrels.lookup is not None and not errors
    run = RunColumns(source=source, run_id=run_id, qids=TextColumn.of_texts(qids), docids=TextColumn.of_texts(docids),
                     scores=scores)
    record[TIE_RANGES] = _tie_ranges(run, qrels.lookup, warnings) if usable else None
    record.update({NAN_SCORES: nan_scores, MALFORMED_LINES: _malformed_summary(read), ERRORS: errors,
                   WARNINGS: warnings})
    return record


def _tie_ranges(run: RunColumns, lookup: RelevantLookup, warnings: list[str]) -> dict | None:
    """The mean of every default metric in docid order and its bounds over all tie orders (see the
    module docstring), with a warning for those wider than :data:`WIDE_TIE_RANGE`."""
    try:
        ranked = rank_relevant(run, lookup)
    except InputError:
        return None
    table = RankTable.from_ranked(lookup.qrels, [ranked])
    positions = binary_positions(table, Selection.everything(table), ties=True)
    metrics = [measure for measure in parse_measures(DEFAULT_EVAL_MEASURES) if isinstance(measure, Metric)]
    ranges = {}
    for measure, (low, high) in zip(metrics, metric_bounds(metrics, positions).values()):
        ranges[measure.name] = {DOCID: float(measure.compute(positions).mean()),
                                LOWEST: float(low.mean()), HIGHEST: float(high.mean())}
    wide = [f"{name} by {bounds[HIGHEST] - bounds[LOWEST]:.4f} ({bounds[LOWEST]:.4f} to {bounds[HIGHEST]:.4f})"
            for name, bounds in ranges.items() if bounds[HIGHEST] - bounds[LOWEST] >= WIDE_TIE_RANGE - 1e-12]
    if wide:
        warnings.append("the order of tied documents can move mean " + ", ".join(wide)
                        + ": see eval --ties expected or range")
    return ranges


def widest_tie_range(record: dict) -> tuple[str, float] | None:
    """The default metric whose mean the order of tied documents can move most, and by how much."""
    ranges = record.get(TIE_RANGES)
    if not ranges:
        return None
    name = max(ranges, key=lambda key: ranges[key][HIGHEST] - ranges[key][LOWEST])
    return name, ranges[name][HIGHEST] - ranges[name][LOWEST]


def _against_qrels(run_qids: pd.Index, qrels: JudgedQrels, errors: list[str], warnings: list[str]) -> dict:
    if qrels.qids is None:
        return {QUERIES_NOT_IN_QRELS: None, QUERIES_MISSING_FROM_RUN: None}
    not_in_qrels = run_qids[~run_qids.isin(qrels.qids)]
    missing = qrels.relevant_qids[~qrels.relevant_qids.isin(run_qids)]
    if len(run_qids) and len(not_in_qrels) == len(run_qids):
        errors.append("no query of the run is in the qrels" + query_id_hint(run_qids, qrels.qids))
    elif len(not_in_qrels):
        warnings.append(f"{_counted(len(not_in_qrels), 'query is', 'queries are')} not in the qrels and ignored")
    if len(missing) and len(not_in_qrels) < len(run_qids):
        warnings.append(f"{_counted(len(missing), 'query', 'queries')} with relevant documents missing, "
                        "scored as retrieving nothing")
    return {QUERIES_NOT_IN_QRELS: _listed(not_in_qrels), QUERIES_MISSING_FROM_RUN: _listed(missing)}


def _duplicates(data: bytes, query_codes, unique_qids, docids, errors: list[str]) -> dict:
    duplicated = pd.MultiIndex.from_arrays([query_codes, _objects(docids)]).duplicated()
    count = int(duplicated.sum())
    if not count:
        return {COUNT: 0, FIRST: None}
    row = int(np.flatnonzero(duplicated)[0])
    qid, docid = str(unique_qids[query_codes[row]]), str(docids[row])
    lines = find_lines(data, {0: qid, 2: docid})[:2]
    where = f", lines {lines[0]} and {lines[1]}" if len(lines) == 2 else ""
    errors.append(f"{_counted(count, 'document appears', 'documents appear')} twice for a query "
                  f"(first: {docid!r} for query {qid!r}{where})")
    return {COUNT: count, FIRST: {QID: id_text(qid), DOCID: id_text(docid), LINES: lines}}


def _ties(query_codes, ranking: RowRanks, depth, warnings: list[str]) -> dict:
    """Tie groups (of two or more rows), as the ranking found them: rows of one query with one
    score, which occupy consecutive ranks."""
    if ranking.tie_size is None:
        first_rank = size = query = np.empty(0, dtype=np.int64)
    else:
        first = (ranking.tie_size >= 2) & (ranking.rank == ranking.tie_start)
        first_rank, size, query = ranking.tie_start[first], ranking.tie_size[first], query_codes[first]
    last_rank = first_rank + size - 1
    across = int(((first_rank <= TOP) & (last_rank > TOP)).sum())
    at_depth = int((last_rank == depth[query]).sum())
    documents = int(size.sum())
    if documents > MOSTLY_TIED * len(query_codes):
        warnings.append(f"{documents} of {len(query_codes)} documents share their score with another: "
                        "docids decide their order")
    if across:
        warnings.append(f"{_counted(across, 'tie group straddles', 'tie groups straddle')} rank {TOP}: "
                        f"which tied documents count at cut-off {TOP} is decided by docid")
    return {
        GROUPS: len(size),
        DOCUMENTS: documents,
        QUERIES: int(len(distinct(query))),
        ACROSS_RANK_10: across,
        AT_DEPTH: at_depth,
    }


def _unjudged_at_top(qids, docids, rank, qrels: JudgedQrels) -> float | None:
    if qrels.judged_pairs is None:
        return None
    top = (rank <= TOP) & _objects(qids).isin(qrels.qids)
    if not top.any():
        return None
    judged = pd.MultiIndex.from_arrays([_objects(qids[top]), _objects(docids[top])]).isin(qrels.judged_pairs)
    return float(pd.Series(~judged).groupby(_objects(qids[top]), sort=False).mean().mean())


def _warn_shallow_runs(records: list[dict]) -> None:
    medians = {id(r): r[DEPTH][MEDIAN] for r in records if r.get(DEPTH)}
    if len(medians) < 2:
        return
    deepest = max(medians.values())
    for record in records:
        median = medians.get(id(record))
        if median is not None and median < SHALLOW * deepest:
            record[WARNINGS].append(
                f"shallow: a median of {median:g} documents per query, against {deepest:g} for the deepest run; "
                f"recall and deep cut-offs will be low"
            )


def _malformed_summary(read: Scan) -> dict:
    """The ``malformed_lines`` figure of a record: the count, the first line numbers, the first message."""
    return {COUNT: read.malformed, FIRST: list(read.malformed_lines), MESSAGE: read.first_problem}


def _report_malformed(read: Scan, fmt: LineFormat, errors: list[str]) -> None:
    """An error listing the first malformed lines (``...`` when there are more) and the first problem."""
    if read.malformed:
        more = ", ..." if read.malformed > len(read.malformed_lines) else ""
        lines = ", ".join(map(str, read.malformed_lines)) + more
        kind = f"malformed {fmt.kind} line"
        errors.append(f"{_counted(read.malformed, kind, kind + 's')} (line {lines}); the first: {read.first_problem}")


def _listed(values) -> dict:
    return {COUNT: int(len(values)), FIRST: id_texts([str(value) for value in values[:SHOWN]])}


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _counted(count: int, singular: str, plural: str) -> str:
    """``1 query is``, ``3 queries are``."""
    return f"{count} {singular if count == 1 else plural}"
