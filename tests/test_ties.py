"""``--ties expected`` and ``--ties range`` against brute force: every order of every tie group.

Small random collections (graded, with relevant documents the runs do not retrieve, scores from a
handful of values so that most documents tie) are ranked in every order of their tie groups; each
order is an ordinary tie-free ranking, evaluated by the measures themselves. The expectation under
``expected`` must be the mean over the orders, to 1e-9, and ``range`` must give the smallest and
largest value over them (which brackets every one, and is attained).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import QRELS, RUNS, json_lines, run_cli, write_qrels, write_run

import prefeval
from prefeval.errors import UsageError
from prefeval.measures import AdditiveMetric, families, parse_measure
from prefeval.measures.preferences import Comparison
from prefeval.measures.ties import (
    expected_metrics,
    expected_preferences,
    metric_bounds,
    preference_bounds,
)
from prefeval.ranking.loading import load_collection
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection, binary_positions, graded_positions
from prefeval.ranking.ranktable import RankTable
from prefeval.ranking.ties import random_subsets, slot_probability

PREFERENCES = ["rpp", "invrpp", "dcgrpp", "lexiprecision", "rrlexiprecision", "lexirecall"]


def additive_metrics() -> list[AdditiveMetric]:
    """Every registered additive metric with its defaults, and with a cut-off of 3 when it has one."""
    measures = []
    for family in families():
        if issubclass(family, AdditiveMetric):
            measures.append(family())
            names = [param.name for param in family.parameters]
            if "k" in names:
                before = family.parameters[:names.index("k")]
                measures.append(family(*[repr(param.default) for param in before], "3"))
    return measures


def collection(seed: int, queries: int = 3, runs: int = 3, documents: int = 7, grades: int = 3):
    """Judgments with grades 0..``grades`` (each query has a relevant document) and runs that each
    retrieve ``documents`` of ``documents`` + 3 judged documents, with scores 0, 1 or 2."""
    rng = np.random.default_rng(seed)
    judgments, scores = {}, [{} for _ in range(runs)]
    for q in range(queries):
        levels = rng.integers(0, grades + 1, documents + 3)
        levels[0] = max(levels[0], 1)
        judgments[f"q{q}"] = {f"d{d}": int(g) for d, g in enumerate(levels)}
        for run in scores:
            chosen = rng.choice(documents + 3, size=documents, replace=False)
            run[f"q{q}"] = {f"d{d}": float(rng.integers(0, 3)) for d in chosen}
    return judgments, scores


def every_order(scores: dict[str, float]) -> list[dict[str, int]]:
    """Every ranking of one query's documents that orders them by score: {docid: rank}."""
    groups = {}
    for docid, score in scores.items():
        groups.setdefault(score, []).append(docid)
    orders = []
    for chosen in itertools.product(*(itertools.permutations(groups[s]) for s in sorted(groups, reverse=True))):
        ranking = [docid for group in chosen for docid in group]
        orders.append({docid: rank for rank, docid in enumerate(ranking, start=1)})
    return orders


def ranked_in_every_order(table: RankTable, run: int, query: int, scores: dict[str, float],
                          topk: int | None = None) -> RankTable:
    """One tie-free row per order of run ``run``'s ties on query ``query`` (its other queries as
    ranked)."""
    qrels = table.qrels
    rows = []
    for order in every_order(scores):
        row = table.ranks[run].copy()
        for document in range(qrels.offsets[query], qrels.offsets[query + 1]):
            rank = order.get(qrels.docids[document], np.inf)
            row[document] = rank if topk is None or rank <= topk else np.inf
        rows.append(row)
    count = len(rows)
    return RankTable(qrels=qrels, run_ids=[f"order{n}" for n in range(count)], ranks=np.array(rows),
                     num_retrieved=np.repeat(table.num_retrieved[run:run + 1], count, axis=0),
                     in_run=np.repeat(table.in_run[run:run + 1], count, axis=0))


def selection_of(table: RankTable, level: float | None, keep: np.ndarray | None) -> Selection:
    selection = Selection.everything(table)
    if keep is not None:
        selection = Selection(selection.queries, keep)
    return selection.at_relevance_level(table, level)


def loaded(judgments, scores, topk=None) -> RankTable:
    return load_collection(judgments, {f"run{n}": run for n, run in enumerate(scores)}, RelevanceOptions(topk=topk))


