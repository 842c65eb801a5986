"""Preference judgments (``--rel-format prefs``, ``qrels_prefs``, ``pairs``) and trec_eval's
``prefs_*`` measures: trec_eval's outputs on prefeval's own collection (``tests/data/trec_eval/prefs``,
always), trec_eval's quicktest and random collections against the binary (with
``PREFEVAL_TREC_EVAL``), the measures against a brute-force count on random collections, compat on
preferences, every output format, and the errors."""

from __future__ import annotations

import gzip
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, run_cli, write_text
from contract import assert_one_line_error
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from judged import judged, preference_lines, preference_qrels, ranked, runs_over
from prefs_cases import CASES, QUICKTEST, pairs_as_prefs, write_collection

import prefeval
from prefeval.errors import InputError, UsageError
from prefeval.measures import parse_measure, parse_measures

DATA = ROOT / "tests" / "data" / "trec_eval" / "prefs"
TREC_EVAL = os.environ.get("PREFEVAL_TREC_EVAL")
needs_binary = pytest.mark.skipif(not TREC_EVAL, reason="set PREFEVAL_TREC_EVAL to a trec_eval 10.0 binary")
ALL_PREFS = parse_measures(["all_prefs"])[1:]  # without num_q


def prefeval_output(arguments: list[str], folder: Path) -> bytes:
    """What ``prefeval eval ARGUMENTS`` prints, the files named relative to ``folder``."""
    names = set(os.listdir(folder))
    result = run_cli("eval", "--quiet", *(str(folder / arg) if arg in names else arg for arg in arguments))
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


# --- trec_eval's outputs ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("prefs")
    write_collection(folder)
    return folder


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_outputs_are_trec_evals_on_prefevals_collection(case, collection):
    """The outputs trec_eval 10.0 printed for each command line (kept in tests/data/trec_eval/prefs),
    byte for byte."""
    expected = (DATA / f"{case.name}.out").read_bytes()
    assert prefeval_output(case.prefeval_arguments(), collection) == expected


@needs_binary
def test_kept_outputs_are_the_binarys():
    """The outputs kept are what the binary prints now (tests/data/trec_eval/prefs/regenerate.py)."""
    sys.path.insert(0, str(DATA))
    try:
        from regenerate import trec_eval_outputs
    finally:
        sys.path.remove(str(DATA))
    for name, output in trec_eval_outputs(TREC_EVAL).items():
        assert (DATA / name).read_bytes() == output, name


@needs_binary
@pytest.mark.parametrize("command", QUICKTEST, ids=lambda command: command[2])
def test_trec_evals_quicktest_commands_9_to_13(command):
    """trec_eval's quicktest (its Makefile) with -R prefs, qrels_prefs and qrels_jg: prefeval prints
    the expected outputs of its test folder, and the binary's."""
    rel_format, options, judgments, run, expected = command
    folder = Path(TREC_EVAL).resolve().parent / "test"
    if not (folder / expected).exists():
        pytest.skip(f"trec_eval's test folder not found at {folder}")
    ours = prefeval_output(["--format", "trec_eval", "--rel-format", rel_format, *options, "-R", judgments, run],
                           folder)
    assert ours == (folder / expected).read_bytes()
    theirs = subprocess.run([TREC_EVAL, "-R", rel_format, *options, judgments, run], cwd=folder, capture_output=True)
    assert ours == theirs.stdout


