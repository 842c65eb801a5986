"""``--ties range`` and ``--ties expected`` where gains do not grow with the grade, on queries without
a document at the relevance level, and the keys of every line whatever the data (issue 24, items
2, 8 and 18).

The bounds are checked against brute force: every order of every tie group is an ordinary tie-free
ranking, evaluated by the measures themselves (the helpers of ``test_ties``), the minimum and
maximum over them being the bounds, and the pair's delta ranging over the differences of every
order of one run and every order of the other (independent).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import test_ties
from conftest import json_lines, run_cli, write_qrels, write_run, write_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ties import loaded, ranked_in_every_order

from prefeval.errors import UsageError
from prefeval.io.keys import bound_keys, flip_key
from prefeval.measures import Metric, families, parse_measure
from prefeval.measures.ties import check_measures, metric_bounds, metric_deltas, summary_extras
from prefeval.ranking.positions import Selection, binary_positions

GAIN_VALUES = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0]
GAIN_MAPPED = ["ndcg", "ndcg@2", "rndcg", "ndcg_rel", "trec_rbp"]
"""The families that take a gain map (``gains=``), with and without a cut-off."""
BY_GRADE = ["dcg", "dcg@2", "cg@2", "ndcg_exp", "ndcg_exp@2", "pfound", "pfound@2", "err", "err@2", "compat"]
"""The other metrics that weigh documents by their grade."""


def accepted(names: list[str]) -> list[Metric]:
    """The measures of ``names`` that ``--ties range`` takes."""
    measures = []
    for name in names:
        measure = parse_measure(name)
        try:
            check_measures("range", [measure])
        except UsageError:
            continue
        measures.append(measure)
    return measures


def brute_force(measure: Metric, judgments, scores, topk) -> list[np.ndarray]:
    """Per run, the measure's value on query q0 in every order of the run's tie groups."""
    table = loaded(judgments, scores, topk)
    values = []
    for run, run_scores in enumerate(scores):
        orders = ranked_in_every_order(table, run, 0, run_scores["q0"], topk)
        level = None  # the graded measures see every positive grade; binary ones grade > 0
        positions = binary_positions(orders, Selection.everything(orders).at_relevance_level(orders, level))
        values.append(measure.compute(positions)[:, 0])
    return values


def assert_bounds_are_every_order(measures: list[Metric], judgments, scores, topk) -> None:
    """Each metric's bounds, and those of the pair (run 0, run 1) with its ``_ties_flip``, as the
    evaluation computes them, are the extremes over every order."""
    table = loaded(judgments, scores, topk)
    positions = binary_positions(table, Selection.everything(table).at_relevance_level(table, None), ties=True)
    bounds = metric_bounds(measures, positions)
    first, second = np.array([0]), np.array([1])
    for measure in measures:
        every = brute_force(measure, judgments, scores, topk)
        low, high = bounds[measure.name]
        where = f"{measure.name}, {judgments}, {scores}, topk {topk}"
        for run, values in enumerate(every):
            assert low[run, 0] == pytest.approx(values.min(), abs=1e-9), where
            assert high[run, 0] == pytest.approx(values.max(), abs=1e-9), where
        low_key, high_key = bound_keys(measure.name)
        _, pair = metric_deltas(measure.name, measure.compute(positions), {low_key: low, high_key: high}, first, second)
        summary = summary_extras([measure.name], {key: values.sum(axis=1) for key, values in pair.items()}, 1)
        deltas = every[0][:, None] - every[1][None, :]
        assert summary[low_key][0] == pytest.approx(deltas.min(), abs=1e-9), where
        assert summary[high_key][0] == pytest.approx(deltas.max(), abs=1e-9), where
        assert bool(summary[flip_key(measure.name)][0]) == bool(deltas.min() < -1e-9 and deltas.max() > 1e-9), where


# --- item 2: the extreme orders from the gains -----------------------------------------------------

@pytest.fixture
def reversed_gains(tmp_path):
    """The issue's case: grades 1, 2, 3 with gains 5, 1, 3, the three documents tied."""
    qrels = write_text(tmp_path / "qrels", ["q1 0 a 1", "q1 0 b 2", "q1 0 c 3"])
    run = write_text(tmp_path / "TA", ["q1 Q0 a 1 1 A", "q1 Q0 b 1 1 A", "q1 Q0 c 1 1 A"])
    return qrels, run