CASES = [
    pytest.param(1, None, None, False, id="graded"),
    pytest.param(2, 3, None, False, id="topk 3"),
    pytest.param(3, None, 2.0, False, id="relevance level 2"),
    pytest.param(4, None, None, True, id="labels subsampled"),
    pytest.param(5, 4, None, False, id="topk 4"),
]


@pytest.mark.parametrize(("seed", "topk", "level", "subsample"), CASES)
def test_metrics_match_every_order(seed, topk, level, subsample):
    judgments, scores = collection(seed)
    table = loaded(judgments, scores, topk)
    keep = np.random.default_rng(seed).random(len(table.qrels.docids)) < 0.7 if subsample else None
    measures = additive_metrics()
    for graded in (False, True):
        chosen = [m for m in measures if m.reads_grades == graded]
        relevance_level = None if graded else level  # as eval does: -l is for binary measures
        selection = selection_of(table, relevance_level, keep)
        positions = binary_positions(table, selection, ties=True)
        expected = expected_metrics(chosen, positions)
        bounds = metric_bounds(chosen, positions)
        for run in range(table.num_runs):
            for column, query in enumerate(selection.queries.tolist()):
                orders = ranked_in_every_order(table, run, query, scores[run][table.qids[query]], topk)
                positions_of_orders = binary_positions(orders, selection_of(orders, relevance_level, keep))
                for measure in chosen:
                    values = measure.compute(positions_of_orders)[:, column]
                    low, high = bounds[measure.name]
                    where = f"{measure.name}, run {run}, query {table.qids[query]}"
                    assert expected[measure.name][run, column] == pytest.approx(values.mean(), abs=1e-9), where
                    assert low[run, column] == pytest.approx(values.min(), abs=1e-9), where
                    assert high[run, column] == pytest.approx(values.max(), abs=1e-9), where


def pair_values(measure, table: RankTable, selection: Selection, scores, first: int, second: int, query: int,
                column: int, topk=None) -> np.ndarray:
    """The preference of run ``first`` over run ``second`` on one query, for every pair of orders."""
    qid = table.qids[query]
    x = ranked_in_every_order(table, first, query, scores[first][qid], topk)
    y = ranked_in_every_order(table, second, query, scores[second][qid], topk)
    both = RankTable(qrels=table.qrels, run_ids=x.run_ids + [f"y{n}" for n in range(len(y.run_ids))],
                     ranks=np.vstack([x.ranks, y.ranks]), num_retrieved=np.vstack([x.num_retrieved, y.num_retrieved]),
                     in_run=np.vstack([x.in_run, y.in_run]))
    build = graded_positions if measure.per_grade_level else binary_positions
    positions = build(both, Selection(selection.queries, selection.documents))
    rows_x = np.repeat(np.arange(len(x.run_ids)), len(y.run_ids))
    rows_y = len(x.run_ids) + np.tile(np.arange(len(y.run_ids)), len(x.run_ids))
    values = measure.compare(Comparison(positions, positions.ranks[rows_x], positions.ranks[rows_y]))
    return values[:, column].astype(np.float64)


@pytest.mark.parametrize(("seed", "topk", "level", "subsample"), CASES)
def test_preferences_match_every_pair_of_orders(seed, topk, level, subsample):
    judgments, scores = collection(seed + 10)
    table = loaded(judgments, scores, topk)
    keep = np.random.default_rng(seed).random(len(table.qrels.docids)) < 0.7 if subsample else None
    first, second = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0])
    for name in PREFERENCES:
        measure = parse_measure(name)
        selection = selection_of(table, None if measure.per_grade_level else level, keep)
        build = graded_positions if measure.per_grade_level else binary_positions
        positions = build(table, selection, ties=True)
        expected = expected_preferences([measure], positions, first, second, draws=10**6, generator=None)[name]
        assert expected.variance is None  # every joint order enumerated
        low, high = preference_bounds(measure, positions, first, second)
        for p, (a, b) in enumerate(zip(first, second)):
            for column, query in enumerate(selection.queries):
                values = pair_values(measure, table, selection, scores, a, b, int(query), column, topk)
                where = f"{name}, pair {a}-{b}, query {query}"
                assert expected.values[p, column] == pytest.approx(values.mean(), abs=1e-9), where
                assert low[p, column] == pytest.approx(values.min(), abs=1e-9), where
                assert high[p, column] == pytest.approx(values.max(), abs=1e-9), where


