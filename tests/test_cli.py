"""The command line, end to end on the bundled examples."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import EXAMPLES, QRELS, ROOT, RUNS, json_lines, run_cli, write_text
from contract import assert_one_line_error


def test_eval_per_query_and_summary_lines():
    result = run_cli("eval", "-q", "--qrels", QRELS, *RUNS)
    assert result.exit_code == 0, result.output
    records = json_lines(result.stdout)
    # 7 queries with relevant documents × (6 pairs + 4 runs), then 6 pair and 4 run summaries
    assert len(records) == 7 * 10 + 6 + 4
    first = records[0]
    assert list(first)[:5] == ["qid", "runi", "runj", "sample", "type"]
    assert list(first)[5:] == ["rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision",
                               "ap", "rbp", "rr", "ndcg", "rp", "p@1", "p@10", "r@1", "r@10"]
    kinds = [(r.get("runi"), r.get("runj"), r.get("run")) for r in records[:10]]
    assert kinds == [("bm25", "dense", None), ("bm25", "hybrid", None), ("bm25", "random", None), (None, None, "bm25"),
                     ("dense", "hybrid", None), ("dense", "random", None), (None, None, "dense"),
                     ("hybrid", "random", None), (None, None, "hybrid"), (None, None, "random")]
    assert [r["qid"] for r in records[:70:10]] == ["q101", "q102", "q103", "q104", "q105", "q106", "q108"]
    assert "type" not in records[70] and records[70]["qid"] == "all"
    assert records[-1] == {**records[-1], "qid": "all", "run": "random", "type": "metric"}
    assert "dropped 1 query (q107) without relevant documents" in result.stderr
    assert "run hybrid: 1 of 7 queries missing" in result.stderr


def test_missing_query_is_scored_as_retrieving_nothing():
    records = json_lines(run_cli("eval", "-q", "-R", QRELS, "-m", "ap,rr", *RUNS).stdout)
    hybrid = [r for r in records if r.get("run") == "hybrid" and r["qid"] == "q104"]
    assert hybrid == [{"qid": "q104", "run": "hybrid", "sample": 0, "type": "metric", "ap": 0.0, "rr": 0.0}]


def test_underscore_and_dash_spellings_are_the_same():
    old = run_cli("eval", "--query_eval_wanted", "--measure_set", "preferences", "--binary_relevance", "2",
              "--relevance_floor", "1", "--label_fraction", "0.5", "--label_fraction_policy", "pool",
              "-R", QRELS, *RUNS)
    new = run_cli("eval", "--query-eval-wanted", "--measure-set", "preferences", "--binary-relevance", "2",
              "--relevance-floor", "1", "--label-fraction", "0.5", "--label-fraction-policy", "pool",
              "-R", QRELS, *RUNS)
    assert old.exit_code == 0 and old.stdout == new.stdout and len(old.stdout) > 1000


def test_measure_lists_and_sets():
    records = json_lines(run_cli("eval", "-n", "-q", "-R", QRELS, "-m", "ap,p@5,10", "-m", "rpp", *RUNS[:2]).stdout)
    assert list(records[0])[5:] == ["ap", "p@5", "p@10", "rpp"]
    assert list(records[1])[4:] == ["ap", "p@5", "p@10"]
    records = json_lines(run_cli("eval", "-R", QRELS, "-m", "ap", "-M", "preferences", *RUNS[:2]).stdout)
    assert list(records[0])[4:] == ["ap", "rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision"]


def test_one_run_gives_metric_lines_only():
    records = json_lines(run_cli("eval", "-q", "-R", QRELS, RUNS[0]).stdout)
    assert {r["type"] for r in records} == {"metric"}
    assert len(records) == 7 + 1
    result = run_cli("eval", "-R", QRELS, "-m", "rpp", RUNS[0])
    assert result.exit_code == 2
    assert result.stderr.startswith("prefeval: error: preference measures need two or more runs")


def test_unknown_measure_is_a_usage_error():
    assert_one_line_error(run_cli("eval", "-R", QRELS, "-m", "mapp", *RUNS), 2, "unknown measure 'mapp'",
                          "did you mean map", "valid measures include")


def test_samples_and_seeds_are_reproducible():
    args = ["eval", "-q", "-R", QRELS, "--samples", "3", "--query_fraction", "0.5", "--label_fraction", "0.7"]
    first = run_cli(*args, "--seed", "42", *RUNS)
    assert first.stdout == run_cli(*args, "--seed", "42", *RUNS).stdout
    assert first.stdout != run_cli(*args, "--seed", "43", *RUNS).stdout
    assert [r["sample"] for r in json_lines(first.stdout) if r["qid"] == "all" and "runi" in r][::6] == [0, 1, 2]
    drawn = run_cli(*args, *RUNS)
    seed = drawn.stderr.split("drew seed ")[1].split()[0]
    assert run_cli(*args, "--seed", seed, *RUNS).stdout == drawn.stdout
    assert "drew seed" not in first.stderr


def test_topk_truncates_runs():
    full = json_lines(run_cli("eval", "-R", QRELS, "-m", "r@0", RUNS[0]).stdout)[0]["r@0"]
    top5 = json_lines(run_cli("eval", "-R", QRELS, "-m", "r@0", "--topk", "5", RUNS[0]).stdout)[0]["r@0"]
    top5_by_recall = json_lines(run_cli("eval", "-R", QRELS, "-m", "r@5", RUNS[0]).stdout)[0]["r@5"]
    assert top5 == top5_by_recall < full


def test_output_file_is_written_atomically(tmp_path):
    target = tmp_path / "out.jsonl"
    result = run_cli("eval", "-R", QRELS, "-o", target, *RUNS)
    assert result.exit_code == 0 and result.stdout == ""
    assert len(json_lines(target.read_text())) == 6 + 4
    bad_run = write_text(tmp_path / "bad", ["q101 Q0 a 1 1.0 t", "q101 Q0 b 2 oops t"])
    target.write_text("previous content\n")
    result = run_cli("eval", "-R", QRELS, "-o", target, RUNS[0], bad_run)
    assert result.exit_code == 1
    assert target.read_text() == "previous content\n"
    fresh = tmp_path / "fresh.jsonl"
    assert run_cli("eval", "-R", QRELS, "-o", fresh, bad_run).exit_code == 1
    assert not fresh.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad", "out.jsonl"]


def test_bad_input_is_one_line_naming_file_and_line(tmp_path):
    bad_run = write_text(tmp_path / "bad", ["q101 Q0 a 1 1.0 t", "q101 Q0 b 2 oops t"])
    process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "-R", QRELS, bad_run],
                             capture_output=True, text=True)
    assert process.returncode == 1
    assert process.stdout == ""
    assert process.stderr == f"prefeval: error: {bad_run}:2: score 'oops' is not a number\n"


def test_stdin_for_runs_and_prefs():
    with open(RUNS[1]) as handle:
        result = run_cli("eval", "-q", "-R", QRELS, RUNS[0], "-", input=handle.read())
    assert result.exit_code == 0
    assert {r["runj"] for r in json_lines(result.stdout) if "runj" in r} == {"stdin"}
    aggregated = run_cli("aggregate", "-P", "-", input=result.stdout)
    assert aggregated.exit_code == 0
    (summary,) = json_lines(aggregated.stdout)
    assert set(summary["rpp"]["mc4"]) == {"bm25", "stdin"}


def test_aggregate_needs_per_query_lines():
    summary_only = run_cli("eval", "-R", QRELS, *RUNS).stdout
    result = run_cli("aggregate", "-P", "-", input=summary_only)
    assert result.exit_code == 1
    assert result.stderr == ("prefeval: error: <stdin>: no per-query lines: it holds only summary lines; "
                             "run `prefeval eval` with -q to write them\n")


def test_aggregate_options(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    assert run_cli("eval", "-q", "-R", QRELS, "-o", prefs, *RUNS).exit_code == 0
    per_query = json_lines(run_cli("aggregate", "-P", prefs, "-q", "-n", "-m", "rpp", "--metric", "ap").stdout)
    assert len(per_query) == 7 and list(per_query[0]) == ["qid", "sample", "rpp", "ap", "scores"]
    damped = json_lines(run_cli("aggregate", "-P", prefs, "--mc4-damping", "0.5").stdout)[0]
    pure = json_lines(run_cli("aggregate", "-P", prefs, "--mc4_damping", "0").stdout)[0]
    assert damped["rpp"]["scores"]["mc4"] != pure["rpp"]["scores"]["mc4"]
    sampled = run_cli("aggregate", "-P", prefs, "--query_fraction", "0.5", "--num_samples", "4", "--seed", "1")
    assert [r["sample"] for r in json_lines(sampled.stdout)] == [0, 1, 2, 3]


def test_version_and_module_entry_point():
    assert run_cli("--version").stdout.strip().startswith("prefeval, version ")
    process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "--help"], capture_output=True, text=True)
    assert process.returncode == 0 and "--query_eval_wanted" in process.stdout and "Examples:" in process.stdout


def test_pipeline_script_runs(tmp_path):
    process = subprocess.run(["sh", str(EXAMPLES / "pipeline.sh")], capture_output=True, text=True, cwd=tmp_path)
    if process.returncode == 127 or "not found" in process.stderr:
        pytest.skip("the prefeval console script is not on PATH")
    assert process.returncode == 0, process.stderr
    assert process.stdout.splitlines() == PIPELINE_TABLE.splitlines()


PIPELINE_TABLE = """\
run     rpp mc4  rpp borda  lexirecall mc4  lexirecall borda  lexiprecision mc4  lexiprecision borda  ap mean  ndcg mean
------  -------  ---------  --------------  ----------------  -----------------  -------------------  -------  ---------
hybrid        1          2               1                 1                  1                    1        2          2
dense         2          1               2                 2                  2                    1        1          1
bm25          3          3               3                 3                  3                    3        3          3
random        4          4               4                 4                  4                    4        4          4

