"""Is run A really better than run B? Paired tests, corrections, intervals, effect sizes.

Everything here works on the per-query values of pairs of runs for one measure: ``values[p, q]`` is
the value of pair p on query q, a preference (> 0: the pair's first run is preferred) or a metric
delta metric(first) − metric(second). Every test is two-sided, of H0: the mean over queries is 0.

Tests (``test``):

* ``t``: the paired t-test, t = mean / (sd / √Q) with the sample sd (Q − 1 degrees of freedom);
  ``scipy.stats.ttest_1samp(values, 0)``, which equals ``ttest_rel(x, y)`` when values = x − y.
* ``wilcoxon``: the Wilcoxon signed-rank test, ``scipy.stats.wilcoxon`` with its defaults (zeros
  dropped; exact distribution for small samples without ties, the normal approximation otherwise).
* ``sign``: the exact binomial test of wins against losses (ties dropped) with probability 1/2:
  p = min(1, 2 · P[Bin(w + l, 1/2) <= min(w, l)]), which equals ``scipy.stats.binomtest``.
* ``randomization``: the paired sign-flip permutation test. The statistic is |Σ_q s_q v_q| over sign
  vectors s. When 2^Q <= ``permutations`` every sign vector is enumerated and p is exact:
  p = #{s : |Σ s_q v_q| >= |Σ v_q|} / 2^Q. Otherwise B = ``permutations`` vectors are drawn
  uniformly and p = (1 + #{b : |Σ s_bq v_q| >= |Σ v_q|}) / (B + 1), which never reports 0
  (Phipson and Smyth, 2010).
* ``bootstrap``: the shift-method bootstrap test. With m̄ the mean and m*_b the means of B =
  ``bootstrap`` resamples of the queries (with replacement), p = (1 + #{b : |m*_b − m̄| >= |m̄|}) /
  (B + 1): how often the resampled mean, shifted to satisfy H0, lies as far from 0 as the observed one.

Edge cases: values are equal when they differ by at most :data:`VALUE_TOLERANCE` (1e-12), so that the
last bits of floating-point sums never decide a test (a p@10 difference computed as 0.7 − 0.6 is the
0.1 of 0.2 − 0.1). Before any test, the values of each pair are made canonical
(:func:`canonical_values`): a value within the tolerance of 0 is 0, a tie, and magnitudes within the
tolerance of each other become one, so Wilcoxon ranks them as tied. The tests, the effect size and
the counts of wins, losses and ties see those values (the mean keeps the values as they are). A pair
whose values are all ties has p = 1 under every test (nothing tells the runs apart). "At least as
extreme" comparisons allow the same tolerance, so a resample that reproduces the observed statistic
always counts.

Corrections (``correction``), across the pairs given, with p_(1) <= ... <= p_(n) sorted and every
adjusted value capped at 1:

* ``bonferroni``: n · p.
* ``holm`` (step-down): adjusted p_(i) = max over k <= i of (n − k + 1) · p_(k).
* ``bh`` (Benjamini-Hochberg, step-up, controls the false discovery rate): adjusted p_(i) = min over
  k >= i of n · p_(k) / k; ``scipy.stats.false_discovery_control``.
* ``none``: p.

The confidence interval of the mean is the bootstrap percentile interval at level 1 − alpha: the
alpha/2 and 1 − alpha/2 quantiles (numpy's linear interpolation) of the B resampled means. The effect
size is mean / sd with the sample sd (Q − 1); it is 0 when every value is 0 and undefined (NaN in
:class:`PairStatistics`) when the values are all equal but not 0 (mean / 0). A record leaves out what
is undefined or not computed (that effect size; the interval without resamples), rather than writing
``null`` where a number belongs. A pair is significant when its corrected p-value is below alpha; the
discriminative power of a measure is the fraction of its pairs that are.

Randomness (sign flips, resamples) comes from one ``numpy.random.Generator`` seeded with ``seed``,
created afresh for every call of :func:`compare_pairs`, so the results for a measure do not depend on
which other measures are analysed. The test draws first, then the interval's resamples; with
``test="bootstrap"`` the test and the interval share the same resamples.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import NamedTuple

import numpy as np

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.groups import read_user_groups
from prefeval.errors import InputError, UsageError, shown
from prefeval.io.evallines import EvalLines, SampleScores, read_eval_lines
from prefeval.io.keys import PREFERENCE, QID, RUNI, RUNJ, SAMPLE, SUMMARY_QID, TYPE
from prefeval.io.records import (
    ALPHA,
    CORRECTION,
    DISCRIMINATIVE_POWER,
    GROUP,
    MEAN,
    MEASURE,
    PAIR_STATISTICS,
    PAIRS,
    SIGNIFICANT,
    TEST,
    USERS,
    is_pair_test,
)
from prefeval.measures import select_available
from prefeval.runtime.memory import MAX_HELD_BYTES, MAX_RESAMPLES, STEP_ELEMENTS, check_count
from prefeval.runtime.seeds import resolve_seed

TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
RANDOM_TESTS = ("randomization", "bootstrap")
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
              "randomization": "randomization test", "bootstrap": "bootstrap test"}
CORRECTION_NAMES = {"holm": "Holm correction", "bonferroni": "Bonferroni correction",
                    "bh": "Benjamini-Hochberg correction", "none": "no correction"}
"""How the tests and corrections are named in tables and figures."""
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
DEFAULT_TEST = "t"
DEFAULT_CORRECTION = "holm"
DEFAULT_ALPHA = 0.05
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_BOOTSTRAP = 10_000
CHUNK_ELEMENTS = STEP_ELEMENTS
"""At most this many (resample × query) weights are held at once."""
MAX_RESAMPLED_MEANS = MAX_HELD_BYTES // 8
"""At most this many (pair × resample) bootstrap means are kept (float64: :mod:`prefeval.runtime.memory`)."""
VALUE_TOLERANCE = 1e-12
"""Per-query values (and statistics made of them) that differ by at most this are equal. Smaller than
the orderings' tolerance of aggregate scores (:data:`~prefeval.analyses.orderings.TIE_TOLERANCE`):
genuine differences of per-query values can be tiny (an RBP difference of 2^-35 from a document at
rank 36), while rounding leaves residues of a few 1e-16."""


@dataclass(frozen=True)
class SignificanceOptions:
    """The settings of the tests, as ``prefeval significance`` (and ``plot``) take them: the ``test``,
    the ``correction`` across pairs, ``alpha``, the ``permutations`` of the randomization test, the
    ``bootstrap`` resamples of the intervals and of the bootstrap test (``None``: no intervals), and
    the ``seed`` of the random draws."""

    test: str = DEFAULT_TEST
    correction: str = DEFAULT_CORRECTION
    alpha: float = DEFAULT_ALPHA
    permutations: int = DEFAULT_PERMUTATIONS
    bootstrap: int | None = DEFAULT_BOOTSTRAP
    seed: int | None = None

    def __post_init__(self):
        if self.test not in TESTS:
            raise UsageError(f"unknown test {self.test!r}; choose one of {', '.join(TESTS)}")
        if self.correction not in CORRECTIONS:
            raise UsageError(f"unknown correction {self.correction!r}; choose one of {', '.join(CORRECTIONS)}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real) or not 0.0 < self.alpha < 1.0:
            raise UsageError(f"alpha must be in (0, 1), not {shown(self.alpha)}")
        for name in ("permutations", "bootstrap"):
            count = getattr(self, name)
            if count is None and name == "bootstrap":
                continue
            if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
                raise UsageError(f"{name} must be an integer of at least 1, not {shown(count)}")
        if self.test == "bootstrap" and not self.bootstrap:
            raise UsageError("the bootstrap test needs at least one resample")
        check_count("--permutations", self.permutations, MAX_RESAMPLES,
                    "a p-value then resolves 1e-6; more sign flips only take longer")
        check_count("--bootstrap", self.bootstrap or 0, MAX_RESAMPLES,
                    "an interval's ends and a p-value then move by less than their resampling error; more "
                    "resamples only take longer")

    @classmethod
    def of(cls, options: SignificanceOptions | None = None, **settings) -> SignificanceOptions:
        """``options``, or options made of ``settings`` (the fields by name); not both."""
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise UsageError(f"unknown significance option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        if options is not None and settings:
            raise UsageError("give the significance options either as an object or by name, not both")
        return options if options is not None else cls(**settings)

    @property
    def draws_at_random(self) -> bool:
        """Whether the tests or the intervals draw random numbers (and so need a seed)."""
        return self.test in RANDOM_TESTS or self.bootstrap is not None

    def seeded(self) -> SignificanceOptions:
        """These options with their seed resolved (:func:`~prefeval.runtime.seeds.resolve_seed`) when
        anything is drawn at random, so that every measure tested with them draws alike."""
        return replace(self, seed=resolve_seed(self.seed)) if self.draws_at_random else self


class PairStatistics(NamedTuple):
    """Per pair (arrays of length P): what :func:`compare_pairs` found."""

    mean: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    p: np.ndarray
    p_corrected: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    effect_size: np.ndarray
    alpha: float

    @property
    def significant(self) -> np.ndarray:
        """Corrected p-value below alpha."""
        return self.p_corrected < self.alpha

    @property
    def discriminative_power(self) -> float:
        """The fraction of pairs that are significant (0 for no pairs)."""
        return float(self.significant.mean()) if len(self.p) else 0.0


def compare_pairs(values: np.ndarray, options: SignificanceOptions | None = None, **settings) -> PairStatistics:
    """Test every pair (row) of ``values`` (P, Q), correct across the pairs, and bound the means,
    with ``options`` (a :class:`SignificanceOptions`, or its fields by name: ``test="sign"``).

    ``bootstrap`` is the number of resamples behind the confidence intervals and the bootstrap
    test; ``None`` skips the intervals (NaN), as when only the p-values are wanted.
    """
    options = SignificanceOptions.of(options, **settings).seeded()
    test, correction, alpha = options.test, options.correction, options.alpha
    permutations, bootstrap = options.permutations, options.bootstrap
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("values must be a (pairs, queries) array")
    if values.shape[1] < 2:
        raise UsageError(f"significance tests need at least 2 queries, not {values.shape[1]}")
    if np.isnan(values).any():
        raise ValueError("values must not hold NaN")
    if bootstrap and len(values) * bootstrap > MAX_RESAMPLED_MEANS:
        raise UsageError(f"--bootstrap {bootstrap} is too large for {len(values)} pairs: their resampled means "
                         f"would hold {len(values) * bootstrap:,} numbers (at most {MAX_RESAMPLED_MEANS:,})")
    rng = np.random.default_rng(options.seed)
    cleaned = canonical_values(values)
    boot_means = None
    if test == "randomization":
        p = randomization_test(cleaned, permutations, rng)
    elif test == "bootstrap":
        boot_means = bootstrap_means(cleaned, bootstrap, rng)
        p = bootstrap_test(cleaned, boot_means)
    else:
        p = {"t": t_test, "wilcoxon": wilcoxon_test, "sign": sign_test}[test](cleaned)
    if bootstrap and boot_means is None:
        boot_means = bootstrap_means(cleaned, bootstrap, rng)
    if boot_means is not None:
        ci_low, ci_high = percentile_interval(boot_means, alpha)
    else:
        ci_low = ci_high = np.full(len(values), np.nan)
    return PairStatistics(
        mean=values.mean(axis=1),
        wins=(cleaned > 0).sum(axis=1),
        losses=(cleaned < 0).sum(axis=1),
        ties=(cleaned == 0).sum(axis=1),
        p=p,
        p_corrected=correct(p, correction),
        ci_low=ci_low,
        ci_high=ci_high,
        effect_size=effect_size(cleaned),
        alpha=alpha,
    )


def canonical_values(values: np.ndarray, tolerance: float = VALUE_TOLERANCE) -> np.ndarray:
    """``values`` (P, Q) with last-bit noise removed, row by row: sorted by magnitude, a magnitude
    within ``tolerance`` of the one before it joins its group, and every group takes its smallest
    magnitude (0 for the group that starts within ``tolerance`` of 0), each value keeping its sign."""
    magnitude = np.abs(values)
    order = np.argsort(magnitude, axis=1, kind="stable")
    ascending = np.take_along_axis(magnitude, order, axis=1)
    starts = np.ones(ascending.shape, dtype=bool)
    starts[:, 1:] = np.diff(ascending, axis=1) > tolerance
    first = np.maximum.accumulate(np.where(starts, np.arange(ascending.shape[1]), 0), axis=1)
    grouped = np.take_along_axis(ascending, first, axis=1)
    grouped[grouped <= tolerance] = 0.0
    canonical = np.empty_like(ascending)
    np.put_along_axis(canonical, order, grouped, axis=1)
    return np.where(values < 0, -canonical, canonical) + 0.0  # + 0.0 turns -0.0 into 0.0


def _ties_mean_nothing(p: np.ndarray, values: np.ndarray) -> np.ndarray:
    """p = 1 for pairs whose values are all 0 (the tests are undefined there, or say so anyway)."""
    return np.where((values == 0).all(axis=1), 1.0, p)


def t_test(values: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p-values, one per row (see the module docstring)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = _scipy_stats().ttest_1samp(values, 0.0, axis=1).pvalue
    return _ties_mean_nothing(np.asarray(p, dtype=np.float64), values)


def wilcoxon_test(values: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-values, one per row.

    scipy chooses between the exact and the approximate distribution per call, from the ties and
    zeros of the data, so each pair is tested on its own (a loop over pairs, not over queries).
    """
    p = np.ones(len(values))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for row in np.flatnonzero((values != 0).any(axis=1)):
            p[row] = _scipy_stats().wilcoxon(values[row]).pvalue
    return p


