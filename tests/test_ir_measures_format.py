"""``eval --format ir_measures``: ir_measures' own command-line output, line for line.

ir_measures orders its per-query lines by the program that computes each measure; prefeval writes
them query by query (docs/commands/trec_eval.md), so the lines are compared as sets, and the summary lines in order.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import QRELS, RUNS, run_cli
from contract import assert_one_line_error

MEASURES = "P@10 AP nDCG@10 RR R@5 Rprec NumQ NumRet NumRel Bpref SetP Judged@5"
UNTIED = [run for run in RUNS if not run.endswith("dense")]
"""The example runs whose scores hardly tie: ir_measures' Judged orders tied documents its own way
(docs/commands/trec_eval.md), the other measures as trec_eval does."""


def ir_measures_output(run: str, *options: str) -> list[str]:
    pytest.importorskip("ir_measures")
    done = subprocess.run([sys.executable, "-m", "ir_measures", QRELS, run, MEASURES, *options],
                          capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


@pytest.mark.parametrize("run", UNTIED)
def test_per_query_and_summary_lines_are_ir_measures_lines(run):
    ours = run_cli("eval", "--format", "ir_measures", "-q", "-m", MEASURES, "-R", QRELS, run)
    assert ours.exit_code == 0, ours.output
    lines = ours.stdout.splitlines()
    theirs = ir_measures_output(run, "-q")
    assert sorted(lines) == sorted(theirs)
    # the summary: the measures in the order given, as ir_measures writes them
    assert [line for line in lines if line.startswith("all\t")] == [line for line in theirs if line.startswith("all\t")]


def test_summary_alone_and_typed_names():
    ours = run_cli("eval", "--format", "ir_measures", "-m", MEASURES, "-R", QRELS, RUNS[0])
    assert ours.stdout.splitlines() == ir_measures_output(RUNS[0])
    assert [line.split("\t")[0] for line in ours.stdout.splitlines()] == MEASURES.split()


def test_hand_computed_lines(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 0\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\n")
    ours = run_cli("eval", "--format", "ir_measures", "-q", "-m", "AP,NumQ,NumRel", "-R", str(qrels), str(run))
    # q2 has no relevant document and the run lacks it: kept, every measure 0 (NumQ too, as ir_measures
    # writes it); the counts are summed
    assert ours.stdout == ("q1\tAP\t0.5000\nq1\tNumQ\t1.0000\nq1\tNumRel\t1.0000\n"
                           "q2\tAP\t0.0000\nq2\tNumQ\t0.0000\nq2\tNumRel\t0.0000\n"
                           "all\tAP\t0.2500\nall\tNumQ\t1.0000\nall\tNumRel\t1.0000\n")


def test_needs_measures_and_refuses_what_its_layout_cannot_show():
    assert_one_line_error(run_cli("eval", "--format", "ir_measures", "-R", QRELS, RUNS[0]), 2, "needs measures")
    assert_one_line_error(run_cli("eval", "--format", "ir_measures", "-m", "AP", "--samples", "2", "-R", QRELS,
                                  RUNS[0]), 2, "no --samples")
    assert_one_line_error(run_cli("eval", "--format", "ir_measures", "-m", "AP,rpp", "-R", QRELS, *RUNS[:2]), 2,
                          "shows metrics run by run; rpp: a preference")
