"""``prefeval trec_eval``: trec_eval 10.0's command line, and its output byte for byte.

Without the binary: trec_eval's outputs on prefeval's own collection and on the examples are kept in
``tests/data/trec_eval/`` (``tests/trec_eval_cases.py`` says which command lines; ``regenerate.py``
there remakes them from a binary), and robust03's under the oracle test's option sets; each is
compared with what ``prefeval trec_eval`` prints on every run. Then the command line as glibc's
``getopt_long`` reads trec_eval's, its translation into ``prefeval eval``'s, trec_eval's exit codes,
the z-scores (file and arithmetic) and the measures trec_eval 10.0 adds (yaap, dcg, ideal_dcg,
11pt_avg's levels), on values computed by hand. ``tests/test_trec_eval_oracle.py`` checks the kept
outputs and the exit codes against the binary when ``PREFEVAL_TREC_EVAL`` names one.
"""

from __future__ import annotations

import lzma
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import QRELS, ROBUST03, json_lines, robust03_or_skip, run_cli, write_text
from contract import RUN, assert_one_line_error
from trec_eval_cases import (
    CASES,
    DATA,
    ROBUST03_OPTION_SETS,
    ROBUST03_RUNS_OF,
    robust03_expected,
    write_collection,
)

from prefeval.cli import main
from prefeval.cli.trec_eval import (
    CommandLineError,
    FormatError,
    TrecEvalOptions,
    eval_arguments,
    judgment_format,
    options,
    read_command_line,
)
from prefeval.errors import UsageError
from prefeval.io.zscores import Reference, ZScoreFileError, ZScores, read_zscores
from prefeval.measures import parse_measure
from prefeval.measures.request import read_request

# --- trec_eval's outputs, kept -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("collection")
    return folder, write_collection(folder)


def trec_eval_command(args: list[str], folder: Path, stdin: bytes | None = None):
    """``prefeval trec_eval ARGS`` run in-process in ``folder``."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(main, ["trec_eval", *args], input=stdin)
    finally:
        os.chdir(here)


def test_every_case_has_its_expected_output_and_every_output_a_case():
    assert sorted(path.name for path in DATA.glob("*.out")) == sorted(f"{case.name}.out" for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_prints_what_trec_eval_prints(collection, case):
    folder, files = collection
    stdin = (folder / files[case.stdin]).read_bytes() if case.stdin else None
    result = trec_eval_command(case.arguments(files), folder, stdin)
    assert result.exit_code == 0, result.stderr
    expected = (DATA / f"{case.name}.out").read_bytes()
    if result.stdout_bytes != expected:
        ours, theirs = result.stdout.splitlines(), expected.decode().splitlines()
        differing = [(a, b) for a, b in zip(ours, theirs) if a != b][:5]
        pytest.fail(f"{len(ours)} lines against trec_eval's {len(theirs)}; first differences: {differing}")


@pytest.mark.parametrize("option_set", ROBUST03_OPTION_SETS)
def test_prints_what_trec_eval_prints_on_robust03(option_set):
    robust03_or_skip()
    output = b""
    for run in ROBUST03_RUNS_OF[option_set]:
        result = run_cli("trec_eval", *option_set.split(), "-m", "all_trec", ROBUST03 / "qrels.txt",
                         ROBUST03 / "runs" / f"input.{run}.gz")
        assert result.exit_code == 0, result.stderr
        output += result.stdout_bytes
    expected = lzma.decompress(robust03_expected(option_set).read_bytes())
    assert output == expected, next(f"{a!r} (trec_eval: {b!r})" for a, b in zip(output.splitlines(),
                                                                                 expected.splitlines()) if a != b)


def test_the_console_script_and_the_module_print_the_same(collection):
    folder, files = collection
    [case] = [case for case in CASES if case.name == "official"]
    expected = (DATA / "official.out").read_bytes()
    script = ("import sys; sys.argv[0] = 'prefeval-trec_eval'; from prefeval.__main__ import trec_eval; trec_eval()")
    for command in ([sys.executable, "-c", script], [sys.executable, "-m", "prefeval", "trec_eval"]):
        done = subprocess.run([*command, *case.arguments(files)], cwd=folder, capture_output=True)
        assert (done.returncode, done.stdout) == (0, expected), done.stderr


def test_the_same_as_eval_with_format_trec_eval(collection):
    """One implementation: the command's output is eval's with trec_eval's options translated."""
    folder, files = collection
    args = ["-q", "-c", "-M", "7", "-l", "2", "-m", "all_trec", files["qrels"], files["trunc"]]
    ours = trec_eval_command(args, folder)
    here = os.getcwd()
    os.chdir(folder)
    try:
        theirs = run_cli("eval", "--format", "trec_eval", "-q", "-c", "--topk", "7", "-l", "2", "-m", "all_trec",
                         "-R", files["qrels"], files["trunc"])
    finally:
        os.chdir(here)
    assert ours.exit_code == theirs.exit_code == 0
    assert ours.stdout_bytes == theirs.stdout_bytes


