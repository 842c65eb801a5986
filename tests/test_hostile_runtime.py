"""Hostile requests to the runtime: counts of draws, resamples and permutations far beyond what any
analysis needs, output that cannot be written, a Dask cluster beside another one, and values that are
not finite numbers. Each ends as the error contract says (:mod:`contract`) or writes what it should,
and never with a traceback, a Python warning, or ``null`` where a number belongs.

Signals under every engine are in ``test_signals.py``.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from conftest import QRELS, RUNS

DASK_DASHBOARD_PORT = 8787


def prefeval_process(*args) -> subprocess.CompletedProcess:
    """``prefeval ARGS...`` in a process of its own (Dask's workers are spawned processes)."""
    return subprocess.run([sys.executable, "-m", "prefeval", *map(str, args)], capture_output=True, timeout=300)


@pytest.fixture
def dashboard_port_taken():
    """Port 8787 (Dask's dashboard) held by someone else, as by another cluster's dashboard; when it is
    taken already, it is taken."""
    with socket.socket() as holder:
        try:
            holder.bind(("127.0.0.1", DASK_DASHBOARD_PORT))
            holder.listen()
        except OSError:
            pass
        yield


def test_dask_starts_no_dashboard_and_says_nothing_when_its_port_is_taken(dashboard_port_taken):
    """``--engine dask`` warned "Port 8787 is already in use" (distributed's UserWarning) when another
    cluster had the dashboard's port: the local cluster starts without one, quietly."""
    pytest.importorskip("distributed")
    memory = prefeval_process("eval", "-R", QRELS, RUNS[0])
    dask = prefeval_process("eval", "--engine", "dask", "--jobs", "2", "-R", QRELS, RUNS[0])
    assert dask.returncode == 0, dask.stderr
    assert dask.stdout == memory.stdout and dask.stderr == memory.stderr
    assert b"arning" not in dask.stderr


def _frame_qrels():
    import pandas as pd

    return pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})


def _frame_run(scores):
    import pandas as pd

    return pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": scores},
                        index=pd.Index([7, 9]))


def _numpy_requests():
    """API calls given numpy numbers where a message quotes the value, and the value it must show."""
    import numpy as np

    import prefeval
    from prefeval.analyses.significance import compare_pairs
    from prefeval.measures.summaries import summarise
    from prefeval.report.plots.common import PlotRequest

    run = {"A": _frame_run([1.0, 0.5])}
    return {
        "seed": (lambda: prefeval.evaluate(_frame_qrels(), run, samples=2, query_fraction=0.5,
                                           seed=np.int64(-1)), "-1"),
        "samples": (lambda: prefeval.evaluate(_frame_qrels(), run, samples=np.int64(0)), "0"),
        "query_fraction": (lambda: prefeval.evaluate(_frame_qrels(), run, query_fraction=np.float64(1.5)), "1.5"),
        "jobs": (lambda: prefeval.evaluate(_frame_qrels(), run, jobs=np.int64(0)), "0"),
        "draws": (lambda: prefeval.evaluate(_frame_qrels(), run, ties="expected", draws=np.int64(1)), "1"),
        "relevance_level": (lambda: prefeval.evaluate(_frame_qrels(), run, relevance_level=np.float64(np.inf)),
                            "inf"),
        "alpha": (lambda: compare_pairs(np.zeros((1, 3)), alpha=np.float64(2.0)), "2.0"),
        "bootstrap": (lambda: compare_pairs(np.zeros((1, 3)), bootstrap=np.int64(0)), "0"),
        "gini": (lambda: summarise("gini", np.array([[-1.0], [2.0]])), "-1.0"),
        "dpi": (lambda: PlotRequest("x", (), None, dpi=np.float32(5.0)), "5.0"),
        "score row": (lambda: prefeval.evaluate(_frame_qrels(), {"A": _frame_run([1.0, "x"])}), "(row 9)"),
    }


