"""``prefeval aggregate``: system orderings from per-query eval lines.

For each sample and measure, runs are ordered per query (by the metric, or by net preference for a
preference measure), and the per-query orderings are aggregated: by the mean for metrics, by MC4 and
Borda for preferences (definitions in :mod:`prefeval.analyses.orderings`). Output records, compatible with
pref_aggregate.py (its keys first, then ``scores``)::

    {"qid":"303","sample":0,"rpp":["A","B"],...,"scores":{"rpp":{"A":0.5,"B":-0.5},...}}
    {"qid":"all","sample":0,"rpp":{"type":"preference","mc4":["A","B"],"borda":["A","B"],
        "scores":{"mc4":{"A":0.9,"B":0.1},"borda":{"A":2.0,"B":1.0}}},
     "ap":{"type":"metric","mean":["A","B"],"scores":{"mean":{"A":0.3,"B":0.2}}}}

A metric may be aggregated by another statistic over queries (:mod:`prefeval.measures.summaries`) by
naming it ``metric:statistic``: ``ap:median`` orders the runs by their median AP (per query, by AP),
under the key ``ap:median`` with the method ``median``; the Gini coefficient orders runs ascending
(lower is more even)::

    "ap:median":{"type":"metric","median":["B","A"],"scores":{"median":{"B":0.25,"A":0.2}}}

Records are told apart by their keys, never by ``qid`` (a query may be named ``all``):
:func:`~prefeval.io.records.aggregate_record_kind`, beside the keys of every record
(:mod:`prefeval.io.records`).

With ``correlations``, each sample's summary is followed by Kendall's τ between the system orderings
of every two measures, for every pair of their methods (τ-b when there are ties)::

    {"qid":"all","sample":0,"measure_a":"rpp","measure_b":"ap","method_a":"mc4","method_b":"mean","kendall_tau":1.0}

With ``bootstrap`` B, they are followed by the rank of every run in every ordering over B resamples
of the queries, its 95% interval and its tier (:mod:`prefeval.analyses.bootstrap`), a record per run::

    {"qid":"all","sample":0,"measure":"ap","method":"mean","run":"A","rank":1,"score":0.31,"rank_low":1,
     "rank_high":2,"tier":1,"rank_probabilities":[0.82,0.18],"resamples":1000}

With ``user_groups`` (``--user-groups FILE``: a user, its group; :mod:`prefeval.io.side`), each
sample's records over all users are followed by the same summary (and rank intervals, with
``bootstrap``) on the users of each group alone, groups in name order, each record carrying the
group and its number of users after ``sample``; then, for every metric, each run's **worst-off
group**, the group where its value is least (every metric of prefeval is better when larger; ties go to
the first group in name order), runs ordered by that value::

    {"qid":"all","sample":0,"group":"cold","users":120,"ap":{"type":"metric","mean":["B","A"],...}}
    {"qid":"all","sample":0,"worst_off":"ap","method":"mean","ordering":["B","A"],
     "values":{"B":0.21,"A":0.18},"groups":{"B":"cold","A":"cold"}}

A group's value is the aggregation on its users' lines alone, what the whole aggregation gives on
the eval lines filtered to them by hand (the tests check it). A user in two groups is an error at its
line; users of the lines in no group count in no group's records (a note says how many); a group with
no user in a sample has no record. The resamples of a group's rank intervals are drawn from its users,
seeded by the seed, the sample and the group's place in name order.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from prefeval.analyses.bootstrap import bootstrap_ranks, bootstrap_records
from prefeval.analyses.groups import UserGroupIndex, better, read_user_groups
from prefeval.analyses.orderings import (
    DEFAULT_DAMPING,
    PREFERENCE_METHODS,
    QueryOrderings,
    competition_ranks,
    higher_is_better,
    kendall_tau,
    ordering_by,
)
from prefeval.errors import InputError, UsageError, shown
from prefeval.io.evallines import (
    EvalLines,
    SampleScores,
    eval_lines_from_frames,
    read_eval_lines,
)
from prefeval.io.keys import MEAN, METRIC, PREFERENCE, QID, SAMPLE, SUMMARY_QID, TYPE, statistic_key
from prefeval.io.records import (
    GROUP,
    GROUPS,
    KENDALL_TAU,
    MEASURE_A,
    MEASURE_B,
    METHOD,
    METHOD_A,
    METHOD_B,
    ORDERING,
    SCORES,
    USERS,
    VALUES,
    WORST_OFF,
)
from prefeval.measures import select_available
from prefeval.measures.request import split_measure_list
from prefeval.measures.summaries import STATISTICS, split_statistic
from prefeval.ranking.subsampling import keep_count
from prefeval.runtime.memory import MAX_RESAMPLES, check_count
from prefeval.runtime.seeds import resolve_seed


class Aggregation(NamedTuple):
    """What is aggregated under one key of the records: ``measure`` (a key of the eval lines), by
    ``methods`` (MC4 and Borda for a preference; one statistic for a metric: ``ap`` by the mean,
    ``ap:median`` by the median)."""

    key: str
    measure: str
    is_metric: bool
    methods: tuple[str, ...]


def choose_aggregations(lines: EvalLines, names: Sequence[str] = ()) -> list[Aggregation]:
    """The aggregations ``-m NAMES`` asks for (every measure of ``lines``, each by its default method,
    when none): a measure by any of its names (:func:`~prefeval.measures.select_available`), or a
    metric and a statistic as ``metric:statistic`` (``ap:median``, ``map:q10``)."""
    keys: list[tuple[str, str | None]] = []
    for text in names:
        tokens = split_measure_list(text)
        if not any(split_statistic(token)[1] for token in tokens):
            keys += [(measure, None) for measure in select_available([text], lines.measures, lines.source)]
            continue
        for token in tokens:
            name, statistic = split_statistic(token)
            (measure,) = select_available([name], lines.measures, lines.source)
            if statistic is not None and not lines.is_metric(measure):
                raise UsageError(f"{token}: summary statistics are of metrics, and {measure} is a preference "
                                 f"(aggregated by {' and '.join(PREFERENCE_METHODS)})")
            keys.append((measure, statistic))
    if not names:
        keys = [(measure, None) for measure in lines.measures]
    aggregations = []
    for measure, statistic in dict.fromkeys(keys):
        if lines.is_metric(measure):
            chosen = statistic or MEAN
            aggregations.append(Aggregation(statistic_key(measure, chosen), measure, True, (chosen,)))
        else:
            aggregations.append(Aggregation(measure, measure, False, PREFERENCE_METHODS))
    return list({a.key: a for a in aggregations}.values())


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
    bootstrap: int | None = None,
    user_groups=None,
) -> Iterator[dict]:
    """Aggregate eval lines into orderings, as records.

    ``source`` is a path (``-`` for stdin) of per-query eval JSON lines; or DataFrames, one or a
    list, of per-query values as :func:`prefeval.evaluate` and :func:`prefeval.compare` return them
    (:func:`~prefeval.io.evallines.eval_lines_from_frames`); or :class:`EvalLines`.

    Without ``query_fraction``, every sample in the input is aggregated (the first ``num_samples``
    of them when given), keeping its number. With ``query_fraction`` F < 1, ``num_samples`` (default
    1) aggregations are made, each on floor(Q × F) queries (at least one) of sample 0 drawn with
    ``seed``, numbered from 0 (as pref_aggregate.py does). ``correlations`` adds, after each
    sample's summary (written or not), the records of :func:`correlation_records`; ``bootstrap`` B
    then adds the rank intervals and tiers of every ordering over B resamples of the sample's queries
    (:mod:`prefeval.analyses.bootstrap`).

    ``measures`` are names as ``-m`` takes them (:func:`choose_aggregations`). ``seed`` (drawn and
    reported when None and something is drawn) seeds the query subsamples and the resamples.
    ``user_groups`` (a path or a DataFrame of user, group): the records of each group's users and
    the worst-off groups follow each sample's (module docstring).
    """
    if not 0.0 < query_fraction <= 1.0:
        raise UsageError(f"query_fraction must be in (0, 1], not {query_fraction}")
    if num_samples is not None and num_samples < 1:
        raise UsageError("num_samples must be at least 1")
    if bootstrap is not None and (isinstance(bootstrap, bool) or not isinstance(bootstrap, numbers.Integral)
                                  or bootstrap < 1):
        raise UsageError(f"bootstrap must be a number of resamples of at least 1, not {shown(bootstrap)}")
    check_count("--bootstrap", bootstrap or 0, MAX_RESAMPLES,
                "a rank probability is then within 0.0005 of its limit; more resamples only take longer, each "
                "ordering every run again")
    lines = _eval_lines(source)
    chosen = choose_aggregations(lines, measures)
    _check_non_negative(lines, chosen)
    groups = read_user_groups(user_groups) if user_groups is not None else None
    if bootstrap or query_fraction < 1.0:
        seed = resolve_seed(seed)
    for sample_number, sample, queries in _aggregation_samples(lines, query_fraction, num_samples, seed):
        per_measure = {a.measure: _query_orderings(lines, sample, a.measure, queries) for a in chosen}
        orderings = {a.key: per_measure[a.measure] for a in chosen}
        if per_query:
            yield from _per_query_records(sample_number, [sample.qids[q] for q in queries], orderings)
        if summary or correlations:
            record = _summary_record(sample_number, chosen, orderings, damping)
            if summary:
                yield record
            if correlations:
                yield from correlation_records(record)
        if bootstrap:
            yield from _bootstrap_records(sample_number, chosen, orderings, bootstrap, damping, [seed, sample_number])
        if groups is not None:
            yield from _group_records(lines, sample_number, sample, queries, chosen, groups, summary, bootstrap,
                                      damping, seed)


def _bootstrap_records(sample_number: int, chosen: list[Aggregation], orderings: dict[str, QueryOrderings],
                       bootstrap: int, damping: float, seed_key: list[int], labels: dict | None = None):
    """The rank intervals of every ordering, each aggregation's resamples drawn from the seed ``seed_key``."""
    for aggregation in chosen:
        ranks = bootstrap_ranks(orderings[aggregation.key], aggregation.methods, int(bootstrap),
                                np.random.default_rng(seed_key), damping)
        for method, result in ranks.items():
            for record in bootstrap_records(sample_number, aggregation.key, method, result):
                yield _labelled(record, labels)