# --- the command line ------------------------------------------------------------------------------------

def test_options_are_read_as_getopt_long_reads_them():
    found = list(options(["-qcmP.10", "-M", "100", "qrels", "-l2", "--measure=map", "--meas", "ndcg", "run",
                          "--Zs=z", "-n", "--", "-J"]))
    assert found == [("q", None), ("c", None), ("m", "P.10"), ("M", "100"), ("l", "2"), ("m", "map"), ("m", "ndcg"),
                     ("Z", "z"), ("n", None), ("", "qrels"), ("", "run"), ("", "-J")]
    assert list(options(["-", "--Output_old_results_format", "x", "-o"])) == [("o", "x"), ("o", None), ("", "-")]


def test_posixly_correct_stops_at_the_first_operand(monkeypatch):
    monkeypatch.setenv("POSIXLY_CORRECT", "1")
    assert list(options(["-q", "qrels", "-c", "run"])) == [("q", None), ("", "qrels"), ("", "-c"), ("", "run")]


@pytest.mark.parametrize("args, message", [
    (["-x"], "invalid option -- 'x'"),
    (["-qx"], "invalid option -- 'x'"),
    (["-m"], "option requires an argument -- 'm'"),
    (["--foo"], "unrecognized option '--foo'"),
    (["--foo=1"], "unrecognized option '--foo=1'"),
    (["--help=3"], "option '--help' doesn't allow an argument"),
    (["--measure"], "option '--measure' requires an argument"),
    (["--R"], "option '--R' is ambiguous; possibilities: '--Rel_info_format' '--Results_format'"),
])
def test_a_bad_option_is_named_in_glibcs_words(args, message):
    with pytest.raises(CommandLineError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        list(options(args))


def test_each_option_is_acted_on_as_it_comes():
    with pytest.raises(CommandLineError, match="illegal measure 'foo'"):
        read_command_line(["-m", "foo", "-x"])
    with pytest.raises(CommandLineError, match="invalid option"):
        read_command_line(["-x", "-m", "foo"])
    with pytest.raises(SystemExit) as ended:
        read_command_line(["-v", "-x"])
    assert ended.value.code == 0


def test_the_options_become_evals():
    read = read_command_line(["-q", "-c", "-n", "-J", "-l", "2", "-N", "1000", "-M100", "-Z", "z.txt", "-D", "0",
                              "-o", "-T", "trec_results", "-R", "qrels", "-m", "map", "-mP.5,10", "q.txt", "-"])
    assert read == TrecEvalOptions(["q.txt", "-"], ["map", "P.5,10"], query=True, complete=True, summary=False,
                                   judged_only=True, level=2, num_docs=1000, max_docs=100, zscores="z.txt")
    assert eval_arguments(read) == [
        "--format=trec_eval", "--measure-names=trec_eval", "--quiet", "--qrels=q.txt", "--measure=map",
        "--measure=P.5,10", "-q", "-c", "-n", "-J", "--relevance_level=2", "--num_docs=1000", "--topk=100",
        "--zscores=z.txt", "--", "-"]


def test_qrels_named_dash_are_a_file_as_for_trec_eval():
    assert "--qrels=./-" in eval_arguments(read_command_line(["-", "run"]))
    assert "--zscores=./-" in eval_arguments(read_command_line(["-Z", "-", "qrels", "run"]))


@pytest.mark.parametrize("args, message", [
    (["-l", "1.5"], "a relevance level is an integer"),
    (["-l0"], "counts a grade as relevant only above 0"),
    (["-M", "0"], "keep at least 1 document per query"),
    (["-M", "x"], "a number of documents is an integer"),
    (["-N", "-1"], "at least 0"),
    (["-D", "1"], "debugging"),
    (["-D", "0.301"], "debugging"),
])
def test_what_prefeval_does_not_do_is_refused_with_the_reason(args, message):
    with pytest.raises(UsageError, match=message):
        read_command_line(args)


def test_judgment_formats_have_one_place():
    assert judgment_format("qrels") == []
    for name in ("prefs", "qrels_prefs", "qrels_jg"):
        assert judgment_format(name) == ["--rel-format", name]
    for name in ("trec_results", "pairs"):  # prefeval's pairwise files are not one of trec_eval's formats
        with pytest.raises(FormatError, match="illegal rel_format"):
            judgment_format(name)


# --- exit codes and one-line errors -----------------------------------------------------------------------

@pytest.mark.parametrize("args, code, fragment", [
    (["-x", QRELS, RUN], 1, "invalid option -- 'x'"),
    ([QRELS], 1, "expected the qrels and the run, got 1 argument"),
    ([QRELS, RUN, RUN], 1, "got 3 arguments"),
    (["-m", "MAP", QRELS, RUN], 1, "illegal measure 'MAP'"),
    (["-m", "map,P.10", QRELS, RUN], 1, "illegal measure"),
    (["-m", "P.", QRELS, RUN], 1, "improper measure in parameter"),
    (["-m", "ndcg@10", QRELS, RUN], 1, "illegal measure"),
    (["-l", "0", QRELS, RUN], 1, "-l 0"),
    (["-m", "P.0", QRELS, RUN], 2, "Negative cutoff detected"),
    (["-R", "foo", QRELS, RUN], 2, "-R foo: illegal rel_format"),
    (["-R", "pairs", QRELS, RUN], 2, "-R pairs: illegal rel_format"),
    (["-T", "foo", QRELS, RUN], 2, "-T foo: illegal retrieval results format"),
    (["no-such-qrels", RUN], 2, "no-such-qrels: no such file"),
    ([QRELS, "no-such-run"], 2, "no-such-run: no such file"),
    (["-", RUN], 2, "./-: no such file"),
    (["-Z", "no-such-file", QRELS, RUN], 255, "no-such-file: no such file"),
])
def test_errors_are_one_line_with_trec_evals_exit_code(args, code, fragment):
    assert_one_line_error(run_cli("trec_eval", *args), code, fragment)


def test_a_malformed_line_is_named_with_its_file_and_line(tmp_path):
    bad_run = write_text(tmp_path / "run", ["q101 Q0 DOC-101-000 1 2.5 x", "q101 Q0 DOC-101-003 2"])
    assert_one_line_error(run_cli("trec_eval", QRELS, bad_run), 2, f"{bad_run}:2:")
    bad_zscores = write_text(tmp_path / "z", ["q101 map 0.5 0.1", "q101 P_5 0.5"])
    assert_one_line_error(run_cli("trec_eval", "-Z", bad_zscores, QRELS, RUN), 255, f"{bad_zscores}:2: expected 4")


def test_help_is_prefevals_own_and_describes_the_measures_named():
    result = run_cli("trec_eval", "-h")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: prefeval trec_eval [OPTIONS] QRELS RUN")
    assert run_cli("trec_eval", "--help").stdout == result.stdout
    assert run_cli("trec_eval", "--he", "qrels").stdout == result.stdout  # help comes before the operands
    described = run_cli("trec_eval", "-m", "rbp", "-mP.5", "-h").stdout
    assert described.startswith(result.stdout)
    assert "  rbp (prefeval trec_rbp): " in described and "  P_5 (prefeval p@5): " in described


def test_version_is_on_stderr():
    result = run_cli("trec_eval", "-v")
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("prefeval trec_eval ") and "trec_eval version 10.0" in result.stderr


# --- measure names as trec_eval reads them --------------------------------------------------------------

def test_rbp_is_trec_evals_on_its_command_line():
    assert [m.name for m in read_request(["rbp"], tool="trec_eval").measures] == ["trec_rbp"]
    assert [m.name for m in read_request(["rbp"]).measures] == ["rbp"]  # the one reading: prefeval's
    assert [m.name for m in read_request(["rbp", "rbp.p=0.8"], tool="trec_eval").measures] == ["trec_rbp@0.8"]


def test_a_list_after_a_dot_stays_one_value():
    [item] = read_request(["11pt_avg..25,.5,.75"]).items
    assert (item.measure.name, item.printed) == ("iprec_avg@0.25;0.5;0.75,0.5", "11pt_avg_.25,.5,.75")
    assert [m.name for m in read_request(["ndcg_cut.23.4"]).measures] == ["ndcg@23"]


def test_eval_reads_names_as_trec_eval_when_asked(tmp_path):
    result = run_cli("eval", "--format", "trec_eval", "--measure-names", "trec_eval", "-m", "rbp", "-R", QRELS, RUN)
    assert result.exit_code == 0 and result.stdout.startswith("rbp                   \tall\t")
    assert_one_line_error(run_cli("eval", "--measure-names", "trec_eval", "-m", "ap", "-R", QRELS, RUN), 2,
                          "illegal measure 'ap'")


def test_z_scores_are_trec_eval_layouts_only(tmp_path):
    zscores = write_text(tmp_path / "z", ["q101 map 0.5 0.1"])
    assert_one_line_error(run_cli("eval", "-Z", zscores, "-R", QRELS, RUN), 2, "-Z: z-scores are printed in "
                                                                              "trec_eval's layout")


# --- z-scores ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lines, message", [
    ("1 map 0.5\n", ":1: expected 4 fields (qid measure mean stddev), found 3"),
    ("1 map 0.5 0.1 7\n", ":1: expected 4 fields"),
    ("1 map 0.5 0.1\n\n", ":2: expected 4 fields (qid measure mean stddev), found 0"),
    ("1 map 0.5 0.1\n   \n1 P_5 0 1", ":2: expected 4 fields"),
    ("1 map abc 0.1\n", ":1: the mean is not a finite number: 'abc'"),
    ("1 map 0.5 nan\n", ":1: the stddev is not a finite number: 'nan'"),
    ("1 map -inf 1\n", ":1: the mean is not a finite number: '-inf'"),
    ("1 map 0.5 0.1x\n", ":1: the stddev is not a finite number"),
    ("1 map 0.5 0.1\n2 map 0 1\n1 map 0.5 0.1\n", ":3: query 1 and measure map again (first on line 1)"),
    ("", ": an empty z-score file"),
])
def test_a_malformed_z_score_file_is_named_with_its_line(tmp_path, lines, message):
    path = tmp_path / "z"
    path.write_text(lines)
    with pytest.raises(ZScoreFileError) as caught:
        read_zscores(str(path))
    assert str(caught.value).startswith(f"{path}{message}")