@pytest.mark.parametrize("seed", [*range(20), 64, 148, 157, 247, 375])  # the last five failed, of 400
def test_preference_bounds_of_a_query_do_not_depend_on_the_queries_beside_it(seed):
    """Bounds computed on many queries at once equal those of each query alone: rrlexiprecision's
    scan over the relevant documents once forgot that a query of fewer of them than another could
    still match to its end (a maximum of -1/12 beside a longer query, 0 alone; the streamed engine,
    which evaluates fewer queries at once, disagreed with memory's summary)."""
    documents = int(np.random.default_rng(seed).integers(2, 9))
    judgments, scores = collection(seed + 100, queries=4, documents=documents, grades=1)
    table = loaded(judgments, scores)
    first, second = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 1])
    together = binary_positions(table, Selection.everything(table), ties=True)
    for name in ("rrlexiprecision", "lexiprecision", "lexirecall", "rpp"):
        measure = parse_measure(name)
        low, high = preference_bounds(measure, together, first, second)
        for query in range(table.num_queries):
            alone = binary_positions(table, Selection(np.array([query]), Selection.everything(table).documents),
                                     ties=True)
            low_alone, high_alone = preference_bounds(measure, alone, first, second)
            assert np.allclose(low[:, query], low_alone[:, 0], atol=1e-12), (name, query)
            assert np.allclose(high[:, query], high_alone[:, 0], atol=1e-12), (name, query)
            for p, (a, b) in enumerate(zip(first, second)):  # and both are those of every pair of orders
                values = pair_values(measure, table, Selection.everything(table), scores, a, b, query, query)
                assert (low[p, query], high[p, query]) == pytest.approx((values.min(), values.max()), abs=1e-9)


def test_lexicographic_monte_carlo_agrees_with_enumeration():
    judgments, scores = collection(7, queries=8, runs=2, documents=10)
    table = loaded(judgments, scores)
    positions = binary_positions(table, Selection.everything(table), ties=True)
    measures = [parse_measure(name) for name in ("lexiprecision", "rrlexiprecision", "lexirecall")]
    first, second = np.array([0]), np.array([1])
    exact = expected_preferences(measures, positions, first, second, draws=10**7, generator=None)
    drawn = expected_preferences(measures, positions, first, second, draws=60,
                                 generator=lambda q: np.random.default_rng([11, q]))
    sampled = 0
    for measure in measures:
        estimate, truth = drawn[measure.name], exact[measure.name].values
        assert estimate.variance is not None
        error = np.sqrt(estimate.variance)
        random = error > 0
        sampled += int(random.sum())
        assert (np.abs(estimate.values - truth)[random] <= 4 * error[random]).all(), measure.name
        # the mean over queries, with the standard error of the mean
        mean_error = np.sqrt(estimate.variance.sum()) / truth.shape[1]
        assert abs(estimate.values.mean() - truth.mean()) <= 4 * mean_error + 1e-12, measure.name
    assert sampled >= 3


def test_slot_probabilities_are_the_order_statistics_of_a_random_subset():
    n, r = 7, 3
    counts = np.zeros((r, n + 1))
    for subset in itertools.combinations(range(1, n + 1), r):
        for j, slot in enumerate(subset, start=1):
            counts[j - 1, slot] += 1
    total = counts[0].sum()
    for j in range(1, r + 1):
        probabilities = slot_probability(j, r, n, np.arange(n + 1))
        np.testing.assert_allclose(probabilities, counts[j - 1] / total, atol=1e-12)


@pytest.mark.parametrize(("relevant", "size"), [(1, 6), (2, 6), (3, 6), (5, 6), (6, 6)])
def test_random_subsets_are_uniform(relevant, size):
    rng = np.random.default_rng(3)
    draws = 30_000
    slots = random_subsets(rng, np.array([relevant, 1]), np.array([size, 2]), draws)
    assert slots.shape == (draws, relevant + 1)
    chosen = slots[:, :relevant]
    assert (np.diff(chosen, axis=1) > 0).all() and chosen.min() >= 1 and chosen.max() <= size
    subsets = list(itertools.combinations(range(1, size + 1), relevant))
    codes = {subset: n for n, subset in enumerate(subsets)}
    observed = np.bincount([codes[tuple(row)] for row in chosen.astype(int).tolist()], minlength=len(subsets))
    expected = draws / len(subsets)
    chi_square = ((observed - expected) ** 2 / expected).sum()
    assert chi_square < len(subsets) + 6 * np.sqrt(2 * len(subsets))  # far in the tail of chi-square
    assert set(np.unique(slots[:, relevant])) <= {1.0, 2.0}


# --- the command line and the API ------------------------------------------------------------------

