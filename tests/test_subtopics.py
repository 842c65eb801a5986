"""Subtopic qrels (:mod:`prefeval.io.subtopics`): the iter column read as a subtopic, the judgments
kept per subtopic beside the ad hoc view (each document's largest grade), and the first document
judged twice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import QRELS, RUNS, json_lines, run_cli, write_text
from contract import assert_one_line_error

import prefeval
from prefeval.io.inputs import load_qrels
from prefeval.io.trec import read_qrels
from prefeval.runtime.notes import Note

DIVERSITY = [
    "7 1 a 1", "7 2 a 2", "7 10 b 1", "7 2 c 0", "7 1 d -2",
    "3 0 x 1", "3 0 y 0",
    "9 1 p 0", "9 2 p 0",
]
"""Query 7 judged on subtopics 1, 2 and 10 (a relevant to two of them); query 3 of one iter value;
query 9 judged on two subtopics with no relevant document."""


def judgments(qrels) -> list[tuple[str, int, str, float]]:
    """(qid, subtopic number, docid, grade) of every judgment per subtopic."""
    subtopics = qrels.subtopics
    docids = qrels.docids.tolist()
    return [(qrels.qids[q], int(subtopics.subtopic[j]), docids[subtopics.document[j]], float(subtopics.grades[j]))
            for q in range(qrels.num_queries) for j in range(subtopics.offsets[q], subtopics.offsets[q + 1])]


def test_a_query_of_several_iter_values_keeps_its_judgments_per_subtopic(tmp_path):
    qrels = read_qrels(write_text(tmp_path / "qrels", DIVERSITY), keep_empty=True)
    assert qrels.qids == ["7", "3", "9"]
    # the ad hoc view: each document's largest grade, as before
    assert dict(zip(qrels.docids.tolist(), qrels.grades.tolist())) == {"a": 2.0, "b": 1.0, "x": 1.0}
    # subtopics numbered as numbers (10 after 2), per query
    assert judgments(qrels) == [("7", 0, "a", 1.0), ("7", 1, "a", 2.0), ("7", 2, "b", 1.0), ("3", 0, "x", 1.0)]
    assert qrels.subtopics.counts.tolist() == [3, 1, 2]
    assert qrels.subtopics.several.tolist() == [True, False, True]
    assert qrels.repeated.message() == "document 'a' is judged twice for query '7' (first on line 1)"
    assert qrels.repeated.line == 2


def test_an_ad_hoc_qrels_has_no_subtopics(tmp_path):
    qrels = read_qrels(QRELS)
    assert qrels.subtopics is None and qrels.repeated is None
    one_value_each = read_qrels(write_text(tmp_path / "q", ["1 Q0 a 1", "1 Q0 b 0", "2 5 c 1", "2 5 d 1"]))
    assert one_value_each.subtopics is None


def test_a_document_judged_twice_on_one_subtopic_keeps_its_largest_grade(tmp_path):
    qrels = read_qrels(write_text(tmp_path / "q", ["1 1 a 1", "1 1 a 3", "1 2 a 0", "1 2 b 1", "1 1 a 2"]))
    assert judgments(qrels) == [("1", 0, "a", 3.0), ("1", 1, "b", 1.0)]
    assert qrels.repeated.line == 2 and qrels.repeated.first_line == 1


def test_ids_that_are_not_all_digits_are_ordered_as_bytes(tmp_path):
    qrels = read_qrels(write_text(tmp_path / "q", ["1 b a 1", "1 10 a 1", "1 9 b 1", "1 B c 1"]))
    # bytes: "10" < "9" < "B" < "b"
    assert judgments(qrels) == [("1", 0, "a", 1.0), ("1", 1, "b", 1.0), ("1", 2, "c", 1.0), ("1", 3, "a", 1.0)]


def test_binary_relevance_and_the_floor_apply_per_subtopic(tmp_path):
    path = write_text(tmp_path / "q", ["1 1 a 1", "1 2 a 3", "1 2 b 2", "1 1 c 1"])
    assert judgments(read_qrels(path, binary_relevance=2)) == [("1", 1, "a", 1.0), ("1", 1, "b", 1.0)]
    assert judgments(read_qrels(path, relevance_floor=2)) == [("1", 1, "a", 3.0), ("1", 1, "b", 2.0)]


def test_every_reading_path_finds_the_same_subtopics(tmp_path):
    """The fast splitter, pandas' tokeniser and the line scanner (odd whitespace, comments, CRLF)."""
    plain = read_qrels(write_text(tmp_path / "plain", DIVERSITY), keep_empty=True)
    spaced = read_qrels(write_text(tmp_path / "spaced", ["# a comment"] + [line.replace(" ", "  \t") + "\r"
                                                                        for line in DIVERSITY]), keep_empty=True)
    odd = read_qrels(write_text(tmp_path / "odd", [line.replace(" ", "\v ") for line in DIVERSITY]), keep_empty=True)
    for other in (spaced, odd):
        assert judgments(other) == judgments(plain)
        assert other.subtopics.counts.tolist() == plain.subtopics.counts.tolist()
    assert spaced.repeated.line == 3  # the comment is line 1


def test_a_dataframe_with_an_iteration_column_keeps_its_subtopics():
    frame = pd.DataFrame({"query_id": ["7", "7", "7"], "iteration": [1, 2, 2], "doc_id": ["a", "a", "b"],
                          "relevance": [1, 1, 0]})
    qrels = load_qrels(frame)
    assert judgments(qrels) == [("7", 0, "a", 1.0), ("7", 1, "a", 1.0)]
    assert qrels.repeated.line is None
    assert load_qrels(frame.drop(columns="iteration")).subtopics is None
    with pytest.raises(Exception, match="column 'iteration' is missing a value"):
        load_qrels(frame.assign(iteration=[1, None, 2]))