def test_a_z_score_file_as_trec_eval_reads_it(tmp_path):
    path = tmp_path / "z"
    path.write_bytes(b"  301\tmap  0.25   0.5  \r\n# x 1 2\n302 P_5 -1e-1 +2")  # no line end at the end
    assert read_zscores(str(path)) == ZScores(str(path), {"301": {"map": Reference(0.25, 0.5)},
                                                          "#": {"x": Reference(1.0, 2.0)},
                                                          "302": {"P_5": Reference(-0.1, 2.0)}})


def hand_collection(tmp_path) -> tuple[str, str]:
    """Query 1: relevant a (grade 1) and b (grade 2), the run ranks a x b (AP (1 + 2/3)/2 = 5/6);
    query 2: relevant c, the run ranks y c (AP 1/2); query 3: relevant d, missing from the run."""
    qrels = write_text(tmp_path / "qrels", ["1 0 a 1", "1 0 b 2", "1 0 x 0", "2 0 c 1", "3 0 d 1"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 3 t", "1 Q0 x 2 2 t", "1 Q0 b 3 1 t", "2 Q0 y 1 2 t",
                                        "2 Q0 c 2 1 t"])
    return qrels, run


def lines_of(output: str) -> dict[tuple[str, str], str]:
    return {(name.strip(), qid): value for name, qid, value in (line.split("\t") for line in output.splitlines())}


