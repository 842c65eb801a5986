"""The intent-aware measures (:mod:`prefeval.measures.diversity`): worked values, their definitions on
random collections (computed the plain way, :mod:`diversity_cases`), what they are on ad hoc qrels, and
the greedy ideal ranking's ties."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli, write_text
from diversity_cases import parse, plain_values, random_collection, write_collection

import prefeval
from prefeval.errors import UsageError
from prefeval.io.trec import read_qrels, read_run
from prefeval.measures import parse_measure
from prefeval.measures.diversity import ideal_ranks
from prefeval.ranking.intents import IntentPositions, intent_positions
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant

WORKED_QRELS = ["q 1 a 1", "q 2 a 1", "q 1 b 1", "q 3 c 1", "q 2 d 2", "q 3 d 1", "q 1 e 0"]
"""Subtopics 1 (a, b), 2 (a, d), 3 (c, d); e judged not relevant."""
WORKED_RUN = ["q Q0 b 1 4.0 r", "q Q0 a 2 3.0 r", "q Q0 x 3 2.0 r", "q Q0 c 4 1.0 r"]
"""b, a, an unjudged x, c. With alpha = 0.5 the gains are G = 1, 1.5, 0, 1; the greedy ideal is d
(gain 2, tied with a: the larger docid), a (1.5), c (0.5, tied with b), b (0.5)."""
WORKED_VALUES = {
    "alpha_dcg@5": 0.5218101, "alpha_ndcg@5": 0.6967343, "err_ia@5": 0.4841150, "nerr_ia@5": 0.6575342,
    "nrbp": 0.46875, "nnrbp": 0.6382979, "ap_ia": 0.4583333, "p_ia@5": 4 / 15, "strec@2": 2 / 3, "strec@5": 1.0,
}
"""Worked by hand (README, "Intent-aware measures")."""


def values(qrels: str, runs: list[str], names: list[str], level: float | None = None) -> dict[str, np.ndarray]:
    """(R, Q) per measure, from the library's parts: the table, the positions and their intents."""
    judgments = read_qrels(qrels, keep_empty=True)
    lookup = RelevantLookup(judgments)
    table = RankTable.from_ranked(judgments, [rank_relevant(read_run(run), lookup) for run in runs])
    selection = Selection.everything(table).at_relevance_level(table, level)
    positions = binary_positions(table, selection)
    positions = positions._replace(intents=intent_positions(table, selection, level))
    return {name: parse_measure(name).compute(positions) for name in names}


def test_worked_values(tmp_path):
    qrels, run = write_text(tmp_path / "qrels", WORKED_QRELS), write_text(tmp_path / "run", WORKED_RUN)
    found = values(qrels, [run], list(WORKED_VALUES))
    for name, expected in WORKED_VALUES.items():
        assert found[name][0, 0] == pytest.approx(expected, abs=1e-7), name


MEASURES = ["err_ia@{k},{alpha}", "nerr_ia@{k},{alpha}", "alpha_dcg@{k},{alpha}", "alpha_ndcg@{k},{alpha}",
            "nrbp@{alpha},{beta}", "nnrbp@{alpha},{beta}", "ap_ia", "p_ia@{k}", "strec@{k}"]
SETTINGS = [dict(k=20, alpha=0.5, beta=0.5), dict(k=5, alpha=0.3, beta=0.9), dict(k=1, alpha=1.0, beta=0.0),
            dict(k=30, alpha=0.0, beta=0.7), dict(k=3, alpha=0.75, beta=1.0)]


@pytest.mark.parametrize("seed", range(25))
def test_every_measure_is_its_definition_on_random_collections(tmp_path, seed):
    rng = np.random.default_rng(seed)
    qrels_lines, runs = random_collection(rng)
    qrels, paths = write_collection(tmp_path, qrels_lines, runs)
    level = [None, 2.0][seed % 2]
    for setting in SETTINGS:
        names = [template.format(**setting) for template in MEASURES]
        found = values(qrels, paths, names, level)
        for run_number, lines in enumerate(runs.values()):
            judged, ranked = parse(qrels_lines, lines, level or 1.0)
            for column, qid in enumerate(read_qrels(qrels, keep_empty=True).qids):
                expected = plain_values(judged.get(qid, {}), ranked.get(qid, []), setting["alpha"], setting["beta"],
                                        setting["k"])
                for name, template in zip(names, MEASURES):
                    family = template.partition("@")[0]
                    assert found[name][run_number, column] == pytest.approx(expected[family], rel=1e-12, abs=1e-15), \
                        (name, qid, run_number)