def sign_test(values: np.ndarray) -> np.ndarray:
    """Two-sided exact sign-test p-values: wins against losses, ties dropped."""
    wins = (values > 0).sum(axis=1)
    losses = (values < 0).sum(axis=1)
    p = np.minimum(1.0, 2.0 * _scipy_stats().binom.cdf(np.minimum(wins, losses), wins + losses, 0.5))
    return _ties_mean_nothing(p, values)


def randomization_test(values: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Two-sided sign-flip permutation p-values: exact when 2^Q <= ``permutations``, else Monte Carlo."""
    if permutations < 1:
        raise UsageError("the randomization test needs at least one permutation")
    num_queries = values.shape[1]
    observed = np.abs(values.sum(axis=1)) - VALUE_TOLERANCE
    exact = num_queries < 63 and 2**num_queries <= permutations
    total = 2**num_queries if exact else permutations
    at_least_as_extreme = np.zeros(len(values), dtype=np.int64)
    step = max(1, CHUNK_ELEMENTS // num_queries)
    for start in range(0, total, step):
        count = min(step, total - start)
        if exact:
            codes = np.arange(start, start + count, dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(num_queries)) & 1)
        else:
            signs = rng.choice(np.array([-1.0, 1.0]), size=(count, num_queries))
        flipped = np.abs(values @ signs.T)
        at_least_as_extreme += (flipped >= observed[:, None]).sum(axis=1)
    p = at_least_as_extreme / total if exact else (at_least_as_extreme + 1) / (permutations + 1)
    return _ties_mean_nothing(p, values)


def bootstrap_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(P, B) means of B resamples of the queries, drawn with replacement (the same for every pair)."""
    if resamples < 1:
        raise UsageError("the bootstrap needs at least one resample")
    num_queries = values.shape[1]
    means = np.empty((len(values), resamples))
    step = max(1, CHUNK_ELEMENTS // num_queries)
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        drawn = rng.integers(0, num_queries, size=(count, num_queries))
        cells = (np.arange(count)[:, None] * num_queries + drawn).ravel()
        weights = np.bincount(cells, minlength=count * num_queries).reshape(count, num_queries)
        means[:, start:start + count] = values @ weights.T / num_queries
    return means


def bootstrap_test(values: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Two-sided shift-method bootstrap p-values from the resampled ``means`` (P, B)."""
    observed = values.mean(axis=1)
    distance = np.abs(means - observed[:, None])
    at_least_as_extreme = (distance >= np.abs(observed)[:, None] - VALUE_TOLERANCE).sum(axis=1)
    p = (at_least_as_extreme + 1) / (means.shape[1] + 1)
    return _ties_mean_nothing(p, values)


def percentile_interval(means: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The alpha/2 and 1 − alpha/2 quantiles of each row of resampled ``means``."""
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)
    return low, high


def effect_size(values: np.ndarray) -> np.ndarray:
    """mean / sd per row (sample sd); 0 where every value is 0, NaN where the sd is 0 otherwise."""
    mean = values.mean(axis=1)
    sd = values.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0), np.nan)
    return np.where((values == 0).all(axis=1), 0.0, size)