def test_z_scores_by_hand(tmp_path):
    qrels, run = hand_collection(tmp_path)
    zscores = write_text(tmp_path / "z", [
        "1 map 0.5 0.25",      # (5/6 - 0.5) / 0.25 = 4/3
        "2 map 0.5 0",         # deviation 0, the value is the mean: 0
        "3 map 0.5 0",         # deviation 0, the value 0 is not the mean: -1000000
        "1 num_ret 2 1",       # (3 - 2) / 1 = 1
        "2 num_ret 4 2",       # (2 - 4) / 2 = -1
        "1 gm_map -1 1",       # (log(5/6) + 1) / 1
        "1 num_q 5 1",         # num_q's summary is the number of queries whatever its z-scores
        "1 num_rel 2 0",       # 0; query 2: no line, -1000000
        "9 zz 0 1"])           # query 3 has no num_ret, queries 1 and 2 no line for P_5: -1000000
    result = run_cli("trec_eval", "-q", "-c", "-Z", zscores, "-m", "map", "-m", "num_ret", "-m", "num_q", "-m",
                     "gm_map", "-m", "num_rel", "-m", "P.5", qrels, run)
    assert result.exit_code == 0, result.stderr
    values = lines_of(result.stdout)
    assert values[("Zmap", "1")] == "1.3333" and values[("Zmap", "2")] == "0.0000"
    assert values[("Zmap", "3")] == "-1000000.0000"
    assert values[("Zmap", "all")] == f"{(4 / 3 + 0 - 1000000) / 3:6.4f}"
    assert (values[("Znum_ret", "1")], values[("Znum_ret", "2")], values[("Znum_ret", "3")]) == \
        ("1.0000", "-1.0000", "-1000000.0000")
    assert values[("Znum_ret", "all")] == "-1000000.0000"  # the sum of the z-scores
    assert values[("Znum_q", "all")] == "3.0000"
    z_gm = [math.log(5 / 6) + 1, -1000000, -1000000]
    assert values[("Zgm_map", "all")] == f"{math.exp(sum(z_gm) / 3):6.4f}"
    assert values[("Znum_rel", "1")] == "0.0000" and values[("Znum_rel", "2")] == "-1000000.0000"
    assert values[("Znum_rel", "all")] == "4.0000"  # -c: the relevant documents of the qrels, as they are
    assert values[("ZP_5", "1")] == "-1000000.0000"
    assert "runid" not in {name for name, _ in values}
    assert result.stdout.splitlines()[0] == "Znum_ret               \t1\t1.0000"