Cells: the rank of the run in each ordering (1 = best; tied runs share a rank).
"""
"""What ``examples/pipeline.sh`` prints: the rank of each example run under each ordering (the README
shows it)."""


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = next(line for line in readme.splitlines() if "pytest" in line and line.startswith("python"))
    assert command in ci


OPTION_ERRORS = {
    "eval --topk 0": (["eval", "-R", QRELS, "--topk", "0", RUNS[0]], "invalid value for '--topk': 0 is not in"),
    "eval --seed -1": (["eval", "-R", QRELS, "--seed", "-1", RUNS[0]], "invalid value for '--seed'"),
    "eval --jobs 0": (["eval", "-R", QRELS, "--jobs", "0", RUNS[0]], "invalid value for '--jobs'"),
    "eval --query_fraction 2": (["eval", "-R", QRELS, "--query_fraction", "2", RUNS[0]], "'--query_fraction'"),
    "eval --format nope": (["eval", "-R", QRELS, "--format", "nope", RUNS[0]], "'nope' is not one of"),
    "eval without RUN": (["eval", "-R", QRELS], "missing argument 'RUN...'"),
    "eval without -R": (["eval", RUNS[0]], "missing option '-R' / '--qrels'"),
    "aggregate --num_samples 0": (["aggregate", "-P", "-", "--num_samples", "0"], "'--num_samples'"),
    "aggregate --seed -1": (["aggregate", "-P", "-", "--seed", "-1"], "invalid value for '--seed'"),
    "significance --alpha 2": (["significance", "-P", "-", "--alpha", "2"], "invalid value for '--alpha'"),
    "significance --seed -1": (["significance", "-P", "-", "--seed", "-1"], "invalid value for '--seed'"),
    "plot kind": (["plot", "nope", "-", "-o", "x.png"], "invalid value for '{"),
    "plot --seed -1": (["plot", "preferences", "-", "--seed", "-1", "-o", "x.png"], "invalid value for '--seed'"),
    "sampled --num-items 0": (["sampled", "-R", QRELS, "--num-items", "0", RUNS[0]], "'--num-items'"),
    "sampled --seed -1": (["sampled", "-R", QRELS, "--num-items", "9", "--seed", "-1", RUNS[0]], "'--seed'"),
    "null --draws 0": (["null", "-R", QRELS, "--draws", "0"], "invalid value for '--draws'"),
    "null --quantile 1": (["null", "-R", QRELS, "--quantile", "1"], "invalid value for '--quantile'"),
    "check --format nope": (["check", "-R", QRELS, "--format", "nope"], "'nope' is not one of"),
    "measures --nope": (["measures", "--nope"], "no such option '--nope'"),
    "an unknown command": (["evaluate"], "no such command 'evaluate'"),
    "an unknown option": (["eval", "--nope", "-R", QRELS, RUNS[0]], "no such option '--nope'"),
    "a flag with a value": (["eval", "-R", QRELS, "--quiet=yes", RUNS[0]], "--quiet"),
    "a missing option value": (["eval", RUNS[0], "-R"], "option '-R' requires an argument"),
}


@pytest.mark.parametrize("case", list(OPTION_ERRORS))
def test_option_errors_are_one_line(case):
    args, fragment = OPTION_ERRORS[case]
    assert_one_line_error(run_cli(*args, input=""), 2, fragment)


def test_option_errors_are_one_line_in_a_real_process(tmp_path):
    process = subprocess.run([sys.executable, "-m", "prefeval", "eval", "--topk", "0", "-R", QRELS, RUNS[0],
                              "-o", tmp_path], capture_output=True, text=True)
    assert_one_line_error(process, 2, "invalid value for '--topk'")


CONFLICTS = {
    "eval --format table -q": (["eval", "--format", "table", "-q"], "drop -q and -n"),
    "eval --format markdown -n": (["eval", "--format", "markdown", "-n"], "drop -q and -n"),
    "eval --baseline in jsonl": (["eval", "--baseline", "bm25"], "--baseline marks significance in the table"),
    "eval --baseline in tsv": (["eval", "--format", "tsv", "--baseline", "bm25"], "not in tsv"),
}


@pytest.mark.parametrize("case", list(CONFLICTS))
def test_conflicting_options_are_reported_before_any_input_is_read(tmp_path, case):
    args, fragment = CONFLICTS[case]
    absent = tmp_path / "absent"  # read first, it would be the error
    assert_one_line_error(run_cli(*args, "-R", absent, absent, "-o", tmp_path / "out"), 2, fragment)
    assert list(tmp_path.iterdir()) == []


def test_aggregate_correlations_in_a_table_are_reported_before_reading(tmp_path):
    result = run_cli("aggregate", "--correlations", "--format", "table", "-P", tmp_path / "absent")
    assert_one_line_error(result, 2, "--correlations writes JSON lines")


@pytest.mark.parametrize("command", ["eval", "check", "null", "sampled"])
def test_qrels_given_first_as_trec_eval_takes_them(command):
    extra = ["--num-items", "500"] if command == "sampled" else []
    message = assert_one_line_error(run_cli(command, *extra, QRELS, RUNS[0]), 2, "missing option '-R' / '--qrels'")
    assert f"{QRELS} looks like qrels" in message and f"-R {QRELS} {RUNS[0]}" in message


def test_qrels_given_first_to_eval_names_prefeval_trec_eval_too():
    message = assert_one_line_error(run_cli("eval", "-q", QRELS, RUNS[0]), 2, "missing option '-R' / '--qrels'")
    assert message.endswith(f"or `prefeval trec_eval {QRELS} {RUNS[0]}` on trec_eval's command line")


@pytest.mark.parametrize("args, hint", [  # issue 29, item 3: trec_eval's habits get the option they mean
    (["-M", "100", "-R", QRELS], "trec_eval's -M 100 (documents per query) is --topk 100 here"),
    (["-M1000", "-R", QRELS], "trec_eval's -M 1000 (documents per query) is --topk 1000 here"),
    (["-R", "qrels", QRELS], "-R names the judgments file here, trec_eval's -R qrels (their format) is "
                             "--rel-format qrels"),
    (["-R", "prefs", QRELS], "trec_eval's -R prefs (their format) is --rel-format prefs"),
])
def test_trec_eval_habits_get_a_hint_naming_what_to_type(args, hint):
    message = assert_one_line_error(run_cli("eval", *args, RUNS[0]), 2, hint)
    assert message.endswith("`prefeval trec_eval` takes trec_eval's command line as it is")


def test_a_measure_set_mistyped_gets_no_trec_eval_hint():
    message = assert_one_line_error(run_cli("eval", "-M", "al", "-R", QRELS, RUNS[0]), 2, "'al' is not one of")
    assert "trec_eval" not in message


def test_the_top_level_help_names_the_foreign_command_lines():
    result = run_cli()
    assert "prefeval trec_eval -q -m all_trec QRELS RUN      (trec_eval's command line and output)" in result.stdout
    assert "prefeval ndeval QRELS RUN" in result.stdout


def test_no_qrels_hint_when_the_first_run_is_a_run():
    message = assert_one_line_error(run_cli("eval", RUNS[0], RUNS[1]), 2, "missing option '-R' / '--qrels'")
    assert "looks like qrels" not in message


@pytest.mark.parametrize("command", ["eval", "aggregate", "check", "measures", "null", "plot", "sampled",
                                     "significance"])
def test_every_command_tells_its_version(command):
    import prefeval

    result = run_cli(command, "--version")
    assert (result.exit_code, result.stdout) == (0, f"prefeval, version {prefeval.__version__}\n")
