"""The preferences over intents (:mod:`prefeval.measures.intent_preferences`): worked values, the
definitions computed the plain way on random diversity collections, the properties of every
preference (antisymmetry, bounds, 0 against itself), the worst-off intent's Pareto consistency, one
intent on ad hoc qrels, and aggregation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import json_lines, run_cli, write_text
from diversity_cases import parse, random_collection, write_collection

import prefeval
from prefeval.io.trec import read_qrels, read_run
from prefeval.measures import parse_measure
from prefeval.measures.preferences import Comparison
from prefeval.ranking.intents import with_intents
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant

FAMILIES = ["rpp_ia", "invrpp_ia", "dcgrpp_ia", "lexirecall_ia", "lexiprecision_ia", "rrlexiprecision_ia",
            "worst_intent"]
WORKED_QRELS = ["q 1 a 1", "q 2 a 1", "q 1 b 1", "q 3 c 1", "q 2 d 1", "q 3 d 1"]
WORKED_X = ["q Q0 b 1 4 x", "q Q0 a 2 3 x", "q Q0 u 3 2 x", "q Q0 c 4 1 x"]
WORKED_Y = ["q Q0 d 1 4 y", "q Q0 a 2 3 y", "q Q0 b 3 2 y", "q Q0 u 4 1 y"]
WORKED_VALUES = {"rpp_ia": -1 / 6, "lexiprecision_ia": -1 / 3, "lexirecall_ia": -1 / 3, "worst_intent": -1}
"""The module docstring's worked values (and the README's)."""


def preferences(qrels: str, runs: list[str], names: list[str], first, second, level=None) -> dict[str, np.ndarray]:
    """(P, Q) per preference, as the evaluation computes them (positions with their intents)."""
    judgments = read_qrels(qrels, keep_empty=True)
    lookup = RelevantLookup(judgments)
    table = RankTable.from_ranked(judgments, [rank_relevant(read_run(run), lookup) for run in runs])
    selection = Selection.everything(table).at_relevance_level(table, level)
    positions = with_intents(binary_positions(table, selection), table, selection, level)
    first, second = np.asarray(first), np.asarray(second)
    comparison = Comparison(positions, positions.ranks[first], positions.ranks[second], first, second)
    return {name: parse_measure(name).compare(comparison) for name in names}


def test_worked_values(tmp_path):
    qrels = write_text(tmp_path / "qrels", WORKED_QRELS)
    runs = [write_text(tmp_path / "x", WORKED_X), write_text(tmp_path / "y", WORKED_Y)]
    found = preferences(qrels, runs, list(WORKED_VALUES), [0], [1])
    for name, expected in WORKED_VALUES.items():
        assert found[name][0, 0] == pytest.approx(expected, abs=1e-15), name
    backward = preferences(qrels, runs, list(WORKED_VALUES), [1], [0])
    for name, expected in WORKED_VALUES.items():
        assert backward[name][0, 0] == pytest.approx(-expected, abs=1e-15), name


# --- the definitions, the plain way -----------------------------------------------------------------

def vector(ranking: list[str], relevant: set[str]) -> list[float]:
    """The position vector of ``relevant`` in ``ranking`` (∞ for the documents it lacks)."""
    ranks = sorted(rank for rank, doc in enumerate(ranking, start=1) if doc in relevant)
    return [float(rank) for rank in ranks] + [math.inf] * (len(relevant) - len(ranks))


def sign(x: float, y: float) -> int:
    return (x < y) - (x > y)


def plain(family: str, x: list[float], y: list[float]) -> float:
    """The six preferences of MEASURES.md on two position vectors, by their definitions."""
    m = len(x)
    differing = [i for i in range(m) if x[i] != y[i]]
    if family in ("rpp", "invrpp", "dcgrpp"):
        weight = {"rpp": lambda i: 1.0, "invrpp": lambda i: 1.0 / i, "dcgrpp": lambda i: 1.0 / math.log2(i + 1)}
        weights = [weight[family](i) for i in range(1, m + 1)]
        return sum(w * sign(a, b) for w, a, b in zip(weights, x, y)) / sum(weights)
    if not differing:
        return 0.0
    if family == "lexiprecision":
        return sign(x[differing[0]], y[differing[0]])
    if family == "rrlexiprecision":
        i = differing[0]
        return (1 / x[i] if x[i] < math.inf else 0.0) - (1 / y[i] if y[i] < math.inf else 0.0)
    return sign(x[differing[-1]], y[differing[-1]])  # lexirecall


def plain_preference(family: str, subtopics: dict[int, set[str]], x: list[str], y: list[str]) -> float:
    subtopics = {s: docs for s, docs in sorted(subtopics.items()) if docs}
    if not subtopics:
        return 0.0
    if family == "worst_intent":
        first = [sorted(vector(ranking, docs)[0] for docs in subtopics.values()) for ranking in (x, y)]
        return plain("lexirecall", *first)
    base = family.removesuffix("_ia")
    return sum(plain(base, vector(x, docs), vector(y, docs)) for docs in subtopics.values()) / len(subtopics)


@pytest.mark.parametrize("seed", range(30))
def test_every_preference_is_its_definition_on_random_collections(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qrels_lines, runs = random_collection(rng, num_runs=3)
    qrels, paths = write_collection(tmp_path, qrels_lines, runs)
    level = [None, 2.0][seed % 2]
    pairs = [(i, j) for i in range(len(paths)) for j in range(len(paths)) if i != j]
    first, second = [i for i, _ in pairs], [j for _, j in pairs]
    found = preferences(qrels, paths, FAMILIES, first, second, level)
    qids = read_qrels(qrels, keep_empty=True).qids
    parsed = [parse(qrels_lines, lines, level or 1.0) for lines in runs.values()]
    for p, (i, j) in enumerate(pairs):
        judged = parsed[0][0]
        for column, qid in enumerate(qids):
            x, y = parsed[i][1].get(qid, []), parsed[j][1].get(qid, [])
            for family in FAMILIES:
                expected = plain_preference(family, judged.get(qid, {}), x, y)
                assert found[family][p, column] == pytest.approx(expected, abs=1e-12), (family, qid, i, j)


@pytest.mark.parametrize("seed", range(30))
def test_antisymmetric_bounded_and_zero_against_itself(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    qrels, paths = write_collection(tmp_path, *random_collection(rng, num_runs=3))
    count = len(paths)
    first = [i for i in range(count) for j in range(count) if i != j]
    second = [j for i in range(count) for j in range(count) if i != j]
    forward = preferences(qrels, paths, FAMILIES, first, second)
    backward = preferences(qrels, paths, FAMILIES, second, first)
    itself = preferences(qrels, paths, FAMILIES, list(range(count)), list(range(count)))
    for family in FAMILIES:
        assert np.all(np.abs(forward[family]) <= 1.0), family
        np.testing.assert_array_equal(forward[family], -backward[family], err_msg=family)
        np.testing.assert_array_equal(itself[family], 0, err_msg=family)


@pytest.mark.parametrize("seed", range(20))
def test_the_worst_off_intent_prefers_a_ranking_that_serves_every_subtopic_no_later(tmp_path, seed):
    """Pareto consistency: when x serves every subtopic no later than y, and some sooner, x is preferred."""
    rng = np.random.default_rng(500 + seed)
    qrels_lines, runs = random_collection(rng, num_queries=6, num_runs=2)
    qrels, paths = write_collection(tmp_path, qrels_lines, runs)
    found = preferences(qrels, paths, ["worst_intent"], [0], [1])["worst_intent"][0]
    parsed = [parse(qrels_lines, lines) for lines in runs.values()]
    for column, qid in enumerate(read_qrels(qrels, keep_empty=True).qids):
        subtopics = [docs for docs in parsed[0][0].get(qid, {}).values() if docs]
        t = [[vector(parsed[r][1].get(qid, []), docs)[0] for docs in subtopics] for r in range(2)]
        if all(a <= b for a, b in zip(*t)) and t[0] != t[1]:
            assert found[column] == 1, qid
        if all(a >= b for a, b in zip(*t)) and t[0] != t[1]:
            assert found[column] == -1, qid


def test_on_ad_hoc_qrels_each_query_is_one_intent(examples):
    qrels = str(examples / "qrels.txt")
    runs = [str(examples / "runs" / name) for name in ("bm25", "dense", "hybrid")]
    names = ["rpp_ia", "rpp", "lexirecall_ia", "lexirecall", "lexiprecision_ia", "lexiprecision", "worst_intent",
             "rrlexiprecision_ia", "rrlexiprecision"]
    pairs = prefeval.compare(qrels, runs, names, binary_relevance=1, jobs=1)
    for family in ("rpp", "lexirecall", "lexiprecision", "rrlexiprecision"):
        np.testing.assert_allclose(pairs[f"{family}_ia"], pairs[family], atol=1e-15)
    np.testing.assert_array_equal(np.sign(pairs["worst_intent"]), pairs["worst_intent"])


def test_eval_writes_them_and_aggregate_orders_the_runs(tmp_path):
    qrels = write_text(tmp_path / "qrels", WORKED_QRELS)
    runs = [write_text(tmp_path / "x", WORKED_X), write_text(tmp_path / "y", WORKED_Y)]
    lines = tmp_path / "prefs.jsonl"
    result = run_cli("eval", "-q", "-m", ",".join(FAMILIES), "-R", qrels, "-o", lines, *runs)
    assert result.exit_code == 0, result.stderr
    pair = json_lines(lines.read_text())[0]
    assert pair["worst_intent"] == -1 and pair["rpp_ia"] == pytest.approx(-1 / 6)
    aggregated = run_cli("aggregate", "-P", lines)
    assert aggregated.exit_code == 0, aggregated.stderr
    summary = json_lines(aggregated.stdout)[-1]
    for family in FAMILIES:
        assert summary[family]["type"] == "preference"
        assert summary[family]["mc4"][0] == "y" and summary[family]["borda"][0] == "y", family
