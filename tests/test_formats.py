"""Report formats: trec_eval's text layout, tsv rows, and tables in text, Markdown and LaTeX."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from conftest import QRELS, RUNS, json_lines, run_cli, write_qrels, write_run

import prefeval
from prefeval.engine.evaluation import Evaluation
from prefeval.measures import parse_measure
from prefeval.measures.request import layout_name
from prefeval.report.evaluation import write_evaluation
from prefeval.report.formats import full_precision, tsv_text
from prefeval.report.tables import BETTER, WORSE, Cell, Table, render

pytrec_eval = pytest.importorskip("pytrec_eval")





def test_trec_eval_names():
    """What the trec_eval layouts (tsv, trec_eval) print for a measure: trec_eval's name, or prefeval's,
    written in full where trec_eval gives that name to another measure (prefeval's rbp beside
    trec_eval's rbp, which is prefeval's trec_rbp)."""
    names = {m: layout_name(parse_measure(m), "trec_eval") for m in (
        "ap", "ap@100", "ndcg", "ndcg@10", "p@10", "p@0", "r@10", "r@0", "rr", "rp", "rr@10", "rbp", "trec_rbp",
        "rpp", "lexiprecision", "sgnLP")}
    assert names == {"ap": "map", "ap@100": "map_cut_100", "ndcg": "ndcg", "ndcg@10": "ndcg_cut_10", "p@10": "P_10",
                     "p@0": "set_P", "r@10": "recall_10", "r@0": "set_recall", "rr": "recip_rank", "rp": "Rprec",
                     "rr@10": "rr@10", "rbp": "rbp@0.5", "trec_rbp": "rbp", "rpp": "rpp",
                     "lexiprecision": "lexiprecision", "sgnLP": "lexiprecision"}


def test_eval_tsv_is_trec_eval_text_output(tmp_path):
    """The whole output of ``eval -q --format tsv`` for one run, line for line, against trec_eval's
    values (pytrec-eval-terrier) printed as trec_eval prints them: "%-22s\\t%s\\t%6.4f\\n"."""
    rng = np.random.default_rng(11)
    qids = [f"{300 + q}" for q in range(6)]
    qrels = {q: {f"d{q}-{d}": int(g) for d, g in enumerate(rng.choice([0, 0, 1, 1, 2], size=40))} for q in qids}
    ranking = {q: {f"d{q}-{d}": float(s) for d, s in enumerate(np.round(rng.normal(size=60), 2))} for q in qids}
    qrels_path, run_path = write_qrels(tmp_path / "qrels", qrels), write_run(tmp_path / "run", ranking)
    ours = run_cli("eval", "-q", "-R", qrels_path, "-m", "ap,ap@10,ndcg,ndcg@10,p@5,10,r@10,rr,rp,p@0,r@0",
                   "--format", "tsv", run_path)
    assert ours.exit_code == 0, ours.output

    names = ["map", "map_cut_10", "ndcg", "ndcg_cut_10", "P_5", "P_10", "recall_10", "recip_rank", "Rprec", "set_P",
             "set_recall"]
    values = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "ndcg", "ndcg_cut", "P", "recall", "recip_rank",
                                                    "Rprec", "set_P", "set_recall"}).evaluate(ranking)
    expected = [f"{name:<22}\t{qid}\t{values[qid][name]:6.4f}" for qid in qids for name in names]
    expected += [f"{name:<22}\tall\t{np.mean([values[q][name] for q in qids]):6.4f}" for name in names]
    assert ours.stdout.splitlines() == expected


def test_eval_tsv_with_several_runs_and_samples():
    output = run_cli("eval", "-R", QRELS, "-m", "ap,rpp", "--format", "tsv", *RUNS[:2]).stdout.splitlines()
    assert output == [
        "bm25/dense\tmap                   \tall\t-0.2277",
        "bm25/dense\trpp                   \tall\t-0.3967",
        "bm25\tmap                   \tall\t0.4676",
        "dense\tmap                   \tall\t0.6953",
    ]
    sampled = run_cli("eval", "-R", QRELS, "-m", "ap", "--samples", "2", "--query-fraction", "0.5", "--seed", "3",
                  "--format", "tsv", RUNS[0]).stdout.splitlines()
    assert [line.split("\t")[0] for line in sampled] == ["0", "1"]
    assert [line.split("\t")[1].strip() for line in sampled] == ["map", "map"]


def test_eval_table_holds_the_summary_means():
    means = prefeval.evaluate(QRELS, RUNS, ["ap", "ndcg@10"], per_query=False).set_index("run")
    prefs = prefeval.compare(QRELS, RUNS, ["rpp"], per_query=False)
    output = run_cli("eval", "-R", QRELS, "-m", "ap,ndcg@10,rpp", "--format", "table", *RUNS).stdout.splitlines()
    assert output[0].split() == ["run", "ap", "ndcg@10", "rpp"]
    rows = {line.split()[0]: line.split()[1:] for line in output[2:6]}
    for name in ("bm25", "dense", "hybrid", "random"):
        assert rows[name][:2] == [f"{means.loc[name, 'ap']:.4f}", f"{means.loc[name, 'ndcg@10']:.4f}"]
        over_others = (prefs.loc[prefs.runi == name, "rpp"].sum() - prefs.loc[prefs.runj == name, "rpp"].sum()) / 3
        assert rows[name][2] == f"{over_others:.4f}"


def test_eval_baseline_markers_agree_with_significance(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "ap,rr,rpp", "-o", prefs, *RUNS)
    tests = [r for r in json_lines(run_cli("significance", "-P", prefs, "--baseline", "bm25", "--seed", "1").stdout)
             if "runi" in r]
    table = run_cli("eval", "-R", QRELS, "-m", "ap,rr,rpp", "--format", "markdown", "--baseline", "bm25", *RUNS)
    assert table.exit_code == 0, table.output
    rows = {row.split(" | ")[0].strip("| "): [c.strip(" |") for c in row.split(" | ")[1:]]
            for row in table.stdout.splitlines()[2:6]}
    assert rows["bm25"][2] == "—"
    for test in tests:
        shown = rows[test["runi"]][["ap", "rr", "rpp"].index(test["measure"])].replace("**", "")
        marker = ("↑" if test["mean"] > 0 else "↓") if test["significant"] else ""
        assert shown.endswith(marker) and (marker or shown[-1].isdigit())
        if test["measure"] == "rpp":  # a preference over the baseline; metrics show their own means
            assert shown == f"{test['mean']:.4f}{marker}"
    assert (sum("↑" in cell or "↓" in cell for cell in sum(rows.values(), []))
            == sum(t["significant"] for t in tests) > 0)


def test_eval_format_requests_that_cannot_be_met():
    result = run_cli("eval", "-q", "-R", QRELS, "--format", "table", *RUNS)
    assert result.exit_code == 2 and "drop -q and -n" in result.stderr and result.stdout == ""
    result = run_cli("eval", "-R", QRELS, "--format", "tsv", "--baseline", "bm25", *RUNS)
    assert result.exit_code == 2 and "--baseline marks significance in the table formats" in result.stderr
    result = run_cli("eval", "-R", QRELS, "--format", "table", "--baseline", "nope", *RUNS)
    assert result.exit_code == 2 and "baseline 'nope' is not one of the runs" in result.stderr


def test_aggregate_tsv_and_table_follow_the_orderings(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "rpp,ap", "-o", prefs, *RUNS)
    (summary,) = json_lines(run_cli("aggregate", "-P", prefs).stdout)
    tsv = pd.read_csv(io.StringIO(run_cli("aggregate", "-P", prefs, "-q", "--format", "tsv").stdout), sep="\t",
                      dtype={"qid": str})
    assert list(tsv.columns) == ["sample", "qid", "measure", "method", "position", "run", "score"]
    assert len(tsv) == 7 * 2 * 4 + 3 * 4  # 7 queries × 2 measures × 4 runs, then mc4, borda and mean orderings
    mc4 = tsv[(tsv.qid == "all") & (tsv.method == "mc4")]
    assert mc4.run.tolist() == summary["rpp"]["mc4"] and mc4.position.tolist() == [1, 2, 3, 4]
    assert mc4.score.tolist() == pytest.approx([summary["rpp"]["scores"]["mc4"][r] for r in mc4.run])

    table = run_cli("aggregate", "-P", prefs, "--format", "table").stdout.splitlines()
    assert table[0].split("  ")[0] == "run" and "rpp mc4" in table[0] and "ap mean" in table[0]
    assert [line.split()[0] for line in table[2:6]] == summary["rpp"]["mc4"]
    assert [line.split()[1] for line in table[2:6]] == ["1", "2", "3", "4"]
    result = run_cli("aggregate", "-P", prefs, "-q", "--format", "markdown")
    assert result.exit_code == 2 and "per-query orderings (-q) need jsonl or tsv" in result.stderr


def test_significance_tsv_is_the_json_lines_as_rows(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "rpp,ap", "-o", prefs, *RUNS)
    args = ["significance", "-P", prefs, "--seed", "2", "--bootstrap", "200"]
    lines = [r for r in json_lines(run_cli(*args).stdout) if "runi" in r]
    frame = pd.read_csv(io.StringIO(run_cli(*args, "--format", "tsv").stdout), sep="\t")
    assert list(frame.columns) == ["sample", "runi", "runj", "measure", "test", "mean", "wins", "losses", "ties", "p",
                                   "p_corrected", "ci_low", "ci_high", "effect_size", "significant"]
    assert len(frame) == len(lines) == 12
    for row, line in zip(frame.to_dict("records"), lines):
        assert row == {key: line[key] for key in row}  # full precision: the floats round-trip exactly


def test_significance_table_marks_and_discriminative_power(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    run_cli("eval", "-q", "-R", QRELS, "-m", "rpp,ap", "-o", prefs, *RUNS)
    lines = json_lines(run_cli("significance", "-P", prefs, "--seed", "2", "--bootstrap", "200").stdout)
    table = run_cli("significance", "-P", prefs, "--seed", "2", "--bootstrap", "200",
                    "--format", "table").stdout.splitlines()
    assert table[0].split() == ["runi", "runj", "rpp", "ap"]
    pair_rows = [line.split() for line in table[2:8]]
    for line in (r for r in lines if "runi" in r):
        (row,) = [row for row in pair_rows if row[:2] == [line["runi"], line["runj"]]]
        marker = ("↑" if line["mean"] > 0 else "↓") if line["significant"] else ""
        assert row[2 + ["rpp", "ap"].index(line["measure"])] == f"{line['mean']:.4f}{marker}"
    power = {r["measure"]: r["discriminative_power"] for r in lines if "discriminative_power" in r}
    assert table[8].split()[-2:] == [f"{power['rpp']:.4f}", f"{power['ap']:.4f}"]
    assert "(paired t-test, Holm correction, alpha 0.05)" in table[-1]


def test_table_renderings_by_hand():
    table = Table(["run", "ap", "p@10"], [["A_1", Cell("0.5000", BETTER, bold=True), Cell("0.1000")],
                                         ["B", Cell("0.2500"), Cell("-0.3000", WORSE)]], notes=["a note: > 0 ↑"])
    assert render(table, "table") == (
        "run       ap      p@10\n"
        "---  -------  --------\n"
        "A_1  0.5000↑   0.1000\n"
        "B    0.2500   -0.3000↓\n"
        "\n"
        "a note: > 0 ↑\n"
    )
    assert render(table, "markdown") == (
        "| run | ap | p@10 |\n"
        "|---|---:|---:|\n"
        "| A_1 | **0.5000**↑ | 0.1000 |\n"
        "| B | 0.2500 | -0.3000↓ |\n"
        "\n"
        "a note: > 0 ↑\n"
    )
    assert render(table, "latex") == (
        "\\begin{table}\n"
        "  \\centering\n"
        "  \\begin{tabular}{lrr}\n"
        "    \\toprule\n"
        "    run & ap & p@10 \\\\\n"
        "    \\midrule\n"
        "    A\\_1 & \\textbf{0.5000}$^{\\uparrow}$ & 0.1000 \\\\\n"
        "    B & 0.2500 & -0.3000$^{\\downarrow}$ \\\\\n"
        "    \\bottomrule\n"
        "  \\end{tabular}\n"
        "  \\caption{a note: \\textgreater{} 0 $^{\\uparrow}$}\n"
        "\\end{table}\n"
    )


# --- ids that would break a tsv row (issue 11) --------------------------------------------------------

def test_tsv_text_escapes_what_would_break_a_row():
    assert tsv_text("plain") == "plain"
    assert tsv_text("a\tb\nc\rd\\e") == "a\\tb\\nc\\rd\\\\e"
    assert tsv_text("a/b", also="/") == "a\\/b" and tsv_text("a/b") == "a/b"
    assert full_precision("x\ty") == "x\\ty" and full_precision(0.1) == "0.1" and full_precision(True) == "true"


def test_eval_tsv_keeps_its_columns_with_tabs_and_line_breaks_in_run_ids(tmp_path):
    names = ["bm\t25", "de\nnse", "hy\\brid"]
    runs = []
    for name, source in zip(names, RUNS):
        path = tmp_path / name
        path.write_bytes(open(source, "rb").read())
        runs.append(str(path))
    result = run_cli("eval", "-R", QRELS, "-m", "ap", "--format", "tsv", *runs)
    assert result.exit_code == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert len(rows) == 3 + 3 and all(len(row) == 4 for row in rows)
    shown = ["bm\\t25", "de\\nnse", "hy\\\\brid"]
    assert [row[0] for row in rows] == [f"{shown[0]}/{shown[1]}", f"{shown[0]}/{shown[2]}", f"{shown[1]}/{shown[2]}",
                                        *shown]


def test_eval_tsv_escapes_the_slash_of_a_run_named_in_python():
    evaluation = Evaluation.from_files(QRELS, {"a/b": RUNS[0], "c": RUNS[1]}, ["ap"], jobs=1)
    stream = io.BytesIO()
    write_evaluation(evaluation, stream, "tsv")
    assert [line.split("\t")[0] for line in stream.getvalue().decode().splitlines()] == ["a\\/b/c", "a/b", "c"]


def test_aggregate_and_significance_tsv_escape_run_ids(tmp_path):
    frame = prefeval.compare(QRELS, {"bm\t25": RUNS[0], "de\nnse": RUNS[1], "hybrid": RUNS[2]}, ["rpp"])
    metrics = prefeval.evaluate(QRELS, {"bm\t25": RUNS[0], "de\nnse": RUNS[1], "hybrid": RUNS[2]}, ["ap"])
    prefs = tmp_path / "prefs.jsonl"
    lines = [frame.assign(type="preference"), metrics.assign(type="metric")]
    prefs.write_text("".join(part.to_json(orient="records", lines=True) for part in lines))
    for args in (["aggregate", "-P", prefs, "-q", "--format", "tsv"],
                 ["significance", "-P", prefs, "--seed", "1", "--bootstrap", "50", "--format", "tsv"]):
        result = run_cli(*args)
        assert result.exit_code == 0, result.stderr
        rows = [line.split("\t") for line in result.stdout.splitlines()]
        assert len({len(row) for row in rows}) == 1
        assert "bm\\t25" in result.stdout and "de\\nnse" in result.stdout