# --- the measures trec_eval 10.0 adds -------------------------------------------------------------------

def evaluated(tmp_path, *measures: str) -> dict[tuple[str, str], str]:
    qrels, run = hand_collection(tmp_path)
    result = run_cli("trec_eval", "-q", "-c", *[arg for measure in measures for arg in ("-m", measure)], qrels, run)
    assert result.exit_code == 0, result.stderr
    return lines_of(result.stdout)


def test_yaap_by_hand(tmp_path):
    values = evaluated(tmp_path, "yaap")
    # S = 1 + 2/3 on query 1 (m = 2), 1/2 on query 2 (m = 1), 0 on query 3 (m = 1, missing)
    expected = [math.log((1 + 5 / 3) / (1 + 2 - 5 / 3)), math.log(1.5 / 1.5), math.log(1 / 2)]
    assert [values[("yaap", qid)] for qid in "123"] == [f"{value:6.4f}" for value in expected]
    assert values[("yaap", "all")] == "-0.0000"  # log(2) + log(1/2) is a little below 0, as trec_eval prints it


def test_dcg_and_ideal_dcg_by_hand(tmp_path):
    values = evaluated(tmp_path, "dcg", "ideal_dcg", "ndcg")
    dcg = [1 + 2 / math.log2(4), 1 / math.log2(3), 0.0]
    ideal = [2 + 1 / math.log2(3), 1.0, 1.0]
    for q, qid in enumerate("123"):
        assert values[("dcg", qid)] == f"{dcg[q]:6.4f}"
        assert values[("ideal_dcg", qid)] == f"{ideal[q]:6.4f}"  # the qrels', also for the missing query
        assert values[("ndcg", qid)] == f"{dcg[q] / ideal[q]:6.4f}"
    mapped = evaluated(tmp_path, "dcg.0=1,2=5")  # grade 0 has a gain: x at rank 2 counts
    assert mapped[("dcg_0=1,2=5", "1")] == f"{1 + 1 / math.log2(3) + 5 / math.log2(4):6.4f}"