def test_on_ad_hoc_qrels_a_query_is_one_intent(tmp_path):
    """P-IA@k is P@k, strec@k success@k, MAP-IA AP, and with alpha = 0 alpha-nDCG@k is binary nDCG@k."""
    qrels = write_text(tmp_path / "qrels", ["1 0 a 1", "1 0 b 2", "1 0 c 1", "1 0 z 0", "2 0 d 1", "2 0 e 1"])
    run = write_text(tmp_path / "run", ["1 Q0 x 1 9 r", "1 Q0 b 2 8 r", "1 Q0 a 3 7 r", "2 Q0 e 1 5 r"])
    found = values(qrels, [run], ["p_ia@2", "p@2", "strec@1", "success@1", "ap_ia", "ap", "alpha_ndcg@3,0"])
    np.testing.assert_allclose(found["p_ia@2"], found["p@2"])
    np.testing.assert_allclose(found["strec@1"], found["success@1"])
    np.testing.assert_allclose(found["ap_ia"], found["ap"], rtol=1e-15)
    binary = prefeval.evaluate(qrels, [run], ["ndcg@3"], binary_relevance=1, jobs=1)
    np.testing.assert_allclose(found["alpha_ndcg@3,0"][0], binary["ndcg@3"].to_numpy(), rtol=1e-12)


def test_the_greedy_ideal_takes_the_largest_gain_ties_to_the_larger_docid(tmp_path):
    """a and d tie at rank 1 (gain 2): d, the larger docid, goes first; then a (1 + 0.5) before b (1);
    then c and b tie (0.5): c. With alpha = 1, a and b tie at rank 2 (1 each: a's subtopic 2 is
    covered): b; then every subtopic is covered and the rest gain 0."""
    qrels = write_text(tmp_path / "qrels", WORKED_QRELS)
    judgments = read_qrels(qrels, keep_empty=True)
    table = RankTable.from_ranked(judgments, [])
    intents = intent_positions(table, Selection.everything(table))
    docids = intents.docids.tolist()
    for alpha, expected in ((0.5, ["d", "a", "c", "b"]), (0.0, ["d", "a", "c", "b"]), (1.0, ["d", "b"])):
        ranks = ideal_ranks(intents, alpha)
        order = sorted(range(len(docids)), key=lambda d: ranks[d])
        assert [docids[d] for d in order][:len(expected)] == expected, alpha
        assert sorted(ranks.tolist()) == [1.0, 2.0, 3.0, 4.0]  # every document ranked, once


def test_a_single_intent_view_is_made_from_the_binary_positions(tmp_path):
    qrels = write_text(tmp_path / "qrels", ["1 0 a 1", "1 0 b 1", "2 0 c 0"])
    run = write_text(tmp_path / "run", ["1 Q0 b 1 2 r"])
    judgments = read_qrels(qrels, keep_empty=True)
    table = RankTable.from_ranked(judgments, [rank_relevant(read_run(run), RelevantLookup(judgments))])
    positions = binary_positions(table, Selection.everything(table))
    intents = IntentPositions.single(positions)
    assert intents.num_intents.tolist() == [1, 0]
    assert intent_positions(table, Selection.everything(table)) is None


def test_eval_computes_them_on_subtopic_qrels(tmp_path):
    qrels, run = write_text(tmp_path / "qrels", WORKED_QRELS), write_text(tmp_path / "run", WORKED_RUN)
    frame = prefeval.evaluate(qrels, [run], list(WORKED_VALUES), jobs=1)
    for name, expected in WORKED_VALUES.items():
        assert frame[name].iloc[0] == pytest.approx(expected, abs=1e-7), name


def test_parameters_are_checked():
    with pytest.raises(UsageError, match="alpha must be in"):
        parse_measure("alpha_ndcg@10,1.5")
    with pytest.raises(UsageError, match="k must be in"):
        parse_measure("err_ia@0")
    assert parse_measure("alpha_nDCG(alpha=0.25)@10").name == "alpha_ndcg@10,0.25"
    assert parse_measure("nNRBP(alpha=0.3,beta=0.9)").name == "nnrbp@0.3,0.9"
    assert parse_measure("MAP-IA").name == "ap_ia" and parse_measure("strec@5").name == "strec@5"


def test_ties_other_than_docid_are_refused(tmp_path):
    qrels, run = write_text(tmp_path / "qrels", WORKED_QRELS), write_text(tmp_path / "run", WORKED_RUN)
    result = run_cli("eval", "-R", qrels, "-m", "alpha_ndcg@5", "--ties", "expected", run)
    assert result.exit_code == 2 and "reads the judgments per subtopic" in result.stderr