def test_range_of_ndcg_with_gains_that_do_not_grow_with_the_grade(reversed_gains):
    qrels, run = reversed_gains
    name = "ndcg@gains=1:5;2:1"  # 3:3 is grade 3's own gain
    ideal = 5 + 3 / math.log2(3) + 1 / 2
    # the six orders of (a, b, c): gains 5, 1, 3 at discounts 1, 1/log2(3), 1/2
    every = [sum(g / math.log2(r + 1) for r, g in enumerate(gains, start=1)) / ideal
             for gains in ((5, 1, 3), (5, 3, 1), (1, 5, 3), (1, 3, 5), (3, 5, 1), (3, 1, 5))]
    assert min(every) == pytest.approx(0.72947, abs=1e-5) and max(every) == 1.0
    ranged = json_lines(run_cli("eval", "-q", "-m", "ndcg,gains=1:5;2:1;3:3", "--ties", "range", "-R", qrels,
                                run).stdout)
    assert ranged[0][f"{name}_ties_min"] == pytest.approx(min(every), abs=1e-12)
    assert ranged[0][f"{name}_ties_max"] == pytest.approx(max(every), abs=1e-12)
    expected = json_lines(run_cli("eval", "-q", "-m", "ndcg,gains=1:5;2:1;3:3", "--ties", "expected", "-R", qrels,
                                  run).stdout)
    assert expected[0][name] == pytest.approx(sum(every) / 6, abs=1e-12)
    assert expected[0][name] == pytest.approx(0.86473, abs=1e-5)


@st.composite
def tied_collections(draw):
    """One query: up to five judged documents of grades 0..3 (one relevant at least) and an unjudged
    one; two runs retrieving some of them with scores 0 or 1 (so that most tie); a gain map of
    grades 1..3 (negative gains and 0 among them); sometimes a cut-off (--topk)."""
    count = draw(st.integers(2, 5))
    grades = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count).filter(lambda g: max(g) > 0))
    judgments = {"q0": {f"d{n}": grade for n, grade in enumerate(grades)}}
    documents = [*judgments["q0"], "u"]
    scores = []
    for _ in range(2):
        retrieved = draw(st.lists(st.sampled_from(documents), min_size=1, max_size=len(documents), unique=True))
        values = draw(st.lists(st.integers(0, 1), min_size=len(retrieved), max_size=len(retrieved)))
        scores.append({"q0": {docid: float(value) for docid, value in zip(retrieved, values)}})
    gains = draw(st.lists(st.sampled_from(GAIN_VALUES), min_size=3, max_size=3))
    gain_map = ";".join(f"{level}:{gain!r}" for level, gain in zip((1, 2, 3), gains))
    topk = draw(st.none() | st.integers(1, len(documents)))
    return judgments, scores, gain_map, topk


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_collections())
def test_bounds_with_random_gain_maps_are_those_of_every_order(case):
    judgments, scores, gain_map, topk = case
    names = [f"{family},gains={gain_map}" for family in GAIN_MAPPED] + BY_GRADE
    assert_bounds_are_every_order(accepted(names), judgments, scores, topk)


def every_metric_range_takes() -> list[Metric]:
    """Every registered metric family that ``--ties range`` takes, with its defaults, and with a
    cut-off of 3 when it has one."""
    measures = []
    for family in families():
        if not issubclass(family, Metric):
            continue
        measures.append(family())
        names = [param.name for param in family.parameters]
        if "k" in names:
            before = family.parameters[:names.index("k")]
            measures.append(family(*[repr(param.default) for param in before], "3"))
    return accepted([measure.name for measure in measures])


@pytest.mark.parametrize("seed", range(4))
def test_every_metric_range_takes_is_bounded_by_its_extreme_orders(seed):
    rng = np.random.default_rng(seed)
    measures = every_metric_range_takes()
    for _ in range(30):
        count = int(rng.integers(3, 6))
        grades = rng.integers(0, 4, count)
        grades[0] = max(grades[0], 1)
        judgments = {"q0": {f"d{n}": int(g) for n, g in enumerate(grades)}}
        documents = [*judgments["q0"], "u"]
        scores = [{"q0": {documents[d]: float(rng.integers(0, 2))
                          for d in rng.choice(len(documents), size=int(rng.integers(1, len(documents) + 1)),
                                              replace=False)}} for _ in range(2)]
        topk = None if rng.random() < 0.6 else int(rng.integers(1, len(documents)))
        assert_bounds_are_every_order(measures, judgments, scores, topk)


@pytest.mark.parametrize(("name", "reason"), [
    ("gain_shortfall", "shortfall"),
    ("gain_shortfall,gains=1:2", "shortfall"),
    ("ndcg_rel,gains=1:-1", "negative gain"),
    ("accuracy@3", "cut-off"),
])
def test_range_refuses_the_metrics_whose_extremes_it_does_not_know(name, reason):
    with pytest.raises(UsageError, match=reason):
        check_measures("range", [parse_measure(name)])