@pytest.fixture
def tied(tmp_path):
    judgments, scores = collection(21, queries=4, runs=3, documents=9)
    qrels = write_qrels(tmp_path / "qrels", judgments)
    runs = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(scores)]
    return qrels, runs


def test_docid_is_the_default_and_range_adds_keys(tied):
    qrels, runs = tied
    plain = run_cli("eval", "-q", "-R", qrels, *runs)
    docid = run_cli("eval", "-q", "--ties", "docid", "-R", qrels, *runs)
    assert plain.exit_code == 0 and plain.stdout == docid.stdout
    ranged = run_cli("eval", "-q", "--ties", "range", "-m", "ap,rpp,lexiprecision", "-R", qrels, *runs)
    lines = json_lines(ranged.stdout)
    metric = next(line for line in lines if line.get("type") == "metric")
    assert list(metric)[-3:] == ["ap", "ap_ties_min", "ap_ties_max"]
    assert metric["ap_ties_min"] <= metric["ap"] <= metric["ap_ties_max"]
    pair_line = next(line for line in lines if line.get("type") == "preference")
    assert list(pair_line)[5:] == ["ap", "rpp", "lexiprecision"]  # per-query pair lines: no more keys
    summary = next(line for line in lines if line["qid"] == "all" and "runi" in line)
    for name in ("ap", "rpp", "lexiprecision"):
        low, high = summary[f"{name}_ties_min"], summary[f"{name}_ties_max"]
        assert low <= summary[name] <= high
        assert summary[f"{name}_ties_flip"] == (low < 0 < high)


def test_expected_needs_a_seed_only_to_draw_and_repeats_with_it(tied):
    qrels, runs = tied
    exact = run_cli("eval", "-q", "--ties", "expected", "--draws", "5000", "-R", qrels, *runs)
    assert exact.exit_code == 0 and "seed" not in exact.stderr  # every joint order enumerated
    assert "_se" not in exact.stdout
    args = ["eval", "-q", "--ties", "expected", "--draws", "5", "--seed", "3", "-R", qrels, *runs]
    once, again = run_cli(*args), run_cli(*args)
    assert once.exit_code == 0 and once.stdout == again.stdout
    assert "lexiprecision_se" in json_lines(once.stdout)[-4]
    sequential, parallel = run_cli(*args, "--jobs", "1"), run_cli(*args, "--jobs", "2")
    assert sequential.stdout == parallel.stdout == once.stdout
    drawn = run_cli(*args[:6], "-R", qrels, *runs)
    assert "no --seed given; drew seed" in drawn.stderr


def test_expected_lines_aggregate_and_every_format_works(tied, tmp_path):
    qrels, runs = tied
    lines = tmp_path / "expected.jsonl"
    assert run_cli("eval", "-q", "--ties", "expected", "--seed", "1", "-o", lines, "-R", qrels, *runs).exit_code == 0
    summary = json_lines(run_cli("aggregate", "-P", lines).stdout)[-1]
    assert set(summary) == {"qid", "sample", "rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision",
                            "rrlexiprecision", "ap", "rbp", "rr", "ndcg", "rp", "p@1", "p@10", "r@1", "r@10"}
    for ties in ("expected", "range"):
        for fmt in ("tsv", "table", "markdown", "latex"):
            result = run_cli("eval", "--ties", ties, "--seed", "1", "--format", fmt, "-m", "ap,rpp", "-R", qrels, *runs)
            assert result.exit_code == 0, result.output
            if ties == "range" and fmt != "tsv":
                assert "ties" in result.stdout and "min" in result.stdout


def test_the_api_takes_ties(tied):
    qrels, runs = tied
    expected = prefeval.evaluate(qrels, runs, ["ap", "ndcg@5"], ties="expected", per_query=False)
    ranged = prefeval.evaluate(qrels, runs, ["ap", "ndcg@5"], ties="range", per_query=False)
    assert ((ranged["ap_ties_min"] <= expected["ap"] + 1e-12) & (expected["ap"] <= ranged["ap_ties_max"] + 1e-12)).all()
    pairs = prefeval.compare(qrels, runs, ["rpp", "lexiprecision"], ties="range", per_query=False)
    assert {"rpp_ties_min", "rpp_ties_max", "rpp_ties_flip"} <= set(pairs.columns)
    with pytest.raises(UsageError, match="ties must be one of docid, expected, range"):
        prefeval.evaluate(QRELS, RUNS, ["ap"], ties="random")
    with pytest.raises(UsageError, match="draws must be an integer of at least 2"):
        prefeval.evaluate(QRELS, RUNS, ["ap"], ties="expected", draws=1)