def correct(p: np.ndarray, method: str) -> np.ndarray:
    """p-values adjusted for multiple comparisons across all of ``p`` (see the module docstring)."""
    p = np.asarray(p, dtype=np.float64)
    count = len(p)
    if method == "none" or count == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, count * p)
    if method == "holm":
        order = np.argsort(p, kind="stable")
        stepped = np.maximum.accumulate((count - np.arange(count)) * p[order])
        adjusted = np.empty(count)
        adjusted[order] = np.minimum(1.0, stepped)
        return adjusted
    if method == "bh":
        return np.asarray(_scipy_stats().false_discovery_control(p, method="bh"), dtype=np.float64)
    raise UsageError(f"unknown correction {method!r}; choose one of {', '.join(CORRECTIONS)}")


def pairwise_significance(
    source: str | EvalLines,
    measures: Sequence[str] = (),
    options: SignificanceOptions | None = None,
    *,
    baseline: str | None = None,
    user_groups=None,
    **settings,
) -> Iterator[dict]:
    """The records of ``prefeval significance`` for eval lines (a path, ``-``, or :class:`EvalLines`),
    tested with ``options`` (a :class:`SignificanceOptions`, or its fields by name).

    For every sample and measure (every measure found, or ``measures``), each pair of runs on the pair
    lines is tested (:func:`compare_pairs`), then the discriminative power of the measure follows::

        {"qid":"all","runi":"A","runj":"B","measure":"rpp","test":"t","mean":0.1,"wins":30,"losses":12,
         "ties":8,"p":0.004,"p_corrected":0.012,"ci_low":0.04,"ci_high":0.16,"effect_size":0.42,
         "significant":true,"sample":0}
        {"qid":"all","measure":"rpp","test":"t","correction":"holm","alpha":0.05,
         "discriminative_power":0.67,"pairs":3,"sample":0}

    With ``baseline``, only the pairs with that run are tested, each written as (other run,
    baseline) (:class:`BaselinePairs`), and the correction runs across those pairs.
    ``bootstrap=None`` skips the intervals (no ``ci_low`` nor ``ci_high``), for when only the tests
    are wanted; an undefined effect size is left out too (module docstring). The seed is resolved
    once, so that every measure draws alike.

    With ``user_groups`` (a path or a DataFrame of user, group: :mod:`prefeval.io.side`), each
    measure's records are followed by the same tests on the users of each group alone (groups in name
    order, those with users in the sample), each record carrying ``"group"`` and ``"users"`` before
    ``"sample"``: what the tests give on the eval lines filtered to the group's users by hand.
    """
    options = SignificanceOptions.of(options, **settings)
    lines = source if isinstance(source, EvalLines) else read_eval_lines(source)
    chosen = select_available(measures, lines.measures, lines.source)
    options = options.seeded()
    groups = read_user_groups(user_groups) if user_groups is not None else None
    for sample in lines.samples:
        every = np.arange(len(sample.qids))
        by_group = groups.queries(sample.qids, every, lines.source, sample.sample) if groups is not None else {}
        for measure in chosen:
            names, values = _pair_values(lines, sample, measure, baseline)
            yield from _tested(names, values, measure, options, {SAMPLE: sample.sample})
            for name, members in by_group.items():
                # a row per pair, as the whole sample's (a column selection would lay the rows out
                # apart, and their means would add the values in another order)
                yield from _tested(names, np.ascontiguousarray(values[:, members]), measure, options,
                                   {GROUP: name, USERS: len(members), SAMPLE: sample.sample})