@pytest.mark.parametrize("request_name", list(_numpy_requests()))
def test_messages_show_numbers_as_numbers(request_name):
    """A value given as a numpy number is quoted as the number it is: numpy 2 writes np.float64(-1.0)
    (the gini refusal showed it so, and every check of the API's numeric options)."""
    from prefeval.errors import InputError, UsageError

    call, shown = _numpy_requests()[request_name]
    with pytest.raises((UsageError, InputError)) as refused:
        call()
    message = str(refused.value)
    assert "np." not in message and "numpy" not in message, message
    assert shown in message, message


# --- values that are not finite numbers, in what every reader reads ----------------------------------

NON_FINITE = ["1e400", "-1e400", "1e999", "1E+400", "-1E999", "1" + "0" * 400, "inf", "-inf", "+inf", "INF",
              "Infinity", "-Infinity", "NaN", "nan", "-nan"]
"""Spellings of numbers that are not finite: what JSON cannot hold and orjson refuses, and what a
reader of CSV (pandas, behind the eval lines' fast path) reads as infinity."""


@pytest.fixture(scope="module")
def eval_lines_text(tmp_path_factory) -> list[str]:
    """The per-query eval lines of the four example runs (rpp and ap), as text lines."""
    from conftest import example_eval_lines

    path = tmp_path_factory.mktemp("eval") / "prefs.jsonl"
    return open(example_eval_lines(path, "rpp,ap")).read().splitlines()


def spoiled(directory, lines: list[str], number: int, key: str, token: str, name: str = "prefs.jsonl") -> str:
    """``lines`` with the value of ``key`` on line ``number`` (1-based) written as ``token``, in a file."""
    import re

    lines = list(lines)
    lines[number - 1] = re.sub(rf'"{re.escape(key)}":[^,}}]+', f'"{key}":{token}', lines[number - 1], count=1)
    path = directory / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("token", NON_FINITE)
@pytest.mark.parametrize("number", [1, 7])  # the first line (whose keys the fast path reads) or a later one
def test_aggregate_refuses_a_value_that_is_not_finite(tmp_path, eval_lines_text, token, number):
    """``"ap":1e400`` made aggregate write ``null`` (read as infinity), then refused it as malformed
    JSON; every spelling of a number that is not finite is refused as such, naming the line."""
    from conftest import run_cli
    from contract import assert_one_line_error

    key = "rpp" if number == 1 else "ap"  # a preference on a pair line, a metric on a metric line
    path = spoiled(tmp_path, eval_lines_text, number, key, token)
    assert_one_line_error(run_cli("aggregate", "-P", path), 1,
                          f"prefeval: error: {path}:{number}: value of '{key}' is not a finite number ({token})")