def _labelled(record: dict, labels: dict | None) -> dict:
    """``record`` with ``labels`` (a group and its users) after its sample."""
    if not labels:
        return record
    keys = list(record)
    place = keys.index(SAMPLE) + 1
    return {key: record[key] for key in keys[:place]} | labels | {key: record[key] for key in keys[place:]}


def _group_records(lines: EvalLines, sample_number: int, sample: SampleScores, queries: np.ndarray,
                   chosen: list[Aggregation], groups: UserGroupIndex, summary: bool, bootstrap: int | None,
                   damping: float, seed: int | None) -> Iterator[dict]:
    """The summary (and rank intervals) of each group's users, then the worst-off groups (module docstring)."""
    by_group = groups.queries(sample.qids, queries, lines.source, sample_number)
    worst: dict[str, tuple[dict, dict]] = {}
    for place, name in enumerate(groups.names):
        if name not in by_group:
            continue
        members = by_group[name]
        labels = {GROUP: name, USERS: len(members)}
        orderings = {a.key: _query_orderings(lines, sample, a.measure, members) for a in chosen}
        record = _summary_record(sample_number, chosen, orderings, damping)
        if summary:
            yield _labelled(record, labels)
        for aggregation in chosen:
            if aggregation.is_metric and better(aggregation.key):
                method = aggregation.methods[0]
                values, owners = worst.setdefault(aggregation.key, ({}, {}))
                for run, value in record[aggregation.key][SCORES][method].items():
                    if run not in values or _worse(value, values[run], method, better(aggregation.key)):
                        values[run], owners[run] = value, name
        if bootstrap:
            yield from _bootstrap_records(sample_number, chosen, orderings, bootstrap, damping,
                                          [seed, sample_number, place + 1], labels)
    if summary:
        for aggregation in chosen:
            if aggregation.key in worst:
                method = aggregation.methods[0]
                values, owners = worst[aggregation.key]
                ordering = sorted(values, key=lambda run: values[run],
                                  reverse=higher_is_better(method) == (better(aggregation.key) > 0))
                yield {QID: SUMMARY_QID, SAMPLE: sample_number, WORST_OFF: aggregation.key, METHOD: method,
                       ORDERING: ordering, VALUES: {run: values[run] for run in ordering},
                       GROUPS: {run: owners[run] for run in ordering}}


