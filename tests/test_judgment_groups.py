"""Judgment groups (``--rel-format qrels_jg``) and trec_eval's ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg`` (prefeval's ``ap_avgjg``, ``p_avgjg``, ``rp_mult_avgjg``): each the mean over a
query's groups of the measure on that group's judgments, checked against the measure on each group's
judgments read as a qrels, on random collections and by hand; trec_eval's outputs are compared in
tests/test_prefs.py (its cases and quicktest commands cover qrels_jg)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli, write_text
from contract import assert_one_line_error
from hypothesis import given, settings
from hypothesis import strategies as st
from judged import group_qrels, judged, ranked, runs_over

import prefeval
from prefeval.io.fields import TextColumn
from prefeval.io.trec import qrels_from_columns
from prefeval.measures import parse_measure
from prefeval.ranking.positions import Selection, binary_positions

AVERAGED = {"ap_avgjg": "ap", "p_avgjg@3": "p@3", "p_avgjg@0": "p@0", "rp_mult_avgjg@0.5": "rp_mult@0.5",
            "rp_mult_avgjg": "rp_mult", "ap_avgjg@2": "ap@2", "compat": "compat"}


def on_qrels(name: str, lines, runs, level=None) -> np.ndarray:
    """``name`` computed on ``lines`` (qid, jg, docid, grade) read as one qrels (R, Q); a query ``zz``
    judged and retrieved by every run is added last, so that no run lacks every query."""
    lines = [*lines, ("zz", "", "zz-d", 1.0)]
    runs = [[*run, ("zz", "zz-d", 1.0)] for run in runs]
    qids, _, docids, grades = zip(*lines)
    qrels = qrels_from_columns("<qrels>", TextColumn.of_texts(qids), TextColumn.of_texts(docids),
                               np.array(grades, dtype=np.float64), keep_empty=True)
    table = ranked(qrels, runs)
    measure = parse_measure(name)
    level = None if measure.reads_grades else level
    return measure.compute(binary_positions(table, Selection.everything(table).at_relevance_level(table, level)))


@st.composite
def group_lines(draw, groups: int = 3):
    lines, documents = [], {}
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{q}{d}" for d in range(draw(st.integers(1, 6)))]
        documents[f"q{q}"] = docs
        for g in range(draw(st.integers(1, groups))):
            subset = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=len(docs)))
            lines += [(f"q{q}", f"g{g}", doc, float(draw(st.integers(-1, 3)))) for doc in subset]
    return lines, documents


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_mean_over_groups_is_the_mean_of_each_groups_qrels(data):
    """measure_avgjg = (1/G) Σ_g measure on group g's judgments as a qrels, at any relevance level;
    with one group it is the measure itself (compat, too: its own average over groups)."""
    lines, documents = data.draw(group_lines())
    runs = data.draw(runs_over(documents, 2))
    level = data.draw(st.sampled_from([None, 2.0]))
    table = ranked(group_qrels(lines), runs)
    for name, base in AVERAGED.items():
        measure = parse_measure(name)
        if name == "compat":
            values = judged(table, level=level).group_average(measure)
        else:
            values = measure.compute(judged(table, level=level))
        expected = np.zeros_like(values)
        for column, qid in enumerate(table.qids):
            mine = [line for line in lines if line[0] == qid]
            groups = sorted({line[1] for line in mine})
            for group in groups:
                group_part = [line for line in mine if line[1] == group]
                column_of = {q: c for c, q in enumerate(dict.fromkeys(line[0] for line in group_part))}
                expected[:, column] += on_qrels(base, group_part, runs, level)[:, column_of[qid]] / len(groups)
        np.testing.assert_allclose(values, expected, atol=1e-12, err_msg=name)


def test_a_group_that_finds_nothing_relevant_counts(tmp_path):
    """Query 1: group A finds a relevant (AP 1 for a run that puts it first), B nothing (AP 0):
    map_avgjg = 0.5. Query 2 is judged by A alone: its AP."""
    qrels = write_text(tmp_path / "jg", ["1 A a 1", "1 A b 0", "1 B a 0", "1 B b 0", "2 A c 2", "2 A d 1"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 2 t", "1 Q0 b 2 1 t", "2 Q0 x 1 2 t", "2 Q0 d 2 1 t"])
    frame = prefeval.evaluate(qrels, [run], ["map_avgjg", "P_avgjg.1", "Rprec_mult_avgjg.1"], rel_format="qrels_jg",
                              conventions="trec_eval")
    assert list(frame["ap_avgjg"]) == [0.5, 0.25]  # query 2: d at rank 2 of 2 relevant: (1/2) / 2
    assert list(frame["p_avgjg@1"]) == [0.5, 0.0]
    assert list(frame["rp_mult_avgjg@1.0"]) == [0.5, 0.5]


def test_judged_only_ranks_each_groups_documents_among_those_it_judged(tmp_path):
    """-J: group A judged b (0) and a (1), B only a; the run x (unjudged), b, a puts a second among
    A's judged documents (AP 1/2) and first among B's (AP 1): map_avgjg 0.75 (0.5 without -J: a is
    third)."""
    qrels = write_text(tmp_path / "jg", ["1 A a 1", "1 A b 0", "1 B a 1"])
    run = write_text(tmp_path / "run", ["1 Q0 x 1 3 t", "1 Q0 b 2 2 t", "1 Q0 a 3 1 t"])
    judged_only = prefeval.evaluate(qrels, [run], ["map_avgjg"], rel_format="qrels_jg", judged_only=True)
    plain = prefeval.evaluate(qrels, [run], ["map_avgjg"], rel_format="qrels_jg")
    assert judged_only["ap_avgjg"].iloc[0] == 0.75 and plain["ap_avgjg"].iloc[0] == pytest.approx(1 / 3)


def test_grades_are_mapped_per_group_by_b_and_f(tmp_path):
    qrels = write_text(tmp_path / "jg", ["1 A a 1", "1 A b 2", "1 B a 2", "1 B b 1"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 2 t", "1 Q0 b 2 1 t"])
    plain = prefeval.evaluate(qrels, [run], ["P_avgjg.1"], rel_format="qrels_jg")
    mapped = prefeval.evaluate(qrels, [run], ["P_avgjg.1"], rel_format="qrels_jg", binary_relevance=2)
    assert plain["p_avgjg@1"].iloc[0] == 1.0 and mapped["p_avgjg@1"].iloc[0] == 0.5


@pytest.mark.filterwarnings("ignore::prefeval.runtime.notes.Note")
def test_queries_without_a_relevant_document_follow_the_conventions(tmp_path):
    qrels = write_text(tmp_path / "jg", ["1 A a 1", "2 A b 0", "2 B b -1"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 2 t", "2 Q0 b 1 1 t"])
    dropped = prefeval.evaluate(qrels, [run], ["map_avgjg"], rel_format="qrels_jg")
    kept = prefeval.evaluate(qrels, [run], ["map_avgjg"], rel_format="qrels_jg", conventions="trec_eval")
    assert list(dropped["qid"]) == ["1"] and list(kept["qid"]) == ["1", "2"] and kept["ap_avgjg"].iloc[1] == 0


@pytest.mark.parametrize(("lines", "line", "fragments"), [
    (["1 A a 1", "1 A a 2"], 2, ["document 'a' is judged twice by judgment group 'A' of query '1'",
                                 "first on line 1", "duplicate docs"]),
    (["1 A a 1", "1 A b"], 2, ["expected 4 fields (qid jg docid grade), found 3"]),
    (["1 A a 1", "1 A b two"], 2, ["grade 'two' is not a number"]),
    (["# nothing"], None, ["no qrels_jg lines"]),
])
def test_a_malformed_qrels_jg_is_one_line_naming_file_and_line(lines, line, fragments, tmp_path):
    path = write_text(tmp_path / "jg", lines)
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "qrels_jg", "-m", "map_avgjg", "-R", path, run)
    assert_one_line_error(result, 1, f"{path}:{line}: " if line else f"{path}: ", *fragments)


@pytest.mark.parametrize(("arguments", "fragments"), [
    (["-m", "map"], ["ap reads one grade per document", "map_avgjg"]),
    (["-m", "prefs_simp"], ["prefs_simp reads preferences"]),
    (["-m", "ap_avgjg@10,judged_only=1"], ["judged_only"]),
    (["--format", "ir_measures", "-m", "map_avgjg"], ["ir_measures has no measures of judgment groups"]),
    ([], ["name its measures with -m", "qrels_jg"]),
])
def test_what_judgment_groups_cannot_give_is_refused_in_one_line(arguments, fragments, tmp_path):
    path = write_text(tmp_path / "jg", ["1 A a 1"])
    run = write_text(tmp_path / "run", ["1 Q0 a 1 1 t"])
    result = run_cli("eval", "--rel-format", "qrels_jg", *arguments, "-R", path, run)
    assert_one_line_error(result, 2, *fragments)


def test_the_measures_take_their_base_measures_parameters():
    assert parse_measure("P_avgjg.10").name == "p_avgjg@10"
    assert parse_measure("Rprec_mult_avgjg.0.4").name == "rp_mult_avgjg@0.4"
    assert parse_measure("ap_avgjg@5,rel=2").name == "ap_avgjg@5,rel=2.0"
    assert [m.name for m in prefeval.measures.parse_measures(["qrels_jg"])][:3] == ["num_q", "ap_avgjg", "p_avgjg@5"]