def test_the_metrics_range_takes_with_gains():
    taken = {measure.name for measure in accepted(["ndcg_rel,gains=1:2;2:0", "accuracy", "accuracy@2",
                                                   "rndcg,gains=1:-1", "ndcg,gains=1:-1", "trec_rbp,gains=1:0.5"])}
    assert taken == {"ndcg_rel@gains=1:2;2:0", "accuracy", "accuracy@2", "rndcg@gains=1:-1", "ndcg@gains=1:-1",
                     "trec_rbp@gains=1:0.5"}


# --- items 8 and 18: a query without a document at the relevance level --------------------------------

@pytest.fixture
def nothing_at_level_2(tmp_path):
    """The issue's case: q1 has a document of grade 1 and none of grade 2; run TA ties a, b and c."""
    qrels = write_text(tmp_path / "qrels", ["q1 0 a 1", "q1 0 b 0"])
    ta = write_text(tmp_path / "TA", ["q1 Q0 a 1 1 A", "q1 Q0 b 1 1 A", "q1 Q0 c 1 1 A"])
    tb = write_text(tmp_path / "TB", ["q1 Q0 a 1 2 B", "q1 Q0 b 1 1 B"])
    return qrels, ta, tb


def evaluated(*args):
    """``prefeval eval ARGS`` with every Python warning an error: its exit code 0, its output."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_cli("eval", "--jobs", "1", *args)
    assert result.exit_code == 0 and result.exception is None, (result.output, result.exception)
    return result


def test_expected_on_a_query_without_a_document_at_the_level(nothing_at_level_2):
    qrels, ta, tb = nothing_at_level_2
    lines = json_lines(evaluated("-q", "--ties", "expected", "-l", "2", "-R", qrels, ta, tb).stdout)
    metric = {line["run"]: line for line in lines if line.get("type") == "metric"}
    pair = next(line for line in lines if line.get("type") == "preference")
    for name in ("ap", "rbp", "rr", "rp", "p@1", "p@10", "r@1", "r@10"):  # nothing at level 2: 0
        assert metric["TA"][name] == 0.0 and metric["TB"][name] == 0.0 and pair[name] == 0.0
    # ndcg reads every positive grade: a's rank in TA is 1, 2 or 3 alike; TB ranks a first
    ndcg = (1 + 1 / math.log2(3) + 1 / 2) / 3
    assert metric["TA"]["ndcg"] == pytest.approx(ndcg, abs=1e-12) and metric["TB"]["ndcg"] == 1.0
    # graded RPP: E[sgn(y − x)] with y = 1 and x uniform on 1..3
    for name in ("rpp", "invrpp", "dcgrpp"):
        assert pair[name] == pytest.approx(-2 / 3, abs=1e-12)
    for name in ("lexirecall", "lexiprecision", "rrlexiprecision"):  # binary, at level 2: a tie
        assert pair[name] == 0


def summary_keys(args, formats=("jsonl",)) -> dict[str, object]:
    """The keys (or the header and the shape of the rows) of every format's output for ``args``."""
    shapes = {}
    for fmt in formats:
        output = evaluated("--format", fmt, *args).stdout
        if fmt == "jsonl":
            shapes[fmt] = [list(line) for line in json_lines(output)]
        elif fmt == "tsv":
            shapes[fmt] = [line.split("\t")[:2] for line in output.splitlines()]
        else:  # the header, and the cells of every line
            separator = {"table": None, "markdown": "|", "latex": "&"}[fmt]
            lines = output.splitlines()
            shapes[fmt] = [lines[0].split(separator), *(len(line.split(separator)) for line in lines)]
    return shapes


@pytest.mark.parametrize("ties", ["range", "expected"])
def test_keys_do_not_depend_on_documents_at_the_level(nothing_at_level_2, tmp_path, ties):
    qrels, ta, tb = nothing_at_level_2
    # the same query with a document of grade 2: the lines must have the same keys
    graded = write_text(tmp_path / "graded", ["q1 0 a 2", "q1 0 b 0"])
    formats = ("jsonl", "tsv", "table", "markdown", "latex")
    for measures in ([], ["-m", "ap,rpp,lexirecall,lexiprecision,rrlexiprecision"]):
        args = ["--ties", ties, "--draws", "1000", *measures]
        without = summary_keys([*args, "-l", "2", "-R", qrels, ta, tb], formats)
        with_one = summary_keys([*args, "-l", "2", "-R", graded, ta, tb], formats)
        assert without == with_one
    if ties == "range":
        summary = json_lines(evaluated("--ties", "range", "-l", "2", "-R", qrels, ta, tb).stdout)[0]
        for name in ("lexirecall", "lexiprecision", "rrlexiprecision"):
            low, high = bound_keys(name)
            assert summary[low] == summary[high] == 0.0 and summary[flip_key(name)] is False


