"""Every intent-aware measure against ir_measures' pyndeval provider (ndeval's code, bound to Python), query
by query: on random diversity collections (:mod:`diversity_cases`) at many cut-offs, alphas and betas,
and on the TREC 2012 Web track subset of ``tests/data/ndeval``.

pyndeval orders a run by score (ties by docid ascending, where prefeval and ndeval's ``-traditional``
order them descending): the runs here have distinct scores. Its values at cut-off 1 of ERR-IA and
alpha-DCG are not normalised (ndeval's loop of normalisation starts at the second rank): prefeval
normalises them (:mod:`prefeval.measures.diversity`), so those two are compared from k = 2 on.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from diversity_cases import random_collection, write_collection

from prefeval.io.trec import read_qrels, read_run
from prefeval.measures import parse_measure
from prefeval.ranking.intents import intent_positions
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")

DATA = Path(__file__).parent / "data" / "ndeval"


def names(k: int, alpha: float, beta: float, rel: int = 1) -> list[str]:
    """ir_measures' names of every intent-aware measure at these parameters."""
    level = f"rel={rel}," if rel != 1 else ""
    found = [f"nERR_IA({level.rstrip(',')})@{k}" if level else f"nERR_IA@{k}",
             f"alpha_nDCG({level}alpha={alpha})@{k}", f"P_IA({level.rstrip(',')})@{k}" if level else f"P_IA@{k}",
             f"StRecall({level.rstrip(',')})@{k}" if level else f"StRecall@{k}",
             f"NRBP({level}alpha={alpha},beta={beta})", f"nNRBP({level}alpha={alpha},beta={beta})",
             f"AP_IA({level.rstrip(',')})" if level else "AP_IA"]
    if k >= 2:
        found += [f"ERR_IA({level.rstrip(',')})@{k}" if level else f"ERR_IA@{k}",
                  f"alpha_DCG({level}alpha={alpha})@{k}"]
    return found


def ours(qrels: str, runs: list[str], measures: list[str]) -> dict[tuple[str, str, str], float]:
    """{(run, qid, measure name as given): value} from prefeval, on every query of the qrels (0 where
    the run lacks the query, as ir_measures writes it)."""
    judgments = read_qrels(qrels, keep_empty=True)
    lookup = RelevantLookup(judgments)
    table = RankTable.from_ranked(judgments, [rank_relevant(read_run(run), lookup) for run in runs])
    selection = Selection.everything(table)
    found = {}
    for name in measures:
        measure = parse_measure(name)
        level = measure.relevance_level
        chosen = selection.at_relevance_level(table, level)
        positions = binary_positions(table, chosen)._replace(intents=intent_positions(table, chosen, level))
        values = measure.compute(positions)
        for number, run in enumerate(runs):
            for column, qid in enumerate(table.qids):
                found[(run, qid, name)] = float(values[number, column])
    return found


def theirs(qrels: str, runs: list[str], measures: list[str]) -> dict[tuple[str, str, str], float]:
    """{(run, qid, measure name): value} from ir_measures, one measure at a time: given measures of
    several alphas or betas at once, ir_measures 0.4.3 reads the run once for all of pyndeval's
    invocations, and the later ones score 0."""
    judgments = list(ir_measures.read_trec_qrels(qrels))
    found = {}
    for run in runs:
        ranking = list(ir_measures.read_trec_run(run))
        for name in measures:
            for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], judgments, ranking):
                found[(run, metric.query_id, name)] = metric.value
    return found


def assert_agree(qrels: str, runs: list[str], measures: list[str]) -> int:
    """Every value pyndeval gives is prefeval's (but its NaN: nNRBP on a query without a relevant
    judgment, 0/0, which prefeval scores 0); returns how many were compared."""
    mine, pyndeval = ours(qrels, runs, measures), theirs(qrels, runs, measures)
    assert set(pyndeval) <= set(mine)
    for key, value in pyndeval.items():
        if value != value:
            assert key[2].startswith("nNRBP") and mine[key] == 0.0, key
            continue
        assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    return len(pyndeval)


SETTINGS = [(20, 0.5, 0.5), (5, 0.5, 0.5), (10, 0.3, 0.9), (1, 0.5, 0.5), (2, 1.0, 0.0), (7, 0.0, 0.25),
            (3, 0.75, 1.0), (15, 0.1, 0.5)]


@pytest.mark.parametrize("seed", range(12))
def test_every_measure_agrees_with_pyndeval_on_random_collections(tmp_path, seed):
    rng = np.random.default_rng(1000 + seed)
    qrels, runs = write_collection(tmp_path, *random_collection(rng, num_queries=5))
    compared = 0
    for k, alpha, beta in SETTINGS:
        compared += assert_agree(qrels, runs, names(k, alpha, beta, rel=2 if seed % 3 == 0 else 1))
    assert compared > 0


def test_every_measure_agrees_with_pyndeval_on_the_web_track_subset(tmp_path):
    """The subset's runs with their scores made distinct (1000 − rank), so that every tool orders them
    as their rank field does."""
    qrels = str(DATA / "web2012.qrels")
    runs = []
    for name in ("ql.run", "rm.run", "rmf.run"):
        lines = [line.split() for line in (DATA / name).read_text().splitlines()]
        (tmp_path / name).write_text("".join(f"{q} Q0 {doc} {rank} {1000 - int(rank)} {tag}\n"
                                             for q, _, doc, rank, _, tag in lines))
        runs.append(str(tmp_path / name))
    compared = sum(assert_agree(qrels, runs, names(k, alpha, beta)) for k, alpha, beta in SETTINGS)
    assert compared == 3 * 4 * (len(SETTINGS) * 9 - 2)  # 3 runs, 4 topics; ERR-IA, alpha-DCG left out at k = 1
