"""The vocabulary of the analyses' records: every key they are written with, defined once for their
writers (:mod:`prefeval.analyses`) and their readers (the reports of :mod:`prefeval.report`, the
inputs of ``prefeval plot``), and how the kind of a record is told from its keys.

A sibling of :mod:`prefeval.io.keys` rather than a part of it: that module is the vocabulary of eval
lines, imported by every ``eval`` on its way to the first byte, while these records are written and
read only by the commands that analyse eval lines and runs (``aggregate``, ``significance``,
``sampled``, ``null``, ``check``, ``plot``). The keys the two share (``qid``, ``sample``, ``run``,
``runi``, ``runj``, ``type``) are that module's, so that each key is still spelled once.

Records, by the analysis that writes them:

* ``aggregate`` (:func:`~prefeval.analyses.aggregate.aggregate`): per-query orderings, summary
  orderings, correlations between orderings and, with ``--bootstrap``, rank intervals, told apart by
  :func:`aggregate_record_kind`.
* ``significance`` (:func:`~prefeval.analyses.significance.pairwise_significance`): a record per
  tested pair and measure, then the discriminative power of the measure (:func:`is_pair_test`).
* ``sampled`` (:func:`~prefeval.analyses.sampled_metrics.sampled_records`) and ``null``
  (:func:`~prefeval.analyses.null.null_records`): :func:`sampled_record_kind`,
  :func:`null_record_kind`.
* ``check`` (:func:`~prefeval.analyses.check.check`): a record per file, the figures of each file
  under the keys listed there.

Kinds are recognised by keys, never by ``qid``: a query may be named ``all``.
"""

from __future__ import annotations

from prefeval.io.keys import QID, RUN, RUNI, SAMPLE

MEASURE, METHOD = "measure", "method"
"""The measure of a record (a key of the eval lines, ``ap:median`` for a statistic of a metric) and
the method that aggregates it (``mean``, ``mc4``, ``borda``, another statistic)."""
KENDALL_TAU = "kendall_tau"

# --- aggregate ---------------------------------------------------------------------------------------

SCORES = "scores"
"""Of a per-query ordering, each measure's scores of the runs; of a summary's entry, each method's."""
ORDERING_LABELS = (QID, SAMPLE, SCORES)
"""The keys of a per-query or summary ordering that are not measures."""
MEASURE_A, MEASURE_B, METHOD_A, METHOD_B = "measure_a", "measure_b", "method_a", "method_b"
"""The two orderings a correlation compares (with its :data:`KENDALL_TAU`)."""
RANK, SCORE, RANK_LOW, RANK_HIGH, TIER = "rank", "score", "rank_low", "rank_high", "tier"
RANK_PROBABILITIES, RESAMPLES = "rank_probabilities", "resamples"
BOOTSTRAP_KEYS = (RANK, RANK_LOW, RANK_HIGH, TIER, RANK_PROBABILITIES)
"""The keys that make a record a rank interval of ``aggregate --bootstrap``."""
GROUP, USERS = "group", "users"
"""Of a record made on the users of one group (``aggregate --user-groups``): the group, and its users."""
WORST_OFF, ORDERING, GROUPS, VALUES = "worst_off", "ordering", "groups", "values"
"""Of a worst-off record (``aggregate --user-groups``): the metric, each run's worst-off group and its value."""
QUERY_ORDERING, SUMMARY_ORDERING, CORRELATION, RANK_INTERVAL = "query", "summary", "correlation", "bootstrap"
WORST_OFF_GROUP = "worst_off"
"""The kinds of aggregate's records (:func:`aggregate_record_kind`)."""


def aggregate_record_kind(record: dict) -> str:
    """What a record of :func:`~prefeval.analyses.aggregate.aggregate` is: :data:`QUERY_ORDERING`,
    :data:`SUMMARY_ORDERING`, :data:`CORRELATION`, :data:`RANK_INTERVAL` or :data:`WORST_OFF_GROUP`
    (``query``, ``summary``, ``correlation``, ``bootstrap``, ``worst_off``); by its keys, so that a
    query named ``all`` is still a query. A summary or rank interval of one group's users carries
    :data:`GROUP`."""
    if WORST_OFF in record:
        return WORST_OFF_GROUP
    if SCORES in record:
        return QUERY_ORDERING
    if KENDALL_TAU in record and MEASURE_A in record:
        return CORRELATION
    if all(key in record for key in BOOTSTRAP_KEYS):
        return RANK_INTERVAL
    return SUMMARY_ORDERING


# --- significance ------------------------------------------------------------------------------------

TEST = "test"
MEAN, WINS, LOSSES, TIES = "mean", "wins", "losses", "ties"
P_VALUE, P_CORRECTED, CI_LOW, CI_HIGH, EFFECT_SIZE = "p", "p_corrected", "ci_low", "ci_high", "effect_size"
PAIR_STATISTICS = (MEAN, WINS, LOSSES, TIES, P_VALUE, P_CORRECTED, CI_LOW, CI_HIGH, EFFECT_SIZE)
"""The statistics of a tested pair, in the order of its record (the fields of
:class:`~prefeval.analyses.significance.PairStatistics` of the same names)."""
SIGNIFICANT = "significant"
CORRECTION, ALPHA, DISCRIMINATIVE_POWER, PAIRS = "correction", "alpha", "discriminative_power", "pairs"
"""The keys of a measure's discriminative power, with its :data:`TEST`."""