@needs_binary
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_collections_against_the_binary(data, tmp_path):
    """Random preference judgments (several groups and sub-groups, values 0 to 3) and runs with ties:
    every prefs_* measure of every query as trec_eval prints it, with and without a rank cut-off."""
    lines = data.draw(preference_lines())
    documents = {}
    for qid, _, _, doc, _ in lines:
        documents.setdefault(qid, [])
        documents[qid] += [] if doc in documents[qid] else [doc]
    runs = data.draw(runs_over({qid: docs for qid, docs in documents.items()}, 1))
    run = [line for line in runs[0]]
    run += [(qid, f"{qid}-u9", 0.5) for qid in documents if qid not in {line[0] for line in run}]  # every query
    write_text(tmp_path / "judgments.txt", [" ".join(str(field) for field in line) for line in lines])
    write_text(tmp_path / "run.txt", [f"{qid} Q0 {doc} 0 {score} t" for qid, doc, score in run])
    options = ["-q", "-m", "all_prefs"] + (["-M", "2"] if data.draw(st.booleans()) else [])
    theirs = subprocess.run([TREC_EVAL, "-R", "prefs", *options, "judgments.txt", "run.txt"], cwd=tmp_path,
                            capture_output=True)
    assert theirs.returncode == 0, theirs.stderr
    ours = prefeval_output(["--format", "trec_eval", "--rel-format", "prefs",
                            *("--topk" if option == "-M" else option for option in options), "-R", "judgments.txt",
                            "run.txt"], tmp_path)
    assert ours == theirs.stdout


@needs_binary
def test_robust03_read_as_preferences_against_the_binary(tmp_path):
    """robust03's qrels read as preferences (8.7 million of them, a group per query, grades 0 to 2)
    and two of its runs (decompressed, as trec_eval reads plain files), per query."""
    from conftest import robust03_or_skip

    robust03 = robust03_or_skip()
    for name in sorted(os.listdir(robust03 / "runs"))[:2]:
        run = tmp_path / name.removesuffix(".gz")
        run.write_bytes(gzip.decompress((robust03 / "runs" / name).read_bytes()))
        qrels = str(robust03 / "qrels.txt")
        theirs = subprocess.run([TREC_EVAL, "-R", "qrels_prefs", "-q", "-m", "all_prefs", qrels, str(run)],
                                capture_output=True)
        ours = run_cli("eval", "--quiet", "--format", "trec_eval", "--rel-format", "qrels_prefs", "-q", "-m",
                       "all_prefs", "-R", qrels, str(run))
        assert ours.stdout_bytes == theirs.stdout, name


# --- the measures against a count by hand -----------------------------------------------------------