def _worse(value: float, than: float, method: str, direction: int = 1) -> bool:
    """Whether a group's ``value`` of a run is worse than ``than``, by ``method`` (lower is worse,
    except where the method orders ascending, the Gini coefficient, or the metric is better when
    smaller, ``direction`` −1: ARP, :attr:`~prefeval.measures.base.Measure.better`)."""
    return value < than if higher_is_better(method) == (direction > 0) else value > than


def _check_non_negative(lines: EvalLines, aggregations: list[Aggregation]) -> None:
    """An :class:`InputError` when a metric aggregated by a statistic defined for non-negative values
    only (``ap:gini``) has a negative value, found before any record is made: the summary comes after
    the per-query orderings (``-q``), which would be written already."""
    for aggregation in aggregations:
        statistic = STATISTICS.get(aggregation.methods[0]) if aggregation.is_metric else None
        if statistic is None or not statistic.non_negative:
            continue
        for sample in lines.samples:
            values = sample.metrics.get(aggregation.measure, np.empty(0))
            negative = np.flatnonzero(values < 0)
            if len(negative):
                line = negative[0]
                run, qid = sample.runs[sample.metric_run[line]], sample.qids[sample.metric_query[line]]
                raise InputError(lines.source, f"{aggregation.key}: " + statistic.refusal(
                    f"{aggregation.measure} is {float(values[line])!r} for run {run} on query {qid} "
                    f"(sample {sample.sample})"))