def is_pair_test(record: dict) -> bool:
    """Whether a record of ``significance`` is a tested pair (else it is a discriminative power)."""
    return RUNI in record


# --- sampled -----------------------------------------------------------------------------------------

SAMPLE_SIZE, EXACT, SAMPLED = "sample_size", "exact", "sampled"
SAMPLED_MEAN, SAMPLED_STD, DISCORDANT_PAIRS = "sampled_mean", "sampled_std", "discordant_pairs"
SAMPLED_VALUES, CONSISTENCY = "values", "consistency"
"""The kinds of sampled's records (:func:`sampled_record_kind`)."""


def sampled_record_kind(record: dict) -> str | None:
    """What a record of ``sampled`` is: :data:`SAMPLED_VALUES` (a run's exact and sampled values of a
    metric, on a query or their means) or :data:`CONSISTENCY` (the orderings of the runs compared);
    None for a record that is neither."""
    if RUN in record and all(key in record for key in (MEASURE, SAMPLE_SIZE, EXACT, SAMPLED)):
        return SAMPLED_VALUES
    if all(key in record for key in (MEASURE, SAMPLE_SIZE, KENDALL_TAU)):
        return CONSISTENCY
    return None


# --- null --------------------------------------------------------------------------------------------

NUM_REL, NUM_ITEMS, EXPECTED, QUANTILE, THRESHOLD = "num_rel", "num_items", "expected", "quantile", "threshold"
EXPECTED_METHOD, THRESHOLD_METHOD = "expected_method", "threshold_method"
VALUE, ABOVE_NULL, FRACTION_ABOVE_NULL = "value", "above_null", "fraction_above_null"
NULL_DISTRIBUTION, OBSERVED, ABOVE_NULL_SUMMARY = "null", "observed", "summary"
"""The kinds of null's records (:func:`null_record_kind`)."""


def null_record_kind(record: dict) -> str | None:
    """What a record of ``null`` is: :data:`NULL_DISTRIBUTION` (a query's expected value and
    threshold of a metric), :data:`OBSERVED` (a run's value on a query) or :data:`ABOVE_NULL_SUMMARY`
    (a run's mean value and fraction of queries above the null); None for a record that is neither."""
    if all(key in record for key in (QID, MEASURE, EXPECTED, THRESHOLD, QUANTILE)):
        return NULL_DISTRIBUTION
    if all(key in record for key in (QID, RUN, MEASURE, VALUE)):
        if ABOVE_NULL in record:
            return OBSERVED
        if FRACTION_ABOVE_NULL in record:
            return ABOVE_NULL_SUMMARY
    return None


# --- check -------------------------------------------------------------------------------------------

FILE, KIND, STATUS, ERRORS, WARNINGS = "file", "kind", "status", "errors", "warnings"
"""Every check record's: the file, ``qrels`` or ``run``, ``ok``/``warning``/``error``, and why."""
LINES, QUERIES, MALFORMED_LINES = "lines", "queries", "malformed_lines"
JUDGMENTS, RELEVANT, GRADES, QUERIES_WITHOUT_RELEVANT = "judgments", "relevant", "grades", "queries_without_relevant"
"""The qrels' figures (with :data:`LINES`, :data:`QUERIES` and :data:`MALFORMED_LINES`)."""
QUERIES_NOT_IN_QRELS, QUERIES_MISSING_FROM_RUN = "queries_not_in_qrels", "queries_missing_from_run"
DUPLICATE_DOCUMENTS, DEPTH, UNJUDGED_AT_10, NAN_SCORES = "duplicate_documents", "depth", "unjudged_at_10", "nan_scores"
TIE_GROUPS, TIE_RANGES = "ties", "tie_ranges"
"""A run's figures (with :data:`RUN`, :data:`LINES`, :data:`QUERIES` and :data:`MALFORMED_LINES`)."""
COUNT, FIRST, MESSAGE, DOCID = "count", "first", "message", "docid"
"""A listed figure's count and first items (query ids, line numbers, a duplicate: its :data:`QID`,
:data:`DOCID` and :data:`LINES`); a malformed line's message."""
GROUPS, DOCUMENTS, ACROSS_RANK_10, AT_DEPTH = "groups", "documents", "across_rank_10", "at_depth"
"""The figures of :data:`TIE_GROUPS` (with :data:`QUERIES`)."""
LOWEST, MEDIAN, HIGHEST = "min", "median", "max"
"""The figures of :data:`DEPTH`; :data:`LOWEST` and :data:`HIGHEST` also bound a metric in
:data:`TIE_RANGES`, where its mean in trec_eval's docid order is under :data:`DOCID`."""
