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
from prefeval.report.plots import INSTALL_HINT, PLOT_KINDS, PlotRequest, render_plot, run_styles

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


@pytest.fixture(scope="module")
def rank_lines(tmp_path_factory, prefs) -> str:
    path = tmp_path_factory.mktemp("ranks") / "ranks.jsonl"
    result = run_cli("aggregate", "-P", prefs, "-m", "ap,rpp", "--bootstrap", 200, "--seed", 1, "-o", path)
    assert result.exit_code == 0, result.output
    return str(path)


@pytest.fixture(scope="module")
def pr_lines(tmp_path_factory) -> str:
    """Eval lines with interpolated precision at the 11 recall levels, for ``plot pr``."""
    return example_eval_lines(tmp_path_factory.mktemp("pr") / "pr.jsonl",
                              ",".join(f"iprec@{level / 10:g}" for level in range(11)))


@pytest.fixture
def plot_input(request, prefs, sampled_lines, null_lines, rank_lines, pr_lines):
    """The input each kind reads: eval lines, or the lines of the command it plots."""
    return {"sampled": sampled_lines, "null": null_lines, "ranks": rank_lines, "pr": pr_lines}.get(request.param,
                                                                                                  prefs)


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
    with pytest.raises(UsageError, match=r"pip install matplotlib \(or pip install '\.\[plot\]' in a checkout"):
        render_plot("preferences", PlotRequest(prefs), str(tmp_path / "x.png"))
    result = run_cli("plot", "preferences", prefs, "-o", tmp_path / "x.png")
    assert result.exit_code == 2
    assert result.stderr == f"prefeval: error: {INSTALL_HINT}\n"
    assert "prefeval[plot]" not in INSTALL_HINT  # not published: that extra cannot be installed by name
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
    ranked = sorted(fractions, key=lambda run: (-fractions[run], run))
    assert [label.get_text() for label in run_axes.get_yticklabels()] == ranked
    assert bars == pytest.approx([fractions[run] for run in ranked])
    assert len(query_axes.collections) >= 4  # the band and a scatter per run
    with pytest.raises(UsageError, match="one measure"):
        PLOT_KINDS["null"].draw(PlotRequest(null_lines, ("ap", "p@10")))


def test_rank_plot_draws_every_interval_and_tier(rank_lines):
    import orjson

    records = [r for r in map(orjson.loads, Path(rank_lines).read_bytes().splitlines()) if "tier" in r]
    figure = PLOT_KINDS["ranks"].draw(PlotRequest(rank_lines))
    panels = [axes for axes in figure.axes if axes.get_title()]
    assert [axes.get_title() for axes in panels] == ["ap · mean", "rpp · mc4", "rpp · borda"]
    for axes, (measure, method) in zip(panels, [("ap", "mean"), ("rpp", "mc4"), ("rpp", "borda")]):
        mine = [r for r in records if r["measure"] == measure and r["method"] == method]
        assert [label.get_text() for label in axes.get_yticklabels()] == [r["run"] for r in mine]
        segments = axes.collections[0].get_segments()  # the intervals
        np.testing.assert_allclose([(s[0][0] + 0.3, s[1][0] - 0.3) for s in segments],
                                   [(r["rank_low"], r["rank_high"]) for r in mine])
        dots = axes.collections[1].get_offsets()
        assert dots[:, 0].tolist() == [r["rank"] for r in mine]
        assert np.asarray(axes.images[0].get_array()).tolist() == [r["rank_probabilities"] for r in mine]
        tiers = sorted({r["tier"] for r in mine})
        assert [t.get_text() for t in axes.texts] == [f"tier {t}" for t in tiers]
    only = PLOT_KINDS["ranks"].draw(PlotRequest(rank_lines, ("rpp",)))
    assert [axes.get_title() for axes in only.axes if axes.get_title()] == ["rpp · mc4", "rpp · borda"]