def correlation_records(summary: dict) -> Iterator[dict]:
    """Kendall's τ (τ-b with ties) between the orderings of every two measures of a summary record,
    for every method of the first (``mean``; ``mc4``, ``borda``) and every method of the second,
    measures in the order of the record. Runs missing from either ordering are left out; two orderings
    with fewer than two runs in common order no pair of runs, have no τ, and give no record."""
    measures = [name for name, entry in summary.items() if isinstance(entry, dict)]
    for i, measure_a in enumerate(measures):
        for measure_b in measures[i + 1:]:
            entry_a, entry_b = summary[measure_a], summary[measure_b]
            for method_a in _methods(entry_a):
                for method_b in _methods(entry_b):
                    tau = _ordering_tau(entry_a, method_a, entry_b, method_b)
                    if tau is not None:
                        yield {QID: SUMMARY_QID, SAMPLE: summary[SAMPLE], MEASURE_A: measure_a,
                               MEASURE_B: measure_b, METHOD_A: method_a, METHOD_B: method_b, KENDALL_TAU: tau}


class OrderingComparison(NamedTuple):
    """How measures order the runs of the first sample: each measure's ordering by its default
    method (``methods``: MC4 for a preference, the mean for a metric), the competition ``ranks`` of
    the runs in each (a dict per measure; tied runs share a rank), ``runs`` in the order of the first
    measure, and ``tau[a, b]``, Kendall's τ (τ-b with ties) between the orderings of measures a and
    b, NaN when they do not order the same runs."""

    measures: list[str]
    methods: dict[str, str]
    runs: list[str]
    ranks: list[dict[str, int]]
    tau: np.ndarray


