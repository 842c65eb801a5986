"""trec_eval and ir_measures names, the relevance level (trec_eval's -l), and the measure catalogue."""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from conftest import QRELS, RUNS, json_lines, run_cli, table_from_positions, write_qrels, write_run

import prefeval
from prefeval.cli import main
from prefeval.engine.evaluation import Block, Evaluation
from prefeval.engine.whole import WholeCollection
from prefeval.errors import UsageError
from prefeval.measures import families, foreign, parse_measure, parse_measures
from prefeval.measures.catalogue import measure_catalogue
from prefeval.measures.request import did_you_mean, read_as, read_request, split_measure_list
from prefeval.ranking.options import RelevanceOptions

INF = math.inf


def names(text: str) -> list[str]:
    return [m.name for m in parse_measures([text])]


@pytest.mark.parametrize("text, expected", [
    # trec_eval
    ("map", ["ap"]),
    ("map_cut.10", ["ap@10"]),
    ("map_cut_10", ["ap@10"]),
    ("ndcg", ["ndcg"]),
    ("ndcg_cut.10", ["ndcg@10"]),
    ("ndcg_cut_20", ["ndcg@20"]),
    ("P.10", ["p@10"]),
    ("P_10", ["p@10"]),
    ("recall.100", ["r@100"]),
    ("recall_100", ["r@100"]),
    ("recip_rank", ["rr"]),
    ("Rprec", ["rp"]),
    ("P.5,10", ["p@5", "p@10"]),
    ("P_5,10,map_cut.5,100", ["p@5", "p@10", "ap@5", "ap@100"]),
    # ir_measures
    ("AP", ["ap"]),
    ("AP@100", ["ap@100"]),
    ("nDCG@10", ["ndcg@10"]),
    ("P@10", ["p@10"]),
    ("R@100", ["r@100"]),
    ("RR", ["rr"]),
    ("RR@10", ["rr@10"]),
    ("RBP(p=0.8)", ["rbp@0.8"]),
    ("RBP(p=0.9)@10", ["rbp@0.9,10"]),
    ("RBP(p='0.95')", ["rbp@0.95"]),
    ("RBP()@5", ["rbp@0.8,5"]),  # ir_measures' default p = 0.8, not prefeval's 0.5
    ("RBP(p=0.8),AP@10,P.5,10", ["rbp@0.8", "ap@10", "p@5", "p@10"]),
    # prefeval's own spellings are unchanged
    ("rbp@0.8,100", ["rbp@0.8,100"]),
    ("rbp", ["rbp"]),
])
def test_foreign_names_translate_to_prefeval_measures(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize("text", ["success.10", "success_10", "Success@10"])
def test_success_names(text):
    assert names(text) == ["success@10"]


@pytest.mark.parametrize("text, expected", [
    ("set_P", ["p@0"]),
    ("set_recall", ["r@0"]),
    ("SET_P,set_recall", ["p@0", "r@0"]),
    ("success.1,5,10", ["success@1", "success@5", "success@10"]),
])
def test_trec_eval_set_and_success_names(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize("measure, printed", [
    ("ap", "map"), ("ap@0", "map"), ("ap@10", "map_cut_10"), ("ndcg", "ndcg"), ("ndcg@10", "ndcg_cut_10"),
    ("p@10", "P_10"), ("p@0", "set_P"), ("r@10", "recall_10"), ("r@0", "set_recall"),
    ("rr", "recip_rank"), ("rp", "Rprec"), ("success@1", "success_1"), ("success@10", "success_10"),
    ("rr@10", None), ("success@0", None), ("rbp", None), ("trec_rbp", "rbp"), ("trec_rbp@0.8", "rbp_p=0.8"),
    ("ndcg@gains=1:3;2:9", "ndcg_1=3,2=9"), ("f@0", "set_F"), ("rpp", None),
])
def test_trec_eval_spelling_is_read_back_by_trec_eval(measure, printed):
    assert foreign.spell(parse_measure(measure), "trec_eval") == printed
    if printed is not None:
        assert [m.values for m in read_as("trec_eval", printed)] == [parse_measure(measure).values]


def test_tsv_writes_the_names_it_reads():
    args = ["eval", "-R", QRELS, "--format", "tsv", RUNS[0]]
    written = run_cli(*args, "-m", "p@0,r@0,success@1,ap@10")
    assert written.exit_code == 0, written.output
    printed = [line.split()[0] for line in written.stdout.splitlines()]
    assert printed == ["set_P", "set_recall", "success_1", "map_cut_10"]
    read = run_cli(*args, "-m", ",".join(printed))
    assert read.exit_code == 0, read.output
    assert read.stdout == written.stdout


@pytest.mark.parametrize("text, message", [
    ("recip_rank.10", "trec_eval's recip_rank takes no parameter"),
    ("map.", "trec_eval's map expects parameters after '.'"),
    ("ndcg.x=3", "trec_eval's ndcg has no parameter 'x'"),
    ("ndcg_cut_1o", "trec_eval's ndcg_cut takes numbers"),
    ("Rprec(x=1)", "has no counterpart of ir_measures' x"),
    ("nDCG(dcg='log')@10", "dcg"),
    ("RBP(0.8)", "expected parameters as name=value"),
    ("RBP(p=1.5)", "gamma must be in (0.0, 1.0)"),
    ("mapp", "unknown measure 'mapp'"),
])
def test_refused_names_say_why(text, message):
    with pytest.raises(UsageError) as caught:
        parse_measures([text])
    assert message in str(caught.value)


def test_commas_inside_parentheses_do_not_split():
    assert split_measure_list("RBP(p=0.8,rel=2)@10, ap,P.5,10") == ["RBP(p=0.8,rel=2)@10", "ap", "P.5", "10"]


@pytest.mark.parametrize("text, expected", [
    ("nDCG@10 P@5", ["ndcg@10", "p@5"]),  # ir_measures' space-separated list
    ("  nDCG@10   P@5  RR ", ["ndcg@10", "p@5", "rr"]),
    ("AP nDCG@10,20 P.5,10", ["ap", "ndcg@10", "ndcg@20", "p@5", "p@10"]),
    ("ap, ndcg , p@5 ,10", ["ap", "ndcg", "p@5", "p@10"]),  # spaces around a comma belong to it
    ("RBP(p=0.8, rel=1) ap", ["rbp@0.8,rel=1.0", "ap"]),  # spaces inside parentheses do not split
    ("RBP(p = 0.9) ap", ["rbp@0.9", "ap"]),
])
def test_spaces_separate_measures_outside_parentheses(text, expected):
    if expected is None:
        with pytest.raises(UsageError, match="relevance-level"):
            names(text)
    else:
        assert names(text) == expected
    assert prefeval.evaluate(QRELS, RUNS[:1], "nDCG@10 P@5", per_query=False).columns.tolist()[-2:] == [
        "ndcg@10", "p@5"]


def test_a_number_after_a_space_does_not_continue_a_measure():
    with pytest.raises(UsageError, match="unknown measure '10'"):
        names("p@5 10")


@pytest.mark.parametrize("text, suggestion", [
    ("ndgc@10", "did you mean ndcg@10?"),
    ("nDGC@10", "did you mean ndcg@10?"),
    ("lexiprecison", "did you mean lexiprecision, rrlexiprecision or lexiprecision_ia?"),
    ("map_cutt.10", "did you mean map_cut.10?"),
    ("recip_rnk", "did you mean recip_rank?"),
    ("preicison@5", None),
])
def test_unknown_names_get_the_closest_ones(text, suggestion):
    with pytest.raises(UsageError) as caught:
        parse_measures([text])
    message = str(caught.value)
    assert message.startswith(f"unknown measure {text!r}; ")
    if suggestion is not None:
        assert suggestion in message
    assert "valid measures include rpp, invrpp" in message


def test_the_cli_suggests_a_name_in_one_line():
    result = run_cli("eval", "-R", QRELS, "-m", "ndgc@10", RUNS[0])
    assert result.exit_code == 2 and result.stdout == ""
    assert "prefeval: error: unknown measure 'ndgc@10'; did you mean ndcg@10?" in result.stderr
    result = run_cli("eval", "-R", QRELS, "-m", "nDCG@10 P@5", RUNS[0])
    assert result.exit_code == 0, result.stderr
    assert list(json_lines(result.stdout)[-1])[-2:] == ["ndcg@10", "p@5"]


def test_every_foreign_name_reads_as_its_family():
    """Every row of every tool's table, written out with example parameters, reads as measures of its
    family through the one reading of -m (and through its tool's table alone)."""
    for module in foreign.TOOLS.values():
        for row in module.ROWS:
            if row.family is None:
                continue
            written = row.example()
            assert {type(m).family for m in parse_measures([written])} == {row.family}, written
            assert {type(m).family for m in read_as(module.TOOL, written)} == {row.family}, written


@pytest.mark.parametrize("text, expected", [
    ("P(rel=2)@10", "p@10,rel=2.0"),
    ("RBP(p=0.8,rel=2)", "rbp@0.8,rel=2.0"),
    ("nDCG(dcg='exp-log2')@10", "ndcg_exp@10"),
    ("AP(judged_only=True)", "ap@judged_only=1"),
    ("nDCG(gains={0:0,1:1,2:3})@10", "ndcg@10,gains=2:3"),
])
def test_ir_measures_parameters_are_prefeval_keyword_parameters(text, expected):
    assert parse_measure(text).name == expected


def test_trec_eval_and_ir_measures_names_give_the_same_output_in_eval():
    def output(*measures):
        args = ["eval", "-q", "-R", QRELS, *(arg for m in measures for arg in ("-m", m)), *RUNS]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        return result.stdout

    prefeval_names = output("ap", "ndcg@10", "p@10")
    assert output("map", "ndcg_cut.10", "P_10") == prefeval_names
    assert output("AP", "nDCG@10", "P@10") == prefeval_names
    assert list(orjson.loads(prefeval_names.splitlines()[0]))[-3:] == ["ap", "ndcg@10", "p@10"]


# --- the relevance level -------------------------------------------------------------------------

def level_values(level, measures, runs, grades):
    """{measure: values} of the first block (metrics: run 0; preferences: pair (0, 1))."""
    table = table_from_positions(runs, grades)
    relevance = RelevanceOptions(relevance_level=level)
    evaluation = Evaluation(WholeCollection(table), measures=parse_measures(measures), relevance=relevance)
    blocks = [r for r in evaluation.results() if isinstance(r, Block)]
    values = {name: np.concatenate([b.metrics[name][0] for b in blocks]) for name in blocks[0].metrics}
    values.update({name: np.concatenate([b.preferences[name][0] for b in blocks])
                   for name in blocks[0].preferences if name not in values})
    return [qid for b in blocks for qid in b.qids], values


def test_binary_measures_use_the_level_and_graded_ones_every_positive_grade():
    grades = [[2, 1, 2]]
    x, y = [[1, 2, 5]], [[3, 1, 2]]
    qids, at_two = level_values(2, ["ap", "p@2", "rr", "ndcg", "rpp", "lexiprecision"], [x, y], grades)
    qids_all, at_one = level_values(None, ["ap", "ndcg", "rpp", "lexiprecision"], [x, y], grades)
    assert qids == qids_all == ["q0"]
    # grade >= 2: x ranks them at 1 and 5, y at 3 and 2
    assert at_two["ap"][0] == pytest.approx((1 / 1 + 2 / 5) / 2)
    assert at_two["p@2"][0] == pytest.approx(1 / 2)
    assert at_two["rr"][0] == 1.0
    assert at_two["lexiprecision"][0] == 1  # x = (1, 5), y = (2, 3): x first at i = 1
    # graded measures do not change with the level
    assert at_two["ndcg"][0] == at_one["ndcg"][0]
    assert at_two["rpp"][0] == at_one["rpp"][0]
    assert at_one["ap"][0] == pytest.approx((1 / 1 + 2 / 2 + 3 / 5) / 3)


def test_a_query_without_a_document_at_the_level_scores_0_on_binary_measures_only():
    """As in trec_eval -l: the level never drops a query; binary measures find nothing relevant on
    it, graded ones keep every positive grade, and a preference is a tie."""
    grades = [[1, 1], [2, 1]]
    qids, values = level_values(2, ["ap", "ndcg", "rpp", "lexiprecision"], [[[1, 2], [2, 1]], [[2, 1], [1, 2]]],
                                grades)
    assert qids == ["q0", "q1"]
    assert values["ap"].tolist() == [0.0, 0.5]
    assert values["ndcg"].tolist() == [1.0, pytest.approx((1 + 2 / np.log2(3)) / (2 + 1 / np.log2(3)))]
    assert values["lexiprecision"].tolist() == [0.0, -1.0]  # q0: no document of grade 2, a tie


def test_level_with_label_sampling_never_leaves_an_empty_query(tmp_path):
    rng = np.random.default_rng(3)
    judgments = {f"q{q}": {f"d{d}": int(rng.choice([0, 1, 1, 2])) for d in range(12)} for q in range(20)}
    run = {qid: {f"d{d}": float(rng.random()) for d in range(12)} for qid in judgments}
    frame = prefeval.evaluate(judgments, {"a": run, "b": dict(reversed(list(run.items())))}, ["ap", "rr", "ndcg"],
                              relevance_level=2, label_fraction=0.3, samples=5, seed=1)
    assert np.isfinite(frame[["ap", "rr", "ndcg"]].to_numpy()).all()
    metric_rows = frame[frame["type"] == "metric"] if "type" in frame else frame
    assert len(metric_rows) == 5 * 2 * 20  # every sample keeps every query, for both runs
    assert (metric_rows["ndcg"] > 0).all()  # every run retrieves every judged document


def test_relevance_level_must_be_positive():
    with pytest.raises(UsageError, match="relevance level must be > 0"):
        prefeval.evaluate(QRELS, RUNS[:1], ["ap"], relevance_level=0)


@pytest.mark.parametrize("seed", range(8))
def test_relevance_level_agrees_with_trec_eval_l(tmp_path, seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from test_trec_eval_oracle import random_collection

    qrels, runs = random_collection(seed)
    qrels_path = write_qrels(tmp_path / "qrels", qrels)
    run_paths = [write_run(tmp_path / f"run{n}", run) for n, run in enumerate(runs)]
    ours_to_theirs = {"ap": "map", "p@10": "P_10", "r@10": "recall_10", "rr": "recip_rank", "rp": "Rprec",
                      "ndcg": "ndcg", "ndcg@10": "ndcg_cut_10"}
    ours = prefeval.evaluate(qrels_path, run_paths, list(ours_to_theirs), relevance_level=2)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P", "recall", "recip_rank", "Rprec", "ndcg", "ndcg_cut"},
                                               relevance_level=2)
    compared = 0
    for n, run in enumerate(runs):
        rows = ours[ours["run"] == f"run{n}"].set_index("qid")
        for qid, values in evaluator.evaluate(run).items():
            if not any(grade >= 1 for grade in qrels[qid].values()):
                assert qid not in rows.index  # no relevant document: dropped (the reference's convention)
                continue
            for name, theirs in ours_to_theirs.items():
                assert rows.loc[qid, name] == pytest.approx(values[theirs], abs=1e-9), (seed, n, qid, name)
                compared += 1
    assert compared > 0


# --- the catalogue and `prefeval measures` --------------------------------------------------------

def test_catalogue_describes_every_family_once():
    catalogue = measure_catalogue()
    assert [m["name"] for m in catalogue] == [f.family for f in families()]
    ap = next(m for m in catalogue if m["name"] == "ap")
    assert ap == {
        "name": "ap", "syntax": "ap[@k]", "kind": "metric", "relevance": "binary", "aliases": [],
        "parameters": [
            {"name": "k", "type": "int", "default": 0, "range": "[0, 1000000000]",
             "meaning": "rank cut-off; 0 means none"}
        ],
        "trec_eval": ["map", "map_cut[.k,...]"], "ir_measures": ["AP[@k]"], "ndeval": [],
        "description": ap["description"], "citation": ap["citation"],
    }
    kinds = {m["name"]: (m["kind"], m["relevance"]) for m in catalogue}
    assert kinds["ndcg"] == ("metric", "graded") and kinds["rpp"] == ("preference", "graded")
    assert kinds["lexirecall"] == ("preference", "binary") and kinds["rbp"] == ("metric", "binary")
    assert all(m["description"] and m["citation"] for m in catalogue)
    names = {m["name"]: m for m in catalogue}
    assert names["p"]["trec_eval"] == ["P[.k,...]", "set_P"]
    assert names["r"]["trec_eval"] == ["recall[.k,...]", "set_recall"]
    assert names["rpp"]["citation"] == "Diaz and Ferraro, SIGIR 2022, doi:10.1145/3477495.3532033"


def test_measures_command_lists_json_and_table():
    result = run_cli("measures", "--json")
    assert result.exit_code == 0
    records = json_lines(result.stdout)
    assert records == measure_catalogue()
    table = run_cli("measures")
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    header = ["measure", "kind", "relevance", "defaults", "aliases", "trec_eval", "ir_measures", "ndeval",
              "description", "citation"]
    assert lines[0].split() == header
    assert set(lines[1]) == {"-", " "}  # the rule under the header (prefeval.report.tables)
    assert [line.split()[0] for line in lines[2:]] == [m["syntax"] for m in records]
    rbp = next(line for line in lines if line.startswith("rbp"))
    assert "gamma=0.5, k=0" in rbp and "RBP(p=gamma)[@k]" in rbp and "Moffat and Zobel" in rbp


def test_aggregate_accepts_any_name_of_a_measure_in_the_lines(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    args = ["eval", "-q", "-R", QRELS, "-m", "rpp,ap,p@5,10", "-o", str(prefs), *RUNS]
    assert CliRunner().invoke(main, args).exit_code == 0

    def keys(*measures):
        result = run_cli("aggregate", "-P", str(prefs), *(a for m in measures for a in ("-m", m)))
        assert result.exit_code == 0, result.output
        return list(orjson.loads(result.stdout))[2:]

    assert keys("map", "P.5,10") == keys("ap", "p@5,10") == keys("AP", "p@5", "P_10") == ["ap", "p@5", "p@10"]
    result = run_cli("aggregate", "-P", str(prefs), "-m", "ndcg_cut.10")
    assert result.exit_code == 2
    assert result.stderr.startswith("prefeval: error: measure(s) ndcg@10 not in ")


def typos(name: str) -> list[str]:
    """A name with one character dropped, doubled or replaced by its neighbour, and two swapped."""
    found = []
    for i in range(len(name)):
        found += [name[:i] + name[i + 1:], name[:i] + name[i] + name[i:]]
        if i + 1 < len(name):
            found.append(name[:i] + name[i + 1] + name[i] + name[i + 2:])
            found.append(name[:i] + name[i + 1] + name[i + 1:])
    return found


def test_every_suggestion_parses():
    """Whatever is mistyped (every family, alias and foreign name, with a cut-off or parameters after
    it, mistyped one character at a time), each name that "did you mean" offers reads as a measure."""
    heads = [f.family for f in families()] + [a for f in families() for a in f.aliases] + foreign.tool_names()
    tails = ["", "@10", ".10", "_10", "(p=0.8)@10", "@0.8,100"]
    offered = 0
    for head in heads:
        for tail in tails:
            for typo in typos(head):
                for suggestion in did_you_mean(typo + tail):
                    parse_measures([suggestion])  # raises if it does not parse
                    offered += 1
    assert offered > 1000


@pytest.mark.parametrize("typed, offered, refused", [
    ("map@10", "ap@10", "map@10"),  # trec_eval's map takes no @: prefeval's ap@10 does
    ("precision@10", None, "lexiprecision@10"),  # lexiprecision takes no parameter
])
def test_suggestions_that_would_be_refused_are_not_offered(typed, offered, refused):
    suggestions = did_you_mean(typed)
    assert refused not in suggestions
    if offered is not None:
        assert offered in suggestions


# --- trec_eval's rules on its parameters (issue 24, item 3) ------------------------------------------

@pytest.mark.parametrize("text, reason", [
    ("P.0", "Negative cutoff detected"),
    ("success.0", "Negative cutoff detected"),
    ("P.5,0", "Negative cutoff detected"),
    ("map_cut.5,5", "duplicate cutoffs detected"),
    ("iprec_at_recall.0.5,0.50", "duplicate cutoffs detected"),
    ("utility.1,2", "improper number of coefficients"),
    ("utility.1,-1,0,0,5", "improper number of coefficients"),
])
def test_parameters_trec_eval_refuses_are_refused_with_its_reason(text, reason):
    with pytest.raises(UsageError, match=f"^{text}: trec_eval refuses it: {reason}"):
        parse_measures([text])


def test_a_trec_eval_measure_takes_its_first_parameters_in_place_of_its_defaults():
    """As trec_eval reads -m: the first parameters given to a measure are its parameters, whatever
    its defaults (from its bare name or a nickname) and whatever is given after them (with a note)."""
    def printed(*texts):
        return [item.printed for item in read_request(texts).items if item.row in ("P", "relstring")]

    assert printed("P.5", "P.10") == ["P_5"]
    assert printed("P", "P.5") == printed("P.5", "P") == ["P_5"]
    assert printed("official", "P.10,5") == ["P_10", "P_5"]  # listed as given; the layout sorts them
    assert printed("all_trec", "relstring.20")[-1] == "relstring_20"
    assert "relstring" not in printed("all_trec", "relstring.20")
    # prefeval's own names add measures, trec_eval's rule is for trec_eval's names
    assert [m.name for m in parse_measures(["P.5", "p@10"])] == ["p@5", "p@10"]


def test_the_trec_eval_layout_lists_a_measure_s_values_in_increasing_order():
    result = run_cli("eval", "--format", "trec_eval", "-m", "P.10,5", "-m", "iprec_at_recall.0.5,0.2", "-R",
                     QRELS, RUNS[0])
    assert [line.split()[0] for line in result.stdout.splitlines()] == [
        "iprec_at_recall_0.20", "iprec_at_recall_0.50", "P_5", "P_10"]


def test_parameters_given_again_are_noted():
    result = run_cli("eval", "--format", "trec_eval", "-m", "P.5", "-m", "P.10", "-R", QRELS, RUNS[0])
    assert result.exit_code == 0 and [line.split()[0] for line in result.stdout.splitlines()] == ["P_5"]
    assert "P.10: trec_eval's P takes its parameters from where they are first given (P.5)" in result.stderr
