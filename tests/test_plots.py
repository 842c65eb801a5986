"""Plots: every registered kind renders a valid image, deterministically, from the right numbers."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from conftest import QRELS, RUNS, example_eval_lines, run_cli

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.orderings import kendall_tau
from prefeval.analyses.significance import pairwise_significance
from prefeval.errors import UsageError
from prefeval.report.plots import PLOT_KINDS, PlotRequest, render_plot

pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"



@pytest.fixture(scope="module")
def prefs(tmp_path_factory) -> str:
    return example_eval_lines(tmp_path_factory.mktemp("prefs") / "prefs.jsonl", "rpp,lexiprecision,ap,rr")


@pytest.fixture(scope="module")
def sampled_lines(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("sampled") / "sampled.jsonl"
    result = run_cli("sampled", "-R", QRELS, "--num-items", 300, "--sample-size", 5, "--sample-size", 20,
                 "--sample-size", 80, "-m", "ap,rr,auc", "-o", path, *RUNS)
    assert result.exit_code == 0, result.output
    return str(path)


@pytest.fixture(scope="module")
def null_lines(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("null") / "null.jsonl"
    result = run_cli("null", "-R", QRELS, "-m", "ap,p@10", "--draws", 200, "--seed", 1, "-o", path, *RUNS)
    assert result.exit_code == 0, result.output
    return str(path)


@pytest.fixture
def plot_input(request, prefs, sampled_lines, null_lines):
    """The input each kind reads: eval lines, or the lines of the command it plots."""
    return {"sampled": sampled_lines, "null": null_lines}.get(request.param, prefs)


@pytest.mark.parametrize("kind, plot_input", [(kind, kind) for kind in PLOT_KINDS], indirect=["plot_input"])
def test_every_kind_renders_a_valid_png_and_svg(kind, plot_input, tmp_path):
    png, svg = tmp_path / f"{kind}.png", tmp_path / f"{kind}.svg"
    prefs = plot_input
    assert run_cli("plot", kind, prefs, "-o", png).exit_code == 0
    result = run_cli("plot", kind, prefs, "-o", svg)
    assert result.exit_code == 0, result.output
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 5000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # the IHDR chunk
    assert width > 300 and height > 300
    root = ElementTree.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and len(list(root.iter())) > 50
    again = tmp_path / f"again.{kind}.svg"
    run_cli("plot", kind, prefs, "-o", again)
    assert again.read_bytes() == svg.read_bytes()  # no dates, no random ids


def test_preference_heatmap_shows_the_mean_preferences_in_mc4_order(prefs):
    figure = PLOT_KINDS["preferences"].draw(PlotRequest(prefs, ("rpp",)))
    axes = figure.axes[0]
    runs = [label.get_text() for label in axes.get_yticklabels()]
    assert runs == next(aggregate(prefs, ["rpp"]))["rpp"]["mc4"]
    shown = axes.images[0].get_array()
    tests = [r for r in pairwise_significance(prefs, ["rpp"], bootstrap=None) if "runi" in r]
    for test in tests:
        i, j = runs.index(test["runi"]), runs.index(test["runj"])
        assert shown[i, j] == pytest.approx(test["mean"]) and shown[j, i] == pytest.approx(-test["mean"])
    assert np.ma.getmaskarray(shown).diagonal().all()
    marks = sum(text.get_text().endswith("*") for text in axes.texts)
    assert marks == 2 * sum(t["significant"] for t in tests) > 0


def test_orderings_plot_shows_kendall_tau_between_the_measures(prefs):
    figure = PLOT_KINDS["orderings"].draw(PlotRequest(prefs, ("rpp", "ap", "rr")))
    tau_axes = next(axes for axes in figure.axes if axes.images)
    (summary,) = aggregate(prefs, ["rpp", "ap", "rr"])
    rpp, rr = summary["rpp"], summary["rr"]
    expected = kendall_tau(rpp["mc4"], rr["mean"], rpp["scores"]["mc4"], rr["scores"]["mean"])
    assert tau_axes.images[0].get_array()[0, 2] == pytest.approx(expected)
    assert tau_axes.images[0].get_array()[1, 1] == 1.0
    bump = figure.axes[0]
    assert len(bump.lines) == 4 and [line.get_ydata()[0] for line in bump.lines] == [1, 2, 3, 4]


def test_missing_matplotlib_is_one_clear_line(prefs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes ``import matplotlib`` fail
    with pytest.raises(UsageError, match=r"pip install 'prefeval\[plot\]'"):
        render_plot("preferences", PlotRequest(prefs), str(tmp_path / "x.png"))
    result = run_cli("plot", "preferences", prefs, "-o", tmp_path / "x.png")
    assert result.exit_code == 2
    assert result.stderr == "prefeval: error: plots need matplotlib: pip install 'prefeval[plot]'\n"
    assert not (tmp_path / "x.png").exists()


def test_plot_requests_that_cannot_be_met(prefs, tmp_path):
    result = run_cli("plot", "preferences", prefs, "-o", tmp_path / "x.gif")
    assert result.exit_code == 2 and "must end in .png, .svg, .pdf" in result.stderr
    result = run_cli("plot", "preferences", prefs, "-m", "rpp,ap", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and "this plot draws one measure" in result.stderr
    result = run_cli("plot", "preferences", prefs)
    assert result.exit_code == 2 and "plot needs -o FILE" in result.stderr
    result = run_cli("plot", "orderings", tmp_path / "missing.jsonl", "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and "missing.jsonl: no such file" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_sampled_plot_draws_every_run_and_the_consistency_of_every_metric(sampled_lines):
    figure = PLOT_KINDS["sampled"].draw(PlotRequest(sampled_lines, ("rr",)))
    values_axes, tau_axes = figure.axes[:2]
    assert [line.get_label() for line in values_axes.get_lines() if not line.get_label().startswith("_")] == \
        ["bm25", "dense", "hybrid", "random"]
    assert [line.get_label() for line in tau_axes.get_lines() if not line.get_label().startswith("_")] == \
        ["ap", "rr", "auc"]
    sizes = [int(float(x)) for x in values_axes.get_lines()[0].get_xdata()]
    assert sizes == [5, 20, 80]


def test_null_plot_draws_the_queries_and_the_fraction_above_the_null(null_lines):
    import orjson

    figure = PLOT_KINDS["null"].draw(PlotRequest(null_lines, ("p@10",)))
    query_axes, run_axes = figure.axes[:2]
    fractions = {r["run"]: r["fraction_above_null"]
                 for r in map(orjson.loads, Path(null_lines).read_bytes().splitlines())
                 if r.get("qid") == "all" and r["measure"] == "p@10"}
    bars = [patch.get_width() for patch in run_axes.patches]
    assert bars == pytest.approx([fractions[run] for run in ("bm25", "dense", "hybrid", "random")])
    assert len(query_axes.collections) >= 4  # the band and a scatter per run
    with pytest.raises(UsageError, match="one measure"):
        PLOT_KINDS["null"].draw(PlotRequest(null_lines, ("ap", "p@10")))