def test_rank_plot_needs_bootstrap_lines(prefs, tmp_path):
    result = run_cli("plot", "ranks", prefs, "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and "no rank intervals: write them with prefeval aggregate --bootstrap B" in \
        result.stderr
    summary = tmp_path / "summary.jsonl"
    run_cli("aggregate", "-P", prefs, "-o", summary)
    result = run_cli("plot", "ranks", summary, "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and "no rank intervals" in result.stderr


def test_size_and_resolution(prefs, tmp_path):
    def png_size(path):
        data = path.read_bytes()
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")

    run_cli("plot", "orderings", prefs, "-o", tmp_path / "default.png")
    run_cli("plot", "orderings", prefs, "-o", tmp_path / "sized.png", "--width", 6, "--height", 4, "--dpi", 100)
    assert png_size(tmp_path / "sized.png") == (600, 400)
    run_cli("plot", "orderings", prefs, "-o", tmp_path / "wide.png", "--width", 10)
    width, height = png_size(tmp_path / "wide.png")
    assert width == 2000 and height == png_size(tmp_path / "default.png")[1]  # 200 dpi by default
    result = run_cli("plot", "orderings", prefs, "-o", tmp_path / "x.png", "--dpi", 5)
    assert result.exit_code == 2 and not (tmp_path / "x.png").exists()
    with pytest.raises(UsageError, match="width must be a number from 1 to 100"):
        PlotRequest(prefs, width=0.5)


def test_significance_options_belong_to_the_preferences_plot(prefs, tmp_path):
    result = run_cli("plot", "orderings", prefs, "--test", "sign", "--alpha", "0.01", "-o", tmp_path / "x.png")
    assert result.exit_code == 2 and result.stderr == (
        "prefeval: error: --test, --alpha: only plot preferences marks significance; plot orderings has no tests\n")
    assert not (tmp_path / "x.png").exists()
    assert run_cli("plot", "preferences", prefs, "--test", "sign", "-o", tmp_path / "x.png").exit_code == 0
    help_text = run_cli("plot", "--help").stdout
    assert "preferences only" in help_text and "the confidence intervals" not in help_text
    assert "--dpi" in help_text and "--width" in help_text and "ranks" in help_text


def test_runs_look_distinct_beyond_ten():
    few = run_styles([f"r{n}" for n in range(10)])
    assert len({style.colour for style in few.values()}) == 10
    many = run_styles([f"r{n}" for n in range(100)])
    assert len({(style.colour, style.marker) for style in many.values()}) == 100
    seventeen = list(run_styles([f"r{n}" for n in range(17)]).values())
    assert len({style.marker for style in seventeen}) == 10


def test_kendall_tau_scale_follows_the_values(prefs):
    figure = PLOT_KINDS["orderings"].draw(PlotRequest(prefs, ("rpp", "ap", "rr")))
    image = next(axes for axes in figure.axes if axes.images).images[0]
    values = np.ma.getdata(image.get_array())
    assert image.norm.vmax == 1.0
    assert image.norm.vmin == pytest.approx(max(-1.0, min(0.9, np.floor(values.min() * 10 + 1e-9) / 10)))
    assert image.norm.vmin > -1.0


@pytest.mark.parametrize("change, message", [
    ({"rank_high": "x"}, "'rank_high' must be a positive integer"),
    ({"rank_probabilities": "zz"}, "'rank_probabilities' must be a list of probabilities"),
    ({"rank_probabilities": [2.0]}, "'rank_probabilities' must be a list of probabilities"),
    ({"rank_low": 3, "rank_high": 2}, "the interval must run from rank_low to rank_high"),
    ({"run": 7}, "'run' must be a string"),
])
def test_rank_plot_names_a_bad_line(tmp_path, change, message):
    import orjson

    good = {"qid": "all", "sample": 0, "measure": "ap", "method": "mean", "run": "A", "rank": 1, "score": 0.5,
            "rank_low": 1, "rank_high": 2, "tier": 1, "rank_probabilities": [0.5, 0.5], "resamples": 10}
    path = tmp_path / "ranks.jsonl"
    path.write_bytes(orjson.dumps(good) + b"\n" + orjson.dumps(good | {"run": "B"} | change) + b"\n")
    result = run_cli("plot", "ranks", path, "-o", tmp_path / "x.png")
    assert result.exit_code == 1 and result.stdout == "" and not (tmp_path / "x.png").exists()
    assert result.stderr.startswith(f"prefeval: error: {path}:2: not a rank interval of aggregate --bootstrap: ")
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_a_figure_draws_the_values_it_is_given():
    """A kind's figure needs no input file: reading and computing are the read step's
    (:mod:`prefeval.analyses`), the figure draws what it is handed."""
    from prefeval.analyses.significance import PreferenceMatrix, SignificanceOptions

    means = np.array([[np.nan, 0.5], [-0.5, np.nan]])
    significant = np.array([[False, True], [True, False]])
    matrix = PreferenceMatrix("rpp", ["A", "B"], "mc4", means, significant, SignificanceOptions())
    figure = PLOT_KINDS["preferences"].figure(matrix, PlotRequest("no such file"))
    heatmap = figure.axes[0]
    assert [text.get_text() for text in heatmap.texts] == ["0.50*", "-0.50*"]
    assert heatmap.get_title() == ("rpp: mean preference of row over column\n"
                                   "runs by MC4; * significant (paired t-test, Holm correction, alpha 0.05)")