def test_range_on_a_query_without_a_document_at_the_level_in_the_tables(nothing_at_level_2):
    qrels, ta, tb = nothing_at_level_2
    table = evaluated("--ties", "range", "-l", "2", "--format", "markdown", "-m", "ap,rpp,lexirecall",
                      "-R", qrels, ta, tb).stdout.splitlines()
    cells = [len(line.split("|")) for line in table if line.startswith("|")]
    assert len(set(cells)) == 1  # every row as wide as the header


def test_more_queries_some_without_a_document_at_the_level(tmp_path):
    """Several queries, some with a document of grade 2 and some without, in blocks: the range of
    the lexicographic preferences is that of the queries that have one."""
    judgments = {f"q{q}": {"a": 1 + (q % 2), "b": 0, "c": 2 if q == 3 else 1} for q in range(6)}
    scores = [{q: {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0} for q in judgments},
              {q: {"a": 2.0, "b": 1.0, "c": 1.0} for q in judgments}]
    qrels = write_qrels(tmp_path / "qrels", judgments)
    runs = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(scores)]
    for ties in ("range", "expected"):
        lines = json_lines(evaluated("-q", "--ties", ties, "-l", "2", "-R", qrels, *runs).stdout)
        summary = next(line for line in lines if line["qid"] == "all" and "runi" in line)
        assert all(value == value for value in summary.values() if isinstance(value, float))
        if ties == "range":
            for name in ("lexirecall", "lexiprecision", "rrlexiprecision"):
                low, high = bound_keys(name)
                assert summary[low] <= summary[name] <= summary[high]


# --- item 7: the memory of RPP's expectation ------------------------------------------------------------

def test_rpp_expectation_memory_is_bounded_and_its_values_unchanged(monkeypatch):
    """One query whose 2,000 documents tie, 200 of them relevant (grades 1 to 3): the rank
    distributions of graded RPP hold about 720,000 values. With a step of 2^15 values, the work must
    stay within a few steps' worth of memory, and give the values of a single step to the last bit
    (which are those of every order: ``test_ties``, and the next test)."""
    import tracemalloc

    import prefeval.ranking.ties as ranking_ties
    from prefeval.measures.ties import expected_preferences
    from prefeval.ranking.positions import graded_positions

    rng = np.random.default_rng(7)
    count = 2000
    relevant = rng.choice(count, size=count // 10, replace=False)
    judgments = {"q0": {f"d{d}": int(g) for d, g in zip(relevant, rng.integers(1, 4, len(relevant)))}}
    scores = [{"q0": {f"d{d}": 1.0 for d in range(count)}},
              {"q0": {f"d{d}": float(rng.permutation(count)[d]) for d in range(count)}},
              {"q0": {f"d{d}": float(d % 2) for d in range(count)}}]
    table = loaded(judgments, scores)
    positions = graded_positions(table, Selection.everything(table), True)
    first, second = np.array([0, 0, 1]), np.array([1, 2, 2])
    measures = [parse_measure(name) for name in ("rpp", "invrpp", "dcgrpp")]
    whole = expected_preferences(measures, positions, first, second, draws=2, generator=None)
    step = 1 << 15
    monkeypatch.setattr(ranking_ties, "STEP_ELEMENTS", step, raising=False)
    tracemalloc.start()
    try:
        stepped = expected_preferences(measures, positions, first, second, draws=2, generator=None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * step * 8  # 16 MiB, where the distributions alone took 100 MiB
    for measure in measures:
        assert np.array_equal(stepped[measure.name].values, whole[measure.name].values), measure.name


@pytest.mark.parametrize("case", range(3))
def test_rpp_expectation_in_the_smallest_steps_is_that_of_every_order(monkeypatch, case):
    """One element and one (pair, element) sum a step: still the mean over every pair of orders."""
    import prefeval.ranking.ties as ranking_ties

    monkeypatch.setattr(ranking_ties, "STEP_ELEMENTS", 1, raising=False)
    test_ties.test_preferences_match_every_pair_of_orders(*test_ties.CASES[case].values)