def compare_orderings(source, measures: Sequence[str] = ()) -> OrderingComparison:
    """The :class:`OrderingComparison` of ``measures`` (any of their names; default every measure) in
    the eval lines ``source`` (as :func:`aggregate` takes them). What ``prefeval plot orderings``
    draws."""
    lines = _eval_lines(source)
    measures = select_available(measures, lines.measures, lines.source)
    record = next(aggregate(lines, measures))
    methods = {m: ("mc4" if record[m][TYPE] == PREFERENCE else MEAN) for m in measures}
    orderings = [record[m][methods[m]] for m in measures]
    scores = [record[m][SCORES][methods[m]] for m in measures]
    count = len(measures)
    tau = np.full((count, count), np.nan)
    for a in range(count):
        for b in range(count):
            if sorted(orderings[a]) == sorted(orderings[b]):
                tau[a, b] = kendall_tau(orderings[a], orderings[b], scores[a], scores[b])
    return OrderingComparison(measures, methods, orderings[0], [competition_ranks(s) for s in scores], tau)


def _methods(entry: dict) -> list[str]:
    return [key for key in entry if key not in (TYPE, SCORES)]


def _ordering_tau(entry_a: dict, method_a: str, entry_b: dict, method_b: str) -> float | None:
    common = set(entry_a[method_a]) & set(entry_b[method_b])
    if len(common) < 2:
        return None
    order_a = [run for run in entry_a[method_a] if run in common]
    order_b = [run for run in entry_b[method_b] if run in common]
    return kendall_tau(order_a, order_b, entry_a[SCORES][method_a], entry_b[SCORES][method_b])


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
    """The per-query orderings of one measure. A preference needs pair lines holding it: without any
    (a sample of one run, or of metric lines only) every run would tie on every query, an ordering
    that says nothing, so that is an error."""
    if lines.is_metric(measure):
        if measure not in sample.metrics or np.isnan(sample.metrics[measure]).all():
            raise InputError(lines.source, f"sample {sample.sample} has no values of {measure}")
        scores = sample.metric_scores(measure)
    else:
        if measure not in sample.pairs or np.isnan(sample.pairs[measure]).all():
            what = "no pair lines" if not len(sample.pair_query) else f"no pair lines with values of {measure}"
            raise InputError(lines.source, f"sample {sample.sample} has {what}: the preference {measure} orders "
                                           "runs by their pairs (eval writes pair lines for two or more runs)")
        scores = sample.net_preferences(measure)
    return QueryOrderings.from_scores(sample.runs, scores[queries])


def _per_query_records(sample_number: int, qids: list[str], orderings: dict[str, QueryOrderings]) -> Iterator[dict]:
    ranked = {measure: ordering.orderings() for measure, ordering in orderings.items()}
    scores = {measure: ordering.scores.tolist() for measure, ordering in orderings.items()}
    for q, qid in enumerate(qids):
        record: dict = {QID: qid, SAMPLE: sample_number}
        for measure, ordering in orderings.items():
            record[measure] = [ordering.runs[r] for r in ranked[measure][q]]
        record[SCORES] = {
            measure: {ordering.runs[r]: scores[measure][q][r] for r in ranked[measure][q]}
            for measure, ordering in orderings.items()
        }
        yield record


def _summary_record(sample_number: int, aggregations: list[Aggregation], orderings: dict[str, QueryOrderings],
                    damping: float) -> dict:
    record: dict = {QID: SUMMARY_QID, SAMPLE: sample_number}
    for aggregation in aggregations:
        ordering = orderings[aggregation.key]
        entry: dict = {TYPE: METRIC if aggregation.is_metric else PREFERENCE}
        scores = {}
        for method in aggregation.methods:
            entry[method], scores[method] = ordering_by(ordering.aggregated(method, damping), ordering.runs,
                                                        higher_is_better(method))
        entry[SCORES] = scores
        record[aggregation.key] = entry
    return record