def _tested(names: list[tuple[str, str]], values: np.ndarray, measure: str, options: SignificanceOptions,
            labels: dict) -> Iterator[dict]:
    """The records of the pairs ``names`` tested on their values (P, Q), then the measure's
    discriminative power, each ending with ``labels`` (the sample; a group and its users)."""
    stats = compare_pairs(values, options)
    columns = {key: getattr(stats, key).tolist() for key in PAIR_STATISTICS}
    significant = stats.significant.tolist()
    for k, (first, second) in enumerate(names):
        record = {QID: SUMMARY_QID, RUNI: first, RUNJ: second, MEASURE: measure, TEST: options.test}
        record.update({key: column[k] for key, column in columns.items() if not math.isnan(column[k])})
        record[SIGNIFICANT] = significant[k]
        yield record | labels
    yield {QID: SUMMARY_QID, MEASURE: measure, TEST: options.test, CORRECTION: options.correction,
           ALPHA: options.alpha, DISCRIMINATIVE_POWER: stats.discriminative_power, PAIRS: len(names)} | labels


class PreferenceMatrix(NamedTuple):
    """The mean of one measure over the queries of every two runs, and which pairs differ
    significantly: ``means[i, j]`` of run i over run j (``-means[j, i]``; NaN for a pair without
    pair lines), ``significant[i, j]`` symmetric, runs in their aggregate order (``ordered_by`` MC4
    for a preference, the mean for a metric), tested with ``tests``."""

    measure: str
    runs: list[str]
    ordered_by: str
    means: np.ndarray
    significant: np.ndarray
    tests: SignificanceOptions