READERS = {
    "aggregate --bootstrap": ["aggregate", "--bootstrap", "20", "--seed", "1", "-P"],
    "aggregate --correlations": ["aggregate", "--correlations", "-P"],
    "aggregate -m ap:gini": ["aggregate", "-m", "ap:gini", "-P"],
    "significance": ["significance", "--seed", "1", "--bootstrap", "20", "-P"],
    "significance --test bootstrap": ["significance", "--test", "bootstrap", "--seed", "1", "--bootstrap", "20", "-P"],
    "plot preferences": ["plot", "preferences", "-o", "{out}.svg"],
    "plot orderings": ["plot", "orderings", "-o", "{out}.svg"],
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("token", ["1e400", "-Infinity", "NaN", "inf"])
def test_every_reader_of_eval_lines_refuses_a_value_that_is_not_finite(tmp_path, eval_lines_text, reader, token):
    from conftest import run_cli
    from contract import assert_one_line_error

    if reader.startswith("plot"):
        pytest.importorskip("matplotlib")
    path = spoiled(tmp_path, eval_lines_text, 9, "ap", token)
    args = [arg.format(out=tmp_path / "figure") for arg in READERS[reader]]
    assert_one_line_error(run_cli(*args, path), 1, f"{path}:9: value of 'ap' is not a finite number ({token})")


@pytest.mark.parametrize("value", ["1e31", "-1.7e308", "1e300"])
def test_a_value_too_large_for_the_statistics_is_refused(tmp_path, eval_lines_text, value):
    """Finite, but its squares over the queries overflow (significance's t-test warned, and aggregate's
    means became infinite): refused beyond 1e30, naming the line."""
    from conftest import run_cli
    from contract import assert_one_line_error

    path = spoiled(tmp_path, eval_lines_text, 9, "ap", value)
    for command in (["significance", "--seed", "1", "-P", path], ["aggregate", "-P", path]):
        assert_one_line_error(run_cli(*command), 1, f"{path}:9: value of 'ap' is too large ({float(value)!r}): eval "
                                                    "lines hold values of at most 1e+30 in magnitude")


def test_eval_lines_from_dataframes_refuse_infinity():
    import numpy as np
    import pandas as pd

    from prefeval import aggregate
    from prefeval.errors import InputError

    frame = pd.DataFrame({"qid": ["q1", "q1", "q2", "q2"], "run": ["A", "B", "A", "B"],
                          "ap": [0.5, np.inf, 0.25, 0.5]})
    with pytest.raises(InputError) as refused:
        list(aggregate(frame))
    assert str(refused.value) == "<DataFrame>:2: value of 'ap' is not a finite number (inf)"


OTHER_OUTPUTS = {
    "ranks": (["aggregate", "--bootstrap", "20", "--seed", "1", "-n", "-P", "{prefs}"], "score"),
    "sampled": (["sampled", "-R", QRELS, "--num-items", "500", RUNS[0], RUNS[1]], "exact"),
    "null": (["null", "-R", QRELS, "--draws", "20", "--seed", "1", RUNS[0]], "threshold"),
}


@pytest.mark.parametrize("kind", list(OTHER_OUTPUTS))
@pytest.mark.parametrize("token", ["1e400", "-Infinity", "NaN"])
def test_the_plots_of_other_outputs_refuse_a_value_that_is_not_finite(tmp_path, eval_lines_text, kind, token):
    """plot ranks, sampled and null read what aggregate --bootstrap, sampled and null wrote: the same."""
    from conftest import run_cli
    from contract import assert_one_line_error

    pytest.importorskip("matplotlib")
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text("\n".join(eval_lines_text) + "\n")
    args, key = OTHER_OUTPUTS[kind]
    written = run_cli(*[arg.format(prefs=prefs) for arg in args])
    assert written.exit_code == 0, written.stderr
    path = spoiled(tmp_path, written.stdout.splitlines(), 2, key, token, name="output.jsonl")
    assert_one_line_error(run_cli("plot", kind, path, "-o", tmp_path / "figure.svg"), 1,
                          f"{path}:2: value of '{key}' is not a finite number ({token})")


def test_plot_pr_refuses_what_is_not_a_precision(tmp_path):
    """An interpolated precision lies in [0, 1]: 1e100 collapsed the figure (a matplotlib warning)."""
    from conftest import run_cli
    from contract import assert_one_line_error

    pytest.importorskip("matplotlib")
    written = run_cli("eval", "-q", "-R", QRELS, "-m", "iprec@0,iprec@0.5,iprec@1", RUNS[0])
    path = spoiled(tmp_path, written.stdout.splitlines(), 1, "iprec@0.5", "1e100", name="pr.jsonl")
    assert_one_line_error(run_cli("plot", "pr", path, "-o", tmp_path / "pr.svg"), 1,
                          f"{path}:1: iprec@0.5 must be a precision, in [0, 1], not 1e+100")
    path = spoiled(tmp_path, written.stdout.splitlines(), 1, "iprec@0.5", "Infinity", name="pr.jsonl")
    assert_one_line_error(run_cli("plot", "pr", path, "-o", tmp_path / "pr.svg"), 1,
                          f"{path}:1: value of 'iprec@0.5' is not a finite number (Infinity)")


# --- counts of draws, resamples and permutations far beyond any use -------------------------------

def _count_options():
    """Every option that counts random draws: (command line before the count, the option, its bound)."""
    from contract import OTHER_RUN, RUN

    from prefeval.runtime.memory import MAX_DRAWS, MAX_RESAMPLES, MAX_TIE_DRAWS

    prefs = "{prefs}"
    return {
        "sampled --draws": (["sampled", "-R", QRELS, "--num-items", "1000", "--seed", "1", RUN], "--draws", MAX_DRAWS),
        "null --draws": (["null", "-R", QRELS, "--seed", "1", RUN], "--draws", MAX_DRAWS),
        "eval --draws": (["eval", "-R", QRELS, "--ties", "expected", "--seed", "1", RUN, OTHER_RUN], "--draws",
                         MAX_TIE_DRAWS),
        "aggregate --bootstrap": (["aggregate", "-P", prefs, "--seed", "1"], "--bootstrap", MAX_RESAMPLES),
        "significance --bootstrap": (["significance", "-P", prefs, "--seed", "1"], "--bootstrap", MAX_RESAMPLES),
        "significance --permutations": (["significance", "-P", prefs, "--seed", "1", "--test", "randomization"],
                                        "--permutations", MAX_RESAMPLES),
        "plot --bootstrap": (["plot", "preferences", prefs, "-o", "{out}", "--test", "bootstrap", "--seed", "1"],
                             "--bootstrap", MAX_RESAMPLES),
        "plot --permutations": (["plot", "preferences", prefs, "-o", "{out}", "--test", "randomization", "--seed",
                                 "1"], "--permutations", MAX_RESAMPLES),
    }


COUNT_OPTIONS = list(_count_options())
HUGE_COUNTS = ["bound + 1", "100000000", "1000000000", str(2**63), str(10**40)]


@pytest.mark.parametrize("count", HUGE_COUNTS)
@pytest.mark.parametrize("option", COUNT_OPTIONS)
def test_huge_counts_of_draws_are_refused_at_once(tmp_path, eval_lines_text, option, count):
    """``--draws 100000000`` ran for days (sampled) or failed with a MemoryError traceback (eval's tie
    orders: 805 GiB); ``--bootstrap 1000000000`` ran for hours. Each count is bounded by what it
    costs: one line, exit 2, saying the bound and why, with nothing written."""
    from conftest import run_cli
    from contract import assert_one_line_error, files_in

    if option.startswith("plot"):
        pytest.importorskip("matplotlib")
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text("\n".join(eval_lines_text) + "\n")
    output = tmp_path / "out" / ("figure.svg" if option.startswith("plot") else "out.jsonl")
    output.parent.mkdir()
    args, name, bound = _count_options()[option]
    value = str(bound + 1) if count == "bound + 1" else count
    args = [arg.format(prefs=prefs, out=output) for arg in args]
    if "-o" not in args:
        args += ["-o", str(output)]
    message = assert_one_line_error(run_cli(*args, name, value), 2, f"prefeval: error: {name} {value} is too large: "
                                                                    f"at most {bound:,} (")
    assert message.endswith(")") and len(message) < 300, message
    assert files_in(output.parent) == []


@pytest.mark.parametrize("option", ["significance --bootstrap", "significance --permutations", "aggregate --bootstrap",
                                    "eval --draws"])
def test_huge_counts_are_refused_before_any_input_is_read(tmp_path, option):
    """The tests' counts, aggregate's and eval's are checked with the other options: a missing input is
    not even opened."""
    from conftest import run_cli
    from contract import assert_one_line_error

    args, name, bound = _count_options()[option]
    missing = str(tmp_path / "missing")
    args = [missing if arg in ("{prefs}", QRELS) else arg for arg in args]
    assert_one_line_error(run_cli(*args, name, str(bound + 1)), 2, f"{name} {bound + 1} is too large")


def test_counts_at_their_bounds_are_taken(tmp_path, eval_lines_text):
    """The bounds refuse nothing below them (the cheap ones are run at the bound itself)."""
    from conftest import run_cli

    from prefeval.runtime.memory import MAX_RESAMPLES

    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text("\n".join(eval_lines_text) + "\n")
    taken = run_cli("significance", "-P", prefs, "-m", "rpp", "--seed", "1", "--test", "randomization",
                    "--permutations", MAX_RESAMPLES, "--bootstrap", "10")
    assert taken.exit_code == 0, taken.stderr