def closure(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    closed = set(pairs)
    while True:
        more = {(a, d) for a, b in closed for c, d in closed if b == c} - closed
        if not more:
            return closed
        closed |= more


def by_hand(lines, run, topk=None) -> dict[str, dict[str, float]]:
    """prefs_simp, prefs_pair and the like of one run, per query, counted pair by pair."""
    values = {}
    for qid in dict.fromkeys(line[0] for line in lines):
        mine = [line for line in lines if line[0] == qid]
        ranking = sorted(((-score, doc) for q, doc, score in run if q == qid))  # equal scores: docid ascending
        ranking = [doc for _, doc in ranking][:topk]
        place = {doc: rank for rank, doc in enumerate(ranking)}
        groups = {}
        for _, group, sub, doc, value in mine:
            groups.setdefault(group, {}).setdefault(sub, {})[doc] = value
        counts = {}  # (winner, loser) -> number of groups
        areas = []
        for subs in groups.values():
            stated = {(a, b) for docs in subs.values() for a in docs for b in docs if docs[a] > docs[b]}
            relation = closure(stated)
            for pair in relation:
                counts[pair] = counts.get(pair, 0) + 1
            area = [0] * 5
            for a, b in relation:
                if a in place and b in place:
                    area[0 if place[a] < place[b] else 1] += 1
                else:
                    area[2 if a in place else 3 if b in place else 4] += 1
            areas.append(area)
        total = [sum(column) for column in zip(*areas)] if areas else [0] * 5
        shares, kinds = [], []
        for a, b in {tuple(sorted(pair)) for pair in counts}:
            first, second = sorted((a, b), key=lambda doc: (place.get(doc, math.inf), doc))
            shares.append(counts.get((first, second), 0) / (counts.get((a, b), 0) + counts.get((b, a), 0)))
            kinds.append(0 if second in place else 1 if first in place else 2)

        def ratio(top, bottom):
            return top / bottom if bottom else 0.0

        def group_mean(of, areas=areas):
            total_ = sum(ratio(*of(area)) for area in areas)
            return total_ / len(areas) if total_ > 0 else 0.0

        values[qid] = {
            "prefs_num_prefs_poss": sum(total), "prefs_num_prefs_ful": total[0] + total[2],
            "prefs_num_prefs_ful_ret": total[0],
            "prefs_simp": ratio(total[0] + total[2], sum(total)),
            "prefs_simp_ret": ratio(total[0], total[0] + total[1]),
            "prefs_simp_imp": ratio(total[0] + total[2], sum(total[:4])),
            "prefs_pair": ratio(sum(s for s, k in zip(shares, kinds) if k < 2), len(shares)),
            "prefs_pair_ret": ratio(sum(s for s, k in zip(shares, kinds) if k == 0), kinds.count(0)),
            "prefs_pair_imp": ratio(sum(s for s, k in zip(shares, kinds) if k < 2), kinds.count(0) + kinds.count(1)),
            "prefs_avgjg": group_mean(lambda area: (area[0] + area[2], sum(area))),
            "prefs_avgjg_ret": group_mean(lambda area: (area[0], area[0] + area[1])),
            "prefs_avgjg_imp": group_mean(lambda area: (area[0] + area[2], sum(area[:4]))),
        }
    return values


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_measures_count_the_preferences_as_by_hand(data):
    """prefs_simp, prefs_pair, prefs_avgjg (and their _ret, _imp) and the counts, against a count pair
    by pair of the closed preferences of each group, on random judgments and runs with ties."""
    lines = data.draw(preference_lines())
    documents = {}
    for qid, _, _, doc, _ in lines:
        documents.setdefault(qid, [])
        documents[qid] += [] if doc in documents[qid] else [doc]
    runs = data.draw(runs_over(documents, 2))
    topk = data.draw(st.sampled_from([None, 1, 2, 4]))
    table = ranked(preference_qrels(lines), runs)
    for measure in ALL_PREFS:
        if "rnonrel" in measure.name:
            continue  # its recalculation is checked against the binary
        values = measure.compute(judged(table, topk))
        for r, run in enumerate(runs):
            expected = by_hand(lines, run, topk)
            got = dict(zip(table.qids, values[r]))
            for qid in table.qids:
                assert got[qid] == pytest.approx(expected[qid][measure.name], abs=1e-12), (measure.name, qid)


def test_a_hand_counted_example():
    """One group of two sub-groups (a > b; b > c): a > c by transitivity; the run a, c, then b below
    an unjudged one, and d (a second group's, d > a) not retrieved."""
    lines = [("q", "g1", "s1", "a", 2), ("q", "g1", "s1", "b", 1), ("q", "g1", "s2", "b", 5), ("q", "g1", "s2", "c", 0),
             ("q", "g2", "s1", "d", 1), ("q", "g2", "s1", "a", 0)]
    run = [("q", "a", 4.0), ("q", "c", 3.0), ("q", "x", 2.0), ("q", "b", 1.0)]
    table = ranked(preference_qrels(lines), [run])
    values = {m.name: float(m.compute(judged(table))[0, 0]) for m in ALL_PREFS}
    # g1: a>b (A1), b>c (A2: c above b), a>c (A1); g2: d>a (A4)
    assert values["prefs_num_prefs_poss"] == 4 and values["prefs_num_prefs_ful"] == 2
    assert values["prefs_simp"] == 0.5 and values["prefs_simp_ret"] == 2 / 3
    assert values["prefs_avgjg"] == (2 / 3 + 0) / 2
    assert values["prefs_pair"] == 2 / 4  # four pairs, each ordered by one group


# --- compat on preferences ---------------------------------------------------------------------------

def test_compat_on_a_qrels_read_as_preferences_is_compat_on_the_qrels(tmp_path):
    """A qrels_prefs of one group per query ranks the documents as their grades do: compat is compat."""
    qrels = write_text(tmp_path / "qrels", ["1 0 a 2", "1 0 b 1", "1 0 c 0", "1 0 d 1", "2 0 e 1", "2 0 f 0"])
    run = write_text(tmp_path / "run", ["1 Q0 b 1 3 t", "1 Q0 x 2 2 t", "1 Q0 a 3 2 t", "2 Q0 f 1 1 t", "2 Q0 e 1 1 t"])
    measures = ["compat", "compat@0.5,0"]
    plain = prefeval.evaluate(qrels, [run], measures, conventions="trec_eval")
    read = prefeval.evaluate(qrels, [run], measures, conventions="trec_eval", rel_format="qrels_prefs")
    assert (plain[measures].to_numpy() == read[measures].to_numpy()).all()
    assert plain["compat"].between(0, 1).all() and plain["compat"].iloc[0] < 1


def test_compat_averages_over_the_groups_and_refuses_a_partial_order(tmp_path):
    """compat@0.5,0 (RBO, not normalised) over two pairwise lines that disagree on a run a, b: the
    line preferring a has the ideal a, b (RBO (1 + 0.5 · 2/2) / 1.5 = 1), the other b, a (RBO
    (0 + 0.5 · 2/2) / 1.5 = 1/3); compat is their mean. A group of two sub-groups a > b and c > d
    leaves a and d unordered though a is above more documents: not a ranking with ties."""
    pairs = write_text(tmp_path / "pairs", ["1 a b a", "1 a b b"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 2 t", "1 Q0 b 2 1 t"])
    frame = prefeval.evaluate(pairs, [run], ["compat@0.5,0"], rel_format="pairs")
    assert frame["compat@0.5,0"].iloc[0] == pytest.approx((1 + 1 / 3) / 2)
    partial = write_text(tmp_path / "prefs", ["1 g s1 a 2", "1 g s1 b 1", "1 g s2 c 2", "1 g s2 d 1"])
    with pytest.raises(InputError, match="group 'g' of query '1' leaves 'a' and 'd' unordered"):
        prefeval.evaluate(partial, [run], ["compat"], rel_format="prefs")


# --- every output format, and the measures each kind reads --------------------------------------------

@pytest.mark.parametrize("fmt", ["jsonl", "tsv", "table", "markdown", "latex", "trec_eval"])
def test_every_format_shows_the_measures_of_preferences(fmt, collection):
    arguments = ["--format", fmt, "--rel-format", "pairs", "-m", "prefs_simp,prefs_pair,num_q", "-R", "pairs.txt",
                 "run_a", "run_b"]
    if fmt == "trec_eval":
        arguments.remove("run_b")
    output = prefeval_output(arguments, collection).decode()
    assert "prefs" in output and "simp" in output and "nan" not in output.lower() and "null" not in output


@pytest.mark.parametrize(("arguments", "fragments"), [
    (["--format", "ir_measures", "--rel-format", "prefs", "-m", "prefs_simp"], ["ir_measures has no measures"]),
    (["--rel-format", "prefs", "-m", "ap"], ["ap reads grades"]),
    (["--rel-format", "pairs", "-m", "rpp"], ["rpp compares the positions of relevant documents"]),
    (["--rel-format", "qrels_prefs", "-m", "map_avgjg"], ["ap_avgjg reads judgment groups"]),
    (["-m", "prefs_simp"], ["prefs_simp reads preferences"]),
    (["--rel-format", "prefs"], ["name its measures with -m"]),
    (["--rel-format", "prefs", "-m", "prefs_simp", "--ties", "expected"], ["--ties expected applies to qrels"]),
    (["--rel-format", "prefs", "-m", "prefs_simp", "--engine", "stream"], ["read in memory"]),
    (["--rel-format", "prefs", "-m", "prefs_simp", "-b", "1"], ["-b and -f map grades"]),
    (["--rel-format", "prefs", "-m", "prefs_simp", "--label_fraction", "0.5"], ["--label_fraction"]),
    (["--rel-format", "prefs", "--format", "trec_eval", "-m", "prefs_simp", "-m", "relstring"], ["relstring"]),
])
def test_what_preferences_cannot_give_is_refused_in_one_line(arguments, fragments, collection):
    judgments = "qrels_prefs.txt" if "qrels_prefs" in arguments else "prefs.txt"
    result = run_cli("eval", *arguments, "-R", str(collection / judgments), str(collection / "run_a"))
    assert_one_line_error(result, 2, *fragments)


@pytest.mark.filterwarnings("ignore::prefeval.runtime.notes.Note")
def test_the_python_api_reads_every_kind(collection):
    frame = prefeval.evaluate(str(collection / "prefs.txt"), [str(collection / "run_a")], ["prefs_simp", "prefs_pair"],
                              rel_format="prefs", per_query=False)
    assert list(frame["qid"]) == ["all"] and frame["prefs_simp"].between(0, 1).all()
    pairs = prefeval.compare(str(collection / "pairs.txt"), [str(collection / "run_a"), str(collection / "run_b")],
                             "prefs_simp", rel_format="pairs")
    assert set(pairs.columns) >= {"runi", "runj", "qid", "prefs_simp"}
    with pytest.raises(UsageError, match="read from a file"):
        prefeval.evaluate({"q": {"d": 1}}, [str(collection / "run_a")], "prefs_simp", rel_format="prefs")
    with pytest.raises(UsageError, match="unknown judgment format"):
        prefeval.evaluate(str(collection / "prefs.txt"), [str(collection / "run_a")], "prefs_simp", rel_format="x")


def test_level_is_noted_and_changes_nothing(collection):
    args = ["--format", "trec_eval", "--rel-format", "prefs", "-q", "-m", "all_prefs", "-R",
            str(collection / "prefs.txt"), str(collection / "run_a")]
    plain, leveled = run_cli("eval", *args), run_cli("eval", "-l", "2", *args)
    assert leveled.stdout_bytes == plain.stdout_bytes
    assert "-l has no effect" in leveled.stderr


def test_judged_only_changes_nothing(collection):
    """trec_eval's -J: preferences rank the judged documents only already."""
    args = ["--format", "trec_eval", "--rel-format", "prefs", "-q", "-m", "all_prefs", "--topk", "3", "-R",
            str(collection / "prefs.txt"), str(collection / "run_a")]
    assert run_cli("eval", "-J", *args).stdout_bytes == run_cli("eval", *args).stdout_bytes


def test_a_pairwise_file_is_its_conversion_to_prefs(collection, tmp_path):
    """Each line a group of one sub-group, the winner 2 and the other 1 (the conversion trec_eval's
    comments describe): the same values, query by query, as the converted prefs file."""
    pairs_as_prefs(collection / "pairs.txt", tmp_path / "converted")
    arguments = ["--format", "trec_eval", "-q", "-m", "all_prefs", "-R"]
    run = str(collection / "run_a")
    assert run_cli("eval", "--rel-format", "pairs", *arguments, str(collection / "pairs.txt"), run).stdout_bytes == \
        run_cli("eval", "--rel-format", "prefs", *arguments, str(tmp_path / "converted"), run).stdout_bytes


def test_disagreeing_lines_are_groups_that_disagree(tmp_path):
    """Two lines prefer a, one b: prefs_pair gives the run that puts a first 2/3, prefs_simp 2/3 too;
    no error, since each line is a group of its own."""
    pairs = write_text(tmp_path / "pairs", ["1 a b a", "1 b a a", "1 a b b", "# a comment", "1 a c c"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 2 t", "1 Q0 b 2 1 t"])
    frame = prefeval.evaluate(pairs, [run], ["prefs_pair", "prefs_simp", "prefs_num_prefs_poss"], rel_format="pairs")
    row = frame.iloc[0]
    assert row["prefs_num_prefs_poss"] == 4
    assert row["prefs_simp"] == pytest.approx(2 / 4)  # a>b twice fulfilled, b>a not, c>a not (c unretrieved)
    assert row["prefs_pair"] == pytest.approx((2 / 3 + 0) / 2)


# --- errors ------------------------------------------------------------------------------------------

PREFS_ERRORS = [
    (["1 g s d1 1", "1 g s d2"], 2, ["expected 5 fields (qid jg jsg docid value), found 4"]),
    (["1 g s d1 1", "1 g s d2 x"], 2, ["value 'x' is not a number"]),
    (["1 g s d1 nan"], 1, ["value 'nan' is not a number"]),
    (["1 g s d1 inf"], 1, ["out of range"]),
    (["1 g s d1 1", "1 g s d2 -1"], 2, ["value -1 is negative"]),
    (["1 g s d1 1", "1 g s d1 2"], 2, ["document 'd1' is twice in sub-group 's' of judgment group 'g' of query '1'",
                                       "first on line 1"]),
    (["1 g s1 a 2", "1 g s1 b 1", "1 g s2 b 2", "1 g s2 a 1"], None,
     ["judgment group 'g' of query '1' prefers", "'a'", "'b'", "Pref inconsistency"]),
    (["1 g s1 a 2", "1 g s1 b 1", "1 g s2 b 2", "1 g s2 c 1", "1 g s3 c 2", "1 g s3 a 1"], None,
     ["judgment group 'g' of query '1' prefers"]),
    (["1 g s1 a 0", "1 g s1 b 1", "1 g s2 a 2"], 3,
     ["document 'a' has value 0 (not relevant) on line 1 and 2 on line 3"]),
    (["all g s a 1"], 1, ["a query is named 'all'"]),
    (["# only a comment"], None, ["no prefs lines"]),
    (["1 g s a 1\r", "1 g s b 0\rx"], 2, ["carriage return"]),
]


@pytest.mark.parametrize(("lines", "line", "fragments"), PREFS_ERRORS)
def test_a_malformed_prefs_file_is_one_line_naming_file_and_line(lines, line, fragments, tmp_path):
    path = tmp_path / "judgments"
    path.write_bytes("\n".join(lines).encode() + b"\n")
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "prefs", "-m", "prefs_simp", "-R", str(path), run)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert_one_line_error(result, 1, where, *fragments)


@pytest.mark.parametrize(("lines", "line", "fragments"), [
    (["1 a b a", "1 a b"], 2, ["expected 4 fields (qid docA docB winner), found 3"]),
    (["1 a b c"], 1, ["the winner 'c' is neither docA nor docB"]),
    (["1 a a a"], 1, ["document 'a' is compared with itself"]),
    (["1 a b a x"], 1, ["expected 4 fields"]),
])
def test_a_malformed_pairwise_file_is_one_line_naming_file_and_line(lines, line, fragments, tmp_path):
    path = write_text(tmp_path / "pairs", lines)
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "pairs", "-m", "prefs_simp", "-R", path, run)
    assert_one_line_error(result, 1, f"{path}:{line}: ", *fragments)


def test_a_malformed_qrels_prefs_is_one_line(tmp_path):
    path = write_text(tmp_path / "qrels", ["1 0 a 1", "1 0 b 1 2"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "qrels_prefs", "-m", "prefs_simp", "-R", path, run)
    assert_one_line_error(result, 1, f"{path}:2: ", "expected 4 fields (qid jg docid value), found 5")


def test_a_missing_file_is_one_line(tmp_path):
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "prefs", "-m", "prefs_simp", "-R", str(tmp_path / "nothing"), run)
    assert_one_line_error(result, 1, "nothing")


def test_measures_are_registered_with_trec_evals_names():
    assert [m.name for m in parse_measures(["prefs"])] == ["num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                                                          "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
                                                          "prefs_avgjg"]
    assert parse_measure("prefs_avgjg_Rnonrel_ret").family == "prefs_avgjg_rnonrel_ret"
    assert not any(m.family.startswith("prefs") for m in parse_measures(["all_trec"]))
    assert np.isinf(parse_measure("prefs_num_prefs_poss").bounds[1])