def preference_matrix(lines: EvalLines, measure: str, options: SignificanceOptions) -> PreferenceMatrix:
    """The :class:`PreferenceMatrix` of ``measure`` over the first sample of ``lines``, tested with
    ``options``; the matrix shows no intervals, so only the bootstrap test resamples. What ``prefeval
    plot preferences`` draws."""
    summary = next(aggregate(lines, [measure]))[measure]
    ordered_by = "mc4" if summary[TYPE] == PREFERENCE else MEAN
    runs = summary[ordered_by]
    first_sample = lines.samples[0].sample
    tests = options if options.test == "bootstrap" else replace(options, bootstrap=None)
    records = itertools.takewhile(lambda record: record[SAMPLE] == first_sample,
                                  pairwise_significance(lines, [measure], tests))
    position = {run: p for p, run in enumerate(runs)}
    means = np.full((len(runs), len(runs)), np.nan)
    significant = np.zeros((len(runs), len(runs)), dtype=bool)
    for record in records:
        if is_pair_test(record) and record[RUNI] in position and record[RUNJ] in position:
            i, j = position[record[RUNI]], position[record[RUNJ]]
            means[i, j], means[j, i] = record[MEAN], -record[MEAN]
            significant[i, j] = significant[j, i] = record[SIGNIFICANT]
    return PreferenceMatrix(measure, runs, ordered_by, means, significant, tests)