def test_query_of_judgment_follows_the_offsets(tmp_path):
    qrels = read_qrels(write_text(tmp_path / "qrels", DIVERSITY), keep_empty=True)
    np.testing.assert_array_equal(qrels.subtopics.query_of_judgment, [0, 0, 0, 1])


# --- never read silently: the note, and trec_eval's stop ---------------------------------------------

SUBTOPIC_QRELS = ["1 1 a 2", "1 2 a 1", "1 2 b 1", "1 3 c 0", "2 1 d 1", "2 1 e 0"]
"""Query 1 judged on subtopics 1 to 3 (a twice), query 2 on one."""
SUBTOPIC_RUN = ["1 Q0 b 1 3 r", "1 Q0 a 2 2 r", "2 Q0 d 1 1 r"]


@pytest.fixture
def subtopic_files(tmp_path):
    return (write_text(tmp_path / "qrels", SUBTOPIC_QRELS), write_text(tmp_path / "run", SUBTOPIC_RUN),
            write_text(tmp_path / "run2", ["1 Q0 a 1 3 r", "2 Q0 e 1 1 r"]))


@pytest.mark.parametrize("command", [
    ["eval", "-m", "ap,ndcg"], ["eval", "--format", "tsv"], ["eval", "--format", "ir_measures", "-m", "AP"],
    ["eval", "--format", "table"], ["eval", "--engine", "stream", "-m", "ap"], ["sampled", "--num-items", "500"],
    ["null", "--draws", "20", "--seed", "1"]])
def test_every_command_that_reads_a_subtopic_qrels_says_so(subtopic_files, command):
    qrels, run, run2 = subtopic_files
    result = run_cli(*command, "-R", qrels, run, run2)
    assert result.exit_code == 0, result.stderr
    assert "1 of 2 queries judged on several subtopics (the iter column)" in result.stderr
    assert "read each document's largest grade over its subtopics" in result.stderr


def test_the_note_says_which_view_each_measure_reads(subtopic_files):
    qrels, run, run2 = subtopic_files
    result = run_cli("eval", "-m", "ap,alpha_ndcg@5,rpp,strec@2", "-R", qrels, run, run2)
    assert result.exit_code == 0
    assert ("ap, rpp read each document's largest grade over its subtopics; alpha_ndcg@5, strec@2 read the judgments "
            "per subtopic") in result.stderr


def test_the_classic_measures_read_the_largest_grade_as_before(subtopic_files, tmp_path):
    qrels, run, run2 = subtopic_files
    ad_hoc = write_text(tmp_path / "ad_hoc", ["1 0 a 2", "1 0 b 1", "1 0 c 0", "2 0 d 1", "2 0 e 0"])
    measures = ["ap", "ndcg", "p@2", "rpp", "lexirecall"]
    with pytest.warns(Note, match="judged on several subtopics"):
        ours = prefeval.evaluate(qrels, [run, run2], measures, jobs=1)
    pd.testing.assert_frame_equal(ours, prefeval.evaluate(ad_hoc, [run, run2], measures, jobs=1))


def test_trec_eval_s_layout_stops_on_a_document_judged_twice(subtopic_files, tmp_path):
    qrels, run, _ = subtopic_files
    message = assert_one_line_error(run_cli("eval", "--format", "trec_eval", "-R", qrels, run), 1)
    assert message == (f"{qrels}:2: document 'a' is judged twice for query '1' (first on line 1): trec_eval stops "
                       "on it (duplicate docs), and so do its conventions (a qrels of subtopics: the other formats "
                       "read it)")
    twice = write_text(tmp_path / "twice", ["1 0 a 1", "1 0 b 0", "1 0 a 1"])
    assert_one_line_error(run_cli("eval", "--format", "trec_eval", "-R", twice, run), 1, f"{twice}:3: document 'a' is "
                          "judged twice for query '1' (first on line 1): trec_eval stops on it (duplicate docs)")
    assert run_cli("eval", "--format", "trec_eval", "--conventions", "reference", "-R", qrels, run).exit_code == 0
    assert run_cli("eval", "-m", "ap", "-R", twice, run).exit_code == 0


def test_an_intent_aware_measure_on_ad_hoc_qrels_reads_each_query_as_one_intent():
    result = run_cli("eval", "-m", "alpha_ndcg@10", "-R", QRELS, RUNS[0])
    assert result.exit_code == 0
    assert "no query is judged on several subtopics (one iter value each): alpha_ndcg@10 read each query as one " \
           "intent" in result.stderr


def test_a_subtopic_qrels_is_read_in_memory_and_streams_the_same(subtopic_files):
    qrels, run, run2 = subtopic_files
    streamed = run_cli("eval", "-q", "--engine", "stream", "-m", "ap,alpha_ndcg@5", "-R", qrels, run, run2)
    whole = run_cli("eval", "-q", "--engine", "memory", "-m", "ap,alpha_ndcg@5", "-R", qrels, run, run2)
    assert streamed.exit_code == whole.exit_code == 0
    assert streamed.stdout == whole.stdout


def test_check_warns_of_subtopics(subtopic_files):
    qrels, run, _ = subtopic_files
    records = json_lines(run_cli("check", "-R", qrels, run).stdout)
    assert any("1 query is judged on several subtopics" in warning for warning in records[0]["warnings"])
    assert not json_lines(run_cli("check", "-R", QRELS, run).stdout)[0]["warnings"][1:]