def test_ideal_dcg_is_the_same_for_every_run():
    measure = parse_measure("ideal_dcg@gains=1:3;2:9")
    assert measure.family == "ideal_dcg" and measure.bounds == (0.0, math.inf)


def test_11pt_avg_of_levels_whatever_their_order(tmp_path):
    # query 1: interpolated precision 1 at recall 0.25 (1 document), 2/3 at 0.75 (2 documents)
    for levels in ("0.75,0.25", "0.25,0.75"):
        assert evaluated(tmp_path, f"11pt_avg.{levels}")[(f"11pt_avg_{levels}", "1")] == f"{(1 + 2 / 3) / 2:6.4f}"
    assert parse_measure("iprec_avg@0.75;0.25") == parse_measure("iprec_avg@0.25;0.75")
    assert parse_measure("iprec_avg@11").name == "iprec_avg@11"
    for bad in ("iprec_avg@1", "iprec_avg@0.5;1.5", "iprec_avg@0.5;x"):
        with pytest.raises(UsageError):
            parse_measure(bad)


def test_equally_spaced_levels_and_the_same_levels_given_agree(tmp_path):
    from prefeval.measures.interpolated import recall_levels

    assert recall_levels(3) == (0.0, 0.5, 1.0) and recall_levels((0.2, 0.8)) == (0.2, 0.8)
    qrels, run = hand_collection(tmp_path)
    result = run_cli("eval", "-q", "-m", "iprec_avg@3,0.5", "-m", "iprec_avg@0.0;0.5;1.0,0.5", "-R", qrels, run)
    assert result.exit_code == 0, result.stderr
    for line in json_lines(result.stdout):
        assert line["iprec_avg@3,0.5"] == line["iprec_avg@0.0;0.5;1.0,0.5"]
