"""Random-ranking baselines: is a score better than chance?

Under a uniformly random ranking of a query's N items, m of them relevant (all C(N, m) sets of
relevant positions equally likely, the relevant items' grades in random order), every metric has a
distribution. For each query and metric this module gives its expected value and its q-quantile,
the *threshold*; a run's value above the 0.95 threshold is one a random ranking reaches with
probability at most 5%. N is ``num_items`` when given (a catalogue), else the number of documents
judged for the query (as if the judged documents were all there is to rank).

Notation: X_1 < … < X_m are the relevant positions, H_k = #{i : X_i <= k} the relevant items among
the first k, k' = min(k, N) (k' = N for k = 0, no cut-off), G = Σ_i g_i the sum of the grades.

**Exact**, where a closed form exists:

* Hits: H_k ~ Hypergeometric(N, m, k'), mean m k' / N. ``p@k`` = H_k / k, ``r@k`` = H_k / m, ``rp`` =
  H_m / m and ``f@k,β`` = (1 + β²) H_k / (β² m + k) are scaled hits: their means, and their quantiles
  from ``scipy.stats.hypergeom.ppf``, each divided once (P@10's threshold of 3 hits is 0.3).
* First relevant rank: P(X_1 = x) = C(N − x, m − 1) / C(N, m) for x = 1 … N − m + 1. ``rr@k`` =
  1 / X_1 (0 beyond k) and ``success@k`` = [X_1 <= k]: mean and quantile summed over it.
* ``ap@k``: with rel_j = 1 when a relevant item is at rank j, AP@k = (1/m) Σ_{j<=k'} rel_j H_j / j, and
  E[rel_j H_j] = P(rel_j) + Σ_{i<j} P(rel_i rel_j) = m/N + (j − 1) m (m − 1) / (N (N − 1)), so

      E[AP@k] = H(k')/N + (m − 1) (k' − H(k')) / (N (N − 1)),   H(k') = Σ_{j<=k'} 1/j,

  equal to Bestgen's double sum (2015), (1/m) Σ_{x=1..m} Σ_{k=x..N−m+x} Hyp(x; N, m, k) (x/k)²,
  as the tests check; for m = 1 it is H(N)/N.
* Gain-and-discount metrics, by linearity (each relevant item sits at each rank with probability
  1/N): with D(k') = Σ_{j<=k'} 1/log2(j + 1), E[dcg@k] = G D(k')/N, E[ndcg@k] = E[dcg@k] / ideal
  DCG@k, E[ndcg_exp@k] the same with gains 2^g − 1, E[cg@k] = G k'/N, E[rbp@γ,k] = (m/N)(1 − γ^k'),
  and E[auc] = 1/2 (each relevant/irrelevant pair is ordered either way with probability 1/2; 1 when
  every item is relevant).

**Monte Carlo** (``draws`` D, seeded) gives what has no closed form here: the quantiles of the
metrics of the last two items (AP, nDCG, …) and both the mean and the quantile of ``pfound``. Each
draw is a random ranking per query (:func:`~prefeval.analyses.montecarlo.uniform_subsets` for the positions,
a random order of the grades), scored by the metrics' own code. The q-quantile of the D values is the
smallest value v with at least q·D of them <= v (numpy's ``inverted_cdf``), the definition scipy's
``ppf`` uses for the exact ones.

A run's observed value is the one ``prefeval eval`` gives, except that with ``num_items`` AUC counts
the whole catalogue (its unretrieved relevant documents at the bottom, as MEASURES.md defines it). It
is *above the null* when it exceeds the threshold by more than 1e-9 (the tie tolerance of
:mod:`prefeval.analyses.orderings`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import stats
from scipy.special import gammaln

from prefeval.analyses.montecarlo import uniform_subsets
from prefeval.analyses.orderings import TIE_TOLERANCE
from prefeval.analyses.sampled_metrics import check_catalogue
from prefeval.errors import InputError, UsageError
from prefeval.io.ids import id_texts
from prefeval.io.jsonl import read_records
from prefeval.io.keys import QID, RUN, SUMMARY_QID
from prefeval.io.records import (
    ABOVE_NULL,
    ABOVE_NULL_SUMMARY,
    EXPECTED,
    EXPECTED_METHOD,
    FRACTION_ABOVE_NULL,
    MEASURE,
    NULL_DISTRIBUTION,
    NUM_ITEMS,
    NUM_REL,
    OBSERVED,
    QUANTILE,
    THRESHOLD,
    THRESHOLD_METHOD,
    VALUE,
    null_record_kind,
)
from prefeval.io.source import display_name
from prefeval.io.trec import Qrels
from prefeval.measures import AdditiveMetric, Measure, select_additive_metrics
from prefeval.measures.gain_discount import (
    DCG,
    NDCG,
    CumulativeGain,
    ExponentialNDCG,
    RankBiasedPrecision,
    exponential_gains,
)
from prefeval.measures.precision_recall import (
    AUC,
    AveragePrecision,
    FMeasure,
    Precision,
    Recall,
    ReciprocalRank,
    RPrecision,
    Success,
)
from prefeval.measures.shares import ideal_dcg
from prefeval.ranking.loading import load_collection, load_judgments, note_views
from prefeval.ranking.positions import Positions, Selection, binary_positions
from prefeval.ranking.ranktable import RankTable
from prefeval.runtime.memory import MAX_DRAWS, MAX_HELD_BYTES, STEP_ELEMENTS, check_count
from prefeval.runtime.seeds import resolve_seed

DEFAULT_NULL_METRICS = ("ap", "ndcg", "rr", "rp", "p@10", "r@10")
DEFAULT_QUANTILE = 0.95
DEFAULT_DRAWS = 10_000
BLOCK_ELEMENTS = STEP_ELEMENTS
"""At most this many (draw × relevant item) ranks are simulated at once (bounds memory)."""
MAX_ITEMS = 10**7
"""The largest ``num_items``: the exact distributions tabulate every rank of a query (arrays of N
numbers, several at once: about 0.8 GB of memory at this size)."""
MAX_DRAWN_RANKS = MAX_HELD_BYTES // 8
"""The most ranks one query's random rankings may hold at once (``draws`` × m, float64:
:mod:`prefeval.runtime.memory`)."""
EXACT, MONTE_CARLO = "exact", "monte_carlo"


class NullValues(NamedTuple):
    """One metric's null distribution on every query: ``expected`` and ``threshold`` (Q,), and how
    each was obtained (:data:`EXACT` or :data:`MONTE_CARLO`)."""

    measure: str
    expected: np.ndarray
    threshold: np.ndarray
    expected_method: str
    threshold_method: str


@dataclass
class NullEvaluation:
    """The null distributions of ``measures`` (additive metrics or their names; the default list when
    empty) for the queries of ``qrels``, and optionally runs (a :class:`RankTable`) to test.

    ``num_items`` sets the catalogue size N of every query (default: the query's judged documents);
    ``quantile`` is q; ``draws`` and ``seed`` drive the Monte Carlo part (a seed is drawn, and noted,
    when it is needed and not given).
    """

    qrels: Qrels
    measures: Sequence[str | AdditiveMetric]
    num_items: int | None = None
    quantile: float = DEFAULT_QUANTILE
    draws: int = DEFAULT_DRAWS
    seed: int | None = None
    table: RankTable | None = None

    def __post_init__(self):
        self.measures = select_additive_metrics(self.measures, DEFAULT_NULL_METRICS, "null")
        if not 0.0 < self.quantile < 1.0:
            raise UsageError(f"the quantile must be in (0, 1), not {self.quantile}")
        if self.draws < 1:
            raise UsageError("draws must be at least 1")
        check_count("--draws", self.draws, MAX_DRAWS, "a 0.95 quantile from them is within 0.0007 in probability; "
                    "more only take longer, each draw ranking every query at random again")
        if self.num_items is None and self.qrels.num_judged is None:
            raise UsageError("the number of items per query is unknown: give num_items")
        if self.num_items is not None and self.num_items > MAX_ITEMS:
            raise UsageError(f"--num-items {self.num_items} is too large: null tabulates every rank of a query's "
                             f"ranking, and takes at most {MAX_ITEMS:,} items")
        largest = int(self.qrels.num_relevant.max())
        if any(_needs_draws(m) for m in self.measures) and self.draws * largest > MAX_DRAWN_RANKS:
            q = int(np.argmax(self.qrels.num_relevant))
            raise UsageError(f"--draws {self.draws} is too large: the random rankings of query {self.qrels.qids[q]} "
                             f"({largest} relevant items) would hold {self.draws * largest:,} ranks at once "
                             f"(at most {MAX_DRAWN_RANKS:,}); draw fewer")
        if self.table is not None and self.num_items is not None:
            check_catalogue(self.table, self.num_items)
        short = np.flatnonzero(self.items < self.qrels.num_relevant)
        if len(short):
            q = short[0]
            raise UsageError(f"--num-items {self.num_items} is smaller than the {self.qrels.num_relevant[q]} "
                             f"relevant documents of query {self.qrels.qids[q]}")
        if self.seed is None and any(_needs_draws(m) for m in self.measures):
            self.seed = resolve_seed(self.seed)

    @classmethod
    def from_files(cls, qrels: str, runs: Sequence[str] = (), measures: Sequence[str | Measure] = (),
                   **options) -> NullEvaluation:
        """Read ``qrels`` and the ``runs`` to test, if any (paths, ``-`` for stdin, DataFrames or
        dicts: see :func:`prefeval.ranking.loading.load_collection`)."""
        chosen = select_additive_metrics(measures, DEFAULT_NULL_METRICS, "null")  # bad names fail before reading
        table = load_collection(qrels, runs) if len(runs) else None
        judgments = table.qrels if table is not None else load_judgments(qrels)
        note_views(judgments.source, judgments.subtopics, chosen)
        return cls(qrels=judgments, measures=chosen, table=table, **options)

    @property
    def items(self) -> np.ndarray:
        """N per query."""
        if self.num_items is not None:
            return np.full(self.qrels.num_queries, self.num_items, dtype=np.int64)
        return self.qrels.num_judged

    def null_values(self) -> list[NullValues]:
        """Each metric's expected value and threshold on every query."""
        setting = NullSetting.of(self.qrels, self.items)
        simulated = self._simulate([m for m in self.measures if _needs_draws(m)], setting)
        values = []
        for measure in self.measures:
            expected = exact_expectation(measure, setting)
            threshold = exact_quantile(measure, setting, self.quantile)
            drawn = simulated.get(measure.name)
            values.append(NullValues(
                measure=measure.name,
                expected=expected if expected is not None else drawn[0],
                threshold=threshold if threshold is not None else drawn[1],
                expected_method=EXACT if expected is not None else MONTE_CARLO,
                threshold_method=EXACT if threshold is not None else MONTE_CARLO,
            ))
        return values

    def observed(self) -> dict[str, np.ndarray]:
        """The runs' values (R, Q) per metric, as ``prefeval eval`` computes them; with ``num_items``,
        AUC counts the whole catalogue (MEASURES.md), unretrieved relevant documents at its bottom."""
        positions = binary_positions(self.table, Selection.everything(self.table))
        if self.num_items is not None:
            positions = positions._replace(num_items=np.full_like(positions.num_items, self.num_items))
        return {measure.name: measure.compute(positions) for measure in self.measures}

    def _simulate(self, measures: list[AdditiveMetric],
                  setting: NullSetting) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(mean, q-quantile) per query of each metric over ``draws`` random rankings."""
        if not measures:
            return {}
        rng = np.random.default_rng(self.seed)
        base, items, draws = setting.positions, setting.items, self.draws
        parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {m.name: [] for m in measures}
        for first, stop in base.query_blocks(max(BLOCK_ELEMENTS // draws, 1)):
            block = base.query_block(first, stop)
            drawn = random_rankings(rng, block, items[first:stop], draws)
            for measure in measures:
                values = measure.compute(drawn)
                parts[measure.name].append((values.mean(axis=0),
                                            np.quantile(values, self.quantile, axis=0, method="inverted_cdf")))
        return {name: tuple(np.concatenate(column) for column in zip(*blocks)) for name, blocks in parts.items()}


def random_rankings(rng: np.random.Generator, block: Positions, items: np.ndarray, draws: int) -> Positions:
    """``draws`` uniformly random rankings of each query of ``block`` (positions of one run, the
    qrels'), as positions with one "run" per draw: sorted random relevant positions among the query's
    N items, the grades in random order (when they differ), every item ranked."""
    length = block.length
    ranks = (uniform_subsets(rng, np.tile(items, draws), np.tile(length, draws)) + 1.0).reshape(draws, -1)
    grades = block.grades[0]
    segment = np.repeat(np.arange(len(length)), length)
    if (block.segment_max(grades) != block.segment_min(grades)).any():
        shuffled = np.argsort(segment + rng.random((draws, len(segment))), axis=1)
        grades = grades[shuffled]
    else:
        grades = np.broadcast_to(grades, ranks.shape)
    everything = np.broadcast_to(items, (draws, len(items))).astype(np.int64)
    return block._replace(ranks=ranks, grades=grades, num_retrieved=everything, num_items=everything)


class NullSetting(NamedTuple):
    """What the closed forms need: m and N per query, and the qrels as positions of one run that
    retrieves nothing (for the grades, their ideal order and the segments)."""

    relevant: np.ndarray
    items: np.ndarray
    positions: Positions

    @classmethod
    def of(cls, qrels: Qrels, items: np.ndarray) -> NullSetting:
        table = RankTable(qrels=qrels, run_ids=["qrels"], ranks=np.full((1, len(qrels.docids)), np.inf),
                          num_retrieved=np.zeros((1, qrels.num_queries), dtype=np.int64),
                          in_run=np.zeros((1, qrels.num_queries), dtype=bool))
        return cls(qrels.num_relevant.astype(np.int64), np.asarray(items, dtype=np.int64),
                   binary_positions(table, Selection.everything(table)))

    def depth(self, k: int) -> np.ndarray:
        """k' = min(k, N), and N for k = 0."""
        return np.minimum(k, self.items) if k > 0 else self.items


def _needs_draws(measure: AdditiveMetric) -> bool:
    return not isinstance(measure, HIT_MEASURES + FIRST_RANK_MEASURES)


# --- hits: p@k, r@k, rp, f@k,β ----------------------------------------------------------------

HIT_MEASURES = (Precision, Recall, RPrecision, FMeasure)


def _hits(measure: AdditiveMetric, setting: NullSetting) -> tuple[np.ndarray, float, np.ndarray]:
    """(k', c, d): the metric is c × H_k' / d with H_k' ~ Hypergeometric(N, m, k'), divided once,
    as the metric itself divides its count (a P@10 threshold of 3 hits is 0.3)."""
    m, n = setting.relevant, setting.items
    if isinstance(measure, RPrecision):
        return m, 1.0, m
    k = measure.param("k")
    depth = setting.depth(k)
    if isinstance(measure, Precision):
        return depth, 1.0, (k if k > 0 else n)
    if isinstance(measure, Recall):
        return depth, 1.0, m
    on_hits, on_relevant, on_depth = measure.weights()
    return depth, on_hits, on_relevant * m + on_depth * (k if k > 0 else n)


# --- the first relevant rank: rr@k, success@k ------------------------------------------------------

FIRST_RANK_MEASURES = (ReciprocalRank, Success)


def first_rank_distribution(relevant: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x (1 … max N − m + 1) and P(X_1 = x) = C(N − x, m − 1) / C(N, m) per query: (Q, X), 0 beyond
    each query's support."""
    m, n = relevant[:, None], items[:, None]
    x = np.arange(1, int((items - relevant).max(initial=0)) + 2)[None, :]
    inside = x <= n - m + 1
    rest = np.where(inside, n - x, m - 1)
    log_p = (gammaln(rest + 1.0) - gammaln(m + 0.0) - gammaln(rest - m + 2.0)
             - gammaln(n + 1.0) + gammaln(m + 1.0) + gammaln(n - m + 1.0))
    return np.broadcast_to(x, inside.shape), np.where(inside, np.exp(log_p), 0.0)


def _first_rank_statistics(measure: AdditiveMetric, setting: NullSetting,
                           q: float | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(mean, q-quantile or None without q) per query of a function of X_1, over blocks of queries
    (to bound memory)."""
    support = setting.items - setting.relevant + 1
    per_block = max(BLOCK_ELEMENTS // int(support.max(initial=1)), 1)
    means, quantiles = [], []
    for first in range(0, len(support), per_block):
        x, p = first_rank_distribution(setting.relevant[first:first + per_block],
                                       setting.items[first:first + per_block])
        values = _first_rank_values(measure, x)
        means.append((p * values).sum(axis=1))
        if q is not None:
            quantiles.append(discrete_quantile(values, p, q))
    return np.concatenate(means), np.concatenate(quantiles) if q is not None else None


def _first_rank_values(measure: AdditiveMetric, x: np.ndarray) -> np.ndarray:
    k = measure.param("k")
    within = x <= k if k > 0 else np.ones(x.shape, dtype=bool)
    if isinstance(measure, ReciprocalRank):
        return np.where(within, 1.0 / x, 0.0)
    return within.astype(np.float64)


def discrete_quantile(values: np.ndarray, probabilities: np.ndarray, q: float) -> np.ndarray:
    """Per row, the smallest value v with P(value <= v) >= q (rounding slack 1e-12)."""
    order = np.argsort(values, axis=1, kind="stable")
    cdf = np.cumsum(np.take_along_axis(probabilities, order, axis=1), axis=1)
    at = np.argmax(cdf >= q - 1e-12, axis=1)
    return np.take_along_axis(values, order, axis=1)[np.arange(len(values)), at]


# --- expectations and quantiles -------------------------------------------------------------------

def exact_expectation(measure: AdditiveMetric, setting: NullSetting) -> np.ndarray | None:
    """The exact E[metric] under a random ranking, per query, or None when there is no closed form."""
    m, n = setting.relevant.astype(np.float64), setting.items.astype(np.float64)
    if isinstance(measure, HIT_MEASURES):
        depth, on_hits, denominator = _hits(measure, setting)
        return on_hits * m * depth / (denominator * n)
    if isinstance(measure, FIRST_RANK_MEASURES):
        return _first_rank_statistics(measure, setting, None)[0]
    if isinstance(measure, AveragePrecision):
        depth = setting.depth(measure.param("k"))
        harmonic = _cumulative(1.0 / np.arange(1.0, setting.items.max() + 1.0))[depth]
        pairs = np.divide((m - 1.0) * (depth - harmonic), n * (n - 1.0), out=np.zeros(len(m)), where=n > 1)
        return harmonic / n + pairs
    if isinstance(measure, AUC):
        return np.where(n > m, 0.5, 1.0)
    if isinstance(measure, RankBiasedPrecision):
        gamma = measure.param("gamma")
        return (m / n) * (1.0 - gamma ** setting.depth(measure.param("k")))
    if isinstance(measure, (DCG, NDCG, ExponentialNDCG, CumulativeGain)):
        return _expected_gain(measure, setting)
    return None


def _expected_gain(measure: AdditiveMetric, setting: NullSetting) -> np.ndarray:
    positions, k = setting.positions, measure.param("k")
    depth = setting.depth(k)
    gains = exponential_gains(positions, positions.ideal) if isinstance(measure, ExponentialNDCG) else positions.ideal
    if isinstance(measure, CumulativeGain):
        discount = depth.astype(np.float64)
    else:
        discount = _cumulative(1.0 / np.log2(np.arange(2.0, setting.items.max() + 2.0)))[depth]
    expected = positions.segment_sum(gains) * discount / setting.items
    if isinstance(measure, (NDCG, ExponentialNDCG)):
        expected = expected / ideal_dcg(positions, gains, k)
    return expected


def exact_quantile(measure: AdditiveMetric, setting: NullSetting, q: float) -> np.ndarray | None:
    """The exact q-quantile of the metric under a random ranking, per query, or None."""
    if isinstance(measure, HIT_MEASURES):
        depth, on_hits, denominator = _hits(measure, setting)
        return on_hits * stats.hypergeom.ppf(q, setting.items, setting.relevant, depth) / denominator
    if isinstance(measure, FIRST_RANK_MEASURES):
        return _first_rank_statistics(measure, setting, q)[1]
    return None


def _cumulative(terms: np.ndarray) -> np.ndarray:
    """c[t] = Σ_{j<t} terms[j] (c[0] = 0)."""
    return np.concatenate(([0.0], np.cumsum(terms)))


# --- records ----------------------------------------------------------------------------------------

def null_records(evaluation: NullEvaluation) -> Iterator[dict]:
    """The JSON-line records of ``prefeval null``: per query, a line per metric with its null
    distribution, then (with runs) a line per run and metric with the observed value; finally a line
    per run and metric with the mean value and the fraction of queries above the null."""
    qids, relevant, items = evaluation.qrels.qids, evaluation.qrels.num_relevant.tolist(), evaluation.items.tolist()
    nulls = evaluation.null_values()
    columns = [(v, v.expected.tolist(), v.threshold.tolist()) for v in nulls]
    runs = id_texts(evaluation.table.run_ids) if evaluation.table is not None else []
    observed = evaluation.observed() if runs else {}
    above = {v.measure: observed[v.measure] > v.threshold + TIE_TOLERANCE for v in nulls} if runs else {}
    observed_lists = {name: values.tolist() for name, values in observed.items()}
    above_lists = {name: values.tolist() for name, values in above.items()}
    for q, qid in enumerate(id_texts(qids)):
        for values, expected, threshold in columns:
            yield {QID: qid, MEASURE: values.measure, NUM_REL: relevant[q], NUM_ITEMS: items[q],
                   EXPECTED: expected[q], QUANTILE: evaluation.quantile, THRESHOLD: threshold[q],
                   EXPECTED_METHOD: values.expected_method, THRESHOLD_METHOD: values.threshold_method}
        for r, run in enumerate(runs):
            for values in nulls:
                yield {QID: qid, RUN: run, MEASURE: values.measure,
                       VALUE: observed_lists[values.measure][r][q], ABOVE_NULL: above_lists[values.measure][r][q]}
    for r, run in enumerate(runs):
        for values in nulls:
            yield {QID: SUMMARY_QID, RUN: run, MEASURE: values.measure,
                   VALUE: float(observed[values.measure][r].mean()),
                   FRACTION_ABOVE_NULL: float(above[values.measure][r].mean())}



class NullLines(NamedTuple):
    """The lines of ``prefeval null`` output, by kind, in the order of the file: each query's null
    distribution of each metric (``queries``), the runs' values on each query (``observed``) and each
    run's summary (``summaries``)."""

    queries: list[dict]
    observed: list[dict]
    summaries: list[dict]

    @property
    def measures(self) -> list[str]:
        """The metrics of the null distributions, in order of first appearance."""
        return list(dict.fromkeys(record[MEASURE] for record in self.queries))


def read_null_lines(source: str) -> NullLines:
    """The lines of :func:`null_records` at ``source`` (a path, ``-`` for stdin); a line of another kind
    is an :class:`InputError`. What ``prefeval plot null`` draws."""
    lines: dict[str, list[dict]] = {NULL_DISTRIBUTION: [], OBSERVED: [], ABOVE_NULL_SUMMARY: []}
    for number, record in read_records(source):
        kind = null_record_kind(record)
        if kind is None:
            raise InputError(display_name(source), "not a line of prefeval null", number)
        lines[kind].append(record)
    if not lines[NULL_DISTRIBUTION]:
        raise InputError(display_name(source), "no per-query lines of prefeval null")
    return NullLines(lines[NULL_DISTRIBUTION], lines[OBSERVED], lines[ABOVE_NULL_SUMMARY])