class BaselinePairs(NamedTuple):
    """The pairs of runs that hold a baseline, each oriented as (other run, baseline).

    A pair's values (a preference or a metric delta) are antisymmetric, so a pair listed as
    (baseline, other) has its values negated. ``rows`` are the pairs' indexes among all pairs,
    ``others`` the other run of each, ``signs`` +1 or −1.
    """

    rows: np.ndarray
    others: np.ndarray
    signs: np.ndarray

    @classmethod
    def of(cls, pairs: Sequence[tuple[int, int]], baseline: int) -> BaselinePairs:
        """The pairs (run numbers, in their order) that hold run ``baseline`` and another run."""
        rows = [p for p, (first, second) in enumerate(pairs) if baseline in (first, second) and first != second]
        others = [pairs[p][1] if pairs[p][0] == baseline else pairs[p][0] for p in rows]
        signs = [-1.0 if pairs[p][0] == baseline else 1.0 for p in rows]
        return cls(np.array(rows, dtype=np.int64), np.array(others, dtype=np.int64), np.array(signs))

    def oriented(self, values: np.ndarray) -> np.ndarray:
        """The rows of ``values`` (pairs × anything) of these pairs, as (other run, baseline)."""
        return values[self.rows] * self.signs[:, None] + 0.0  # + 0.0 turns -0.0 into 0.0


def _pair_values(lines: EvalLines, sample: SampleScores, measure: str, baseline: str | None):
    """(first run, second run) names and their (P, Q) values: every pair, or those with ``baseline``."""
    if not len(sample.pair_query):
        raise InputError(lines.source,
                         f"sample {sample.sample} has no pair lines: significance compares two or more runs")
    if not sample.has_values(measure):
        raise InputError(lines.source, f"sample {sample.sample} has no per-query values of {measure}")
    pairs, values = sample.pair_values(measure)
    names = [(sample.runs[i], sample.runs[j]) for i, j in pairs]
    missing = np.argwhere(np.isnan(values))
    if len(missing):
        pair, query = missing[0]
        first, second = names[pair]
        raise InputError(lines.source, f"sample {sample.sample}: the pair {first}, {second} has no value of "
                                       f"{measure} on query {sample.qids[query]}")
    if baseline is not None:
        if baseline not in sample.runs:
            raise UsageError(f"baseline {baseline!r} is not a run of {lines.source}; runs: {', '.join(sample.runs)}")
        against = BaselinePairs.of(pairs, sample.runs.index(baseline))
        values = against.oriented(values)
        names = [(sample.runs[other], baseline) for other in against.others.tolist()]
    if not names:
        raise UsageError(f"{lines.source}: no pairs of runs to compare on {measure}")
    return names, values


def _scipy_stats():
    """scipy.stats, imported on first use: it takes longer to import than most commands take to run."""
    import scipy.stats

    return scipy.stats
