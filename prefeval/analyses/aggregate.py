"""``prefeval aggregate``: system orderings from per-query eval lines.

For each sample and measure, runs are ordered per query (by the metric, or by net preference for a
preference measure), and the per-query orderings are aggregated: by the mean for metrics, by MC4 and
Borda for preferences (definitions in :mod:`prefeval.analyses.orderings`). Output records, compatible with
pref_aggregate.py (its keys first, then ``scores``)::

    {"qid":"303","sample":0,"rpp":["A","B"],...,"scores":{"rpp":{"A":0.5,"B":-0.5},...}}
    {"qid":"all","sample":0,"rpp":{"type":"preference","mc4":["A","B"],"borda":["A","B"],
        "scores":{"mc4":{"A":0.9,"B":0.1},"borda":{"A":2.0,"B":1.0}}},
     "ap":{"type":"metric","mean":["A","B"],"scores":{"mean":{"A":0.3,"B":0.2}}}}

With ``correlations``, each sample's summary is followed by Kendall's τ between the system orderings
of every two measures, for every pair of their methods (τ-b when there are ties)::

    {"qid":"all","sample":0,"measure_a":"rpp","measure_b":"ap","method_a":"mc4","method_b":"mean","kendall_tau":1.0}
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import numpy as np

from prefeval.analyses.orderings import DEFAULT_DAMPING, QueryOrderings, kendall_tau, ordering_by
from prefeval.errors import InputError, UsageError
from prefeval.io.evallines import (
    EvalLines,
    SampleScores,
    eval_lines_from_frames,
    read_eval_lines,
)
from prefeval.measures import select_available
from prefeval.ranking.subsampling import keep_count
from prefeval.runtime.seeds import resolve_seed


def aggregate(
    source,
    measures: Sequence[str] = (),
    per_query: bool = False,
    summary: bool = True,
    query_fraction: float = 1.0,
    num_samples: int | None = None,
    seed: int | None = None,
    damping: float = DEFAULT_DAMPING,
    correlations: bool = False,
) -> Iterator[dict]:
    """Aggregate eval lines into orderings, as records.

    ``source`` is a path (``-`` for stdin) of per-query eval JSON lines; or DataFrames, one or a
    list, of per-query values as :func:`prefeval.evaluate` and :func:`prefeval.compare` return them
    (:func:`~prefeval.io.evallines.eval_lines_from_frames`); or :class:`EvalLines`.

    Without ``query_fraction``, every sample in the input is aggregated (the first ``num_samples``
    of them when given), keeping its number. With ``query_fraction`` F < 1, ``num_samples`` (default
    1) aggregations are made, each on floor(Q × F) queries (at least one) of sample 0 drawn with
    ``seed``, numbered from 0 (as pref_aggregate.py does). ``correlations`` adds, after each
    sample's summary (written or not), the records of :func:`correlation_records`.
    """
    lines = _eval_lines(source)
    chosen = select_available(measures, lines.measures, lines.source)
    if not 0.0 < query_fraction <= 1.0:
        raise UsageError(f"query_fraction must be in (0, 1], not {query_fraction}")
    if num_samples is not None and num_samples < 1:
        raise UsageError("num_samples must be at least 1")
    for sample_number, sample, queries in _aggregation_samples(lines, query_fraction, num_samples, seed):
        orderings = {m: _query_orderings(lines, sample, m, queries) for m in chosen}
        if per_query:
            yield from _per_query_records(sample_number, [sample.qids[q] for q in queries], orderings)
        if summary or correlations:
            record = _summary_record(lines, sample_number, orderings, damping)
            if summary:
                yield record
            if correlations:
                yield from correlation_records(record)


def correlation_records(summary: dict) -> Iterator[dict]:
    """Kendall's τ (τ-b with ties) between the orderings of every two measures of a summary record,
    for every method of the first (``mean``; ``mc4``, ``borda``) and every method of the second,
    measures in the order of the record. Runs missing from either ordering are left out; with fewer
    than two runs in common the τ is None."""
    measures = [name for name, entry in summary.items() if isinstance(entry, dict)]
    for i, measure_a in enumerate(measures):
        for measure_b in measures[i + 1:]:
            entry_a, entry_b = summary[measure_a], summary[measure_b]
            for method_a in _methods(entry_a):
                for method_b in _methods(entry_b):
                    yield {"qid": "all", "sample": summary["sample"], "measure_a": measure_a, "measure_b": measure_b,
                           "method_a": method_a, "method_b": method_b,
                           "kendall_tau": _ordering_tau(entry_a, method_a, entry_b, method_b)}


def _methods(entry: dict) -> list[str]:
    return [key for key in entry if key not in ("type", "scores")]


def _ordering_tau(entry_a: dict, method_a: str, entry_b: dict, method_b: str) -> float | None:
    common = set(entry_a[method_a]) & set(entry_b[method_b])
    if len(common) < 2:
        return None
    order_a = [run for run in entry_a[method_a] if run in common]
    order_b = [run for run in entry_b[method_b] if run in common]
    return kendall_tau(order_a, order_b, entry_a["scores"][method_a], entry_b["scores"][method_b])


def _eval_lines(source) -> EvalLines:
    if isinstance(source, EvalLines):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_eval_lines(os.fspath(source))
    return eval_lines_from_frames(source)


def _aggregation_samples(lines: EvalLines, query_fraction: float, num_samples: int | None, seed: int | None):
    """(output sample number, source sample, query numbers) for each aggregation."""
    if query_fraction >= 1.0:
        chosen = lines.samples if num_samples is None else lines.samples[:num_samples]
        for sample in chosen:
            yield sample.sample, sample, np.arange(len(sample.qids))
        return
    source = lines.samples[0]
    rng = np.random.default_rng(resolve_seed(seed))
    count = int(keep_count(len(source.qids), query_fraction))
    for number in range(num_samples or 1):
        yield number, source, np.sort(rng.choice(len(source.qids), size=count, replace=False))


def _query_orderings(lines: EvalLines, sample: SampleScores, measure: str, queries: np.ndarray) -> QueryOrderings:
    if lines.is_metric(measure):
        if measure not in sample.metrics:
            raise InputError(lines.source, f"sample {sample.sample} has no values of {measure}")
        scores = sample.metric_scores(measure)
    else:
        if measure not in sample.pairs:
            raise InputError(lines.source, f"sample {sample.sample} has no values of {measure}")
        scores = sample.net_preferences(measure)
    return QueryOrderings.from_scores(sample.runs, scores[queries])


def _per_query_records(sample_number: int, qids: list[str], orderings: dict[str, QueryOrderings]) -> Iterator[dict]:
    ranked = {measure: ordering.orderings() for measure, ordering in orderings.items()}
    scores = {measure: ordering.scores.tolist() for measure, ordering in orderings.items()}
    for q, qid in enumerate(qids):
        record: dict = {"qid": qid, "sample": sample_number}
        for measure, ordering in orderings.items():
            record[measure] = [ordering.runs[r] for r in ranked[measure][q]]
        record["scores"] = {
            measure: {ordering.runs[r]: scores[measure][q][r] for r in ranked[measure][q]}
            for measure, ordering in orderings.items()
        }
        yield record


def _summary_record(lines: EvalLines, sample_number: int, orderings: dict[str, QueryOrderings], damping: float) -> dict:
    record: dict = {"qid": "all", "sample": sample_number}
    for measure, ordering in orderings.items():
        runs = ordering.runs
        if lines.is_metric(measure):
            means = _mean_where_present(ordering.scores)
            mean_order, mean_scores = ordering_by(means, runs)
            record[measure] = {"type": "metric", "mean": mean_order, "scores": {"mean": mean_scores}}
        else:
            mc4_order, mc4_scores = ordering_by(ordering.mc4(damping), runs)
            borda_order, borda_scores = ordering_by(ordering.borda(), runs)
            record[measure] = {
                "type": "preference",
                "mc4": mc4_order,
                "borda": borda_order,
                "scores": {"mc4": mc4_scores, "borda": borda_scores},
            }
    return record


def _mean_where_present(scores: np.ndarray) -> np.ndarray:
    """Per run, the mean over the queries it has a value on (NaN for a run with none)."""
    present = ~np.isnan(scores)
    totals = np.where(present, scores, 0.0).sum(axis=0)
    counts = present.sum(axis=0)
    return np.divide(totals, counts, out=np.full(len(totals), np.nan), where=counts > 0)
