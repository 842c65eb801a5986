"""Ranking runs into the RankTable: trec_eval's ordering, topk, missing queries, duplicates."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import write_qrels, write_run, write_text
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.errors import InputError
from prefeval.io.fields import TextColumn
from prefeval.io.trec import QRELS_FORMAT, RUN_FORMAT, LineNumbers, RunColumns, qrels_from_columns, read_fields
from prefeval.ranking.loading import load_collection
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant, rank_within_queries


def table_for(tmp_path, judgments, *runs, topk=None) -> RankTable:
    qrels = write_qrels(tmp_path / "qrels", judgments)
    paths = [write_run(tmp_path / f"run{n}", scores) for n, scores in enumerate(runs)]
    return load_collection(qrels, paths, RelevanceOptions(topk=topk))


def test_documents_sorted_by_score_then_docid_descending(tmp_path):
    # rank column ignored; equal scores ordered by docid descending (byte-wise), as trec_eval does
    judgments = {"q": {"d10": 1, "d9": 1, "a": 1, "B": 1}}
    run = {"q": {"a": 1.0, "d9": 2.0, "x": 2.0, "d10": 2.0, "B": 1.0, "z": 0.5}}
    table = table_for(tmp_path, judgments, run)
    # order: x, d9, d10 (score 2; 'x' > 'd9' > 'd10'), then a, B (score 1; 'a' > 'B'), then z
    assert dict(zip(table.qrels.docids.tolist(), table.ranks[0])) == {"d10": 3.0, "d9": 2.0, "a": 4.0, "B": 5.0}
    assert table.num_retrieved[0].tolist() == [6]


def test_unicode_docids_tie_in_byte_order(tmp_path):
    judgments = {"q": {"é": 1, "z": 1, "€": 1}}
    table = table_for(tmp_path, judgments, {"q": {"z": 1.0, "é": 1.0, "€": 1.0}})
    # UTF-8 bytes: 'z' 7a < 'é' c3a9 < '€' e282ac, so descending: €, é, z
    assert dict(zip(table.qrels.docids.tolist(), table.ranks[0])) == {"€": 1.0, "é": 2.0, "z": 3.0}


def test_topk_truncates_ranking_and_counts(tmp_path):
    judgments = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 5.0, "n1": 4.0, "b": 3.0, "n2": 2.0, "c": 1.0}}
    table = table_for(tmp_path, judgments, run, topk=3)
    assert table.ranks[0].tolist() == [1.0, 3.0, np.inf]
    assert table.num_retrieved[0].tolist() == [3]


def test_missing_query_is_worst_case_and_unjudged_queries_ignored(tmp_path):
    judgments = {"q1": {"a": 1}, "q2": {"b": 2, "c": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"b": 1.0}}
    table = table_for(tmp_path, judgments, run)
    assert table.ranks[0].tolist() == [1.0, np.inf, np.inf]
    assert table.in_run[0].tolist() == [True, False]
    assert table.num_retrieved[0].tolist() == [1, 0]


def test_duplicate_document_names_both_lines(tmp_path):
    qrels = (write_qrels(tmp_path / "qrels", {"q": {"a": 1}}))
    path = write_text(tmp_path / "run", ["q Q0 a 1 3 t", "q Q0 b 2 2 t", "q Q0 a 3 1 t"])
    with pytest.raises(InputError, match=r"document 'a' appears twice for query 'q' \(first on line 1\)") as caught:
        load_collection(qrels, [path])
    assert caught.value.line == 3
    assert caught.value.source == path


def test_same_document_in_two_queries_is_fine(tmp_path):
    table = table_for(tmp_path, {"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0, "b": 2.0}, "q2": {"a": 1.0}})
    assert table.ranks[0].tolist() == [2.0, 1.0]


def test_two_runs_with_one_id_are_an_error(tmp_path):
    qrels = (write_qrels(tmp_path / "qrels", {"q": {"a": 1}}))
    (tmp_path / "x").mkdir()
    first = write_run(tmp_path / "input.same", {"q": {"a": 1.0}})
    second = write_run(tmp_path / "x" / "same.gz", {"q": {"a": 1.0}})
    with pytest.raises(InputError, match="run id 'same' is also the id of"):
        load_collection(qrels, [first, second])


def test_shuffling_run_lines_changes_nothing(tmp_path):
    rng = np.random.default_rng(7)
    judgments = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(30)} for q in range(5)}
    lines = [f"q{q} Q0 d{d} 0 {rng.integers(0, 6)} t" for q in range(5) for d in range(40)]
    qrels = (write_qrels(tmp_path / "qrels", judgments))
    ordered = write_text(tmp_path / "a", lines)
    shuffled = write_text(tmp_path / "b", [lines[i] for i in rng.permutation(len(lines))])
    table = load_collection(qrels, [ordered, shuffled])
    np.testing.assert_array_equal(table.ranks[0], table.ranks[1])
    np.testing.assert_array_equal(table.num_retrieved[0], table.num_retrieved[1])


@pytest.mark.parametrize("ties_in_file", ["docid descending", "docid ascending", "any order"])
def test_runs_already_in_ranking_order_rank_the_same_as_shuffled_ones(tmp_path, ties_in_file):
    rng = np.random.default_rng(3)
    judgments = {f"q{q}": {f"d{d:02d}": int(rng.integers(0, 3)) for d in range(20)} for q in range(4)}
    rows = [(f"q{q}", f"d{d:02d}", float(rng.integers(0, 4))) for q in (2, 0, 3, 1) for d in range(25)]
    tie_order = {
        "docid descending": lambda docid: [-ord(c) for c in docid],
        "docid ascending": lambda docid: docid,
        "any order": lambda docid: sum(map(ord, docid)) * 7919 % 13,
    }[ties_in_file]
    ordered = sorted(rows, key=lambda r: (r[0], -r[2], tie_order(r[1])))
    qrels = (write_qrels(tmp_path / "qrels", judgments))
    as_ranked = write_text(tmp_path / "a", [f"{q} Q0 {d} 0 {s} t" for q, d, s in ordered])
    shuffled = write_text(tmp_path / "b", [f"{q} Q0 {d} 0 {s} t"
                                           for q, d, s in (rows[i] for i in rng.permutation(len(rows)))])
    table = load_collection(qrels, [as_ranked, shuffled])
    np.testing.assert_array_equal(table.ranks[0], table.ranks[1])
    assert np.isfinite(table.ranks[0]).sum() > 10
    np.testing.assert_array_equal(table.tie_start[0], table.tie_start[1])
    np.testing.assert_array_equal(table.tie_size[0], table.tie_size[1])


@pytest.mark.parametrize("layout", ["code point order", "byte order", "shuffled"])
def test_docids_that_are_not_utf8_tie_in_the_order_of_their_bytes(tmp_path, layout):
    # trec_eval compares docids with strcmp: as bytes. The readers decode them with surrogateescape:
    # b"a\x80" becomes "a\udc80", which sorts above "a\u00e9" (b"a\xc3\xa9") by code point, although
    # 0x80 sorts below 0xc3 by byte
    docids = [b"b", b"a\xff", b"a\x80", b"a\xe2\x82\xac", b"a\xc3\xa9", b"az"]  # score 2 for b, 1 for the rest
    order = {"code point order": [0, 1, 2, 3, 4, 5], "byte order": [0, 1, 3, 4, 2, 5],
             "shuffled": [3, 5, 2, 0, 4, 1]}[layout]
    qrels = tmp_path / "qrels"
    qrels.write_bytes(b"".join(b"q 0 " + docid + b" 1\n" for docid in docids))
    run = tmp_path / "run"
    run.write_bytes(b"".join(b"q Q0 " + docids[n] + b" 0 " + (b"2" if n == 0 else b"1") + b" t\n" for n in order))
    table = load_collection(str(qrels), [str(run)])
    ranks = {docid.encode("utf-8", "surrogateescape"): rank
             for docid, rank in zip(table.qrels.docids.tolist(), table.ranks[0])}
    # b first; then the ties by bytes descending: 0xff > 0xe2 > 0xc3 > 0x80 > 'z'
    assert ranks == {b"b": 1.0, b"a\xff": 2.0, b"a\xe2\x82\xac": 3.0, b"a\xc3\xa9": 4.0, b"a\x80": 5.0, b"az": 6.0}


def test_tie_groups_are_kept_with_the_ranks(tmp_path):
    judgments = {"q": {"a": 1, "c": 2, "e": 1, "g": 1}, "r": {"x": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0, "f": 1.0, "g": 0.5}, "r": {"x": 1.0}}
    table = table_for(tmp_path, judgments, run)
    # ranks: a 1; d, c, b (2..4, docid descending); f, e (5, 6); g 7
    assert dict(zip(table.qrels.docids.tolist(), table.ranks[0])) == {"a": 1.0, "c": 3.0, "e": 6.0, "g": 7.0, "x": 1.0}
    size = dict(zip(table.qrels.docids.tolist(), table.tie_size[0]))
    assert size == {"a": 1, "c": 3, "e": 2, "g": 1, "x": 1}
    assert table.tie_start[0][table.qrels.docids.tolist().index("c")] == 2.0
    assert table.tie_start[0][table.qrels.docids.tolist().index("e")] == 5.0
    # under topk, a group across rank K keeps its members beyond K (rank inf); a group beyond K is no group
    cut = table_for(tmp_path, judgments, run, topk=5)
    assert dict(zip(cut.qrels.docids.tolist(), cut.ranks[0])) == {"a": 1.0, "c": 3.0, "e": np.inf, "g": np.inf,
                                                                   "x": 1.0}
    assert dict(zip(cut.qrels.docids.tolist(), cut.tie_size[0])) == {"a": 1, "c": 3, "e": 2, "g": 1, "x": 1}
    positions = binary_positions(cut, Selection.everything(cut), ties=True)
    # q's elements in order a, c, e (within the straddling group), g; e is alone of q's documents in its group
    assert positions.ties.size[0, :4].tolist() == [1, 3, 2, 1]
    assert positions.ties.relevant[0, :4].tolist() == [1, 1, 1, 1]
    assert positions.ties.start[0, :3].tolist() == [1.0, 2.0, 5.0]
    assert binary_positions(cut, Selection.everything(cut)).ties is None


def test_tie_groups_in_different_orders_of_their_docids(tmp_path):
    # one group listed by docid descending, one ascending, one in neither order, one with a single tie
    run = {"q": {"c": 9.0, "b": 9.0, "a": 9.0, "d": 8.0, "e": 8.0, "f": 8.0, "h": 7.0, "g": 7.0, "j": 7.0,
                 "i": 7.0, "k": 6.0, "m": 5.0, "l": 5.0, "n": 4.0}}
    judgments = {"q": {docid: 1 for docid in run["q"]}}
    table = table_for(tmp_path, judgments, run)
    ranks = dict(zip(table.qrels.docids.tolist(), table.ranks[0]))
    assert ranks == {"c": 1.0, "b": 2.0, "a": 3.0, "f": 4.0, "e": 5.0, "d": 6.0, "j": 7.0, "i": 8.0, "h": 9.0,
                     "g": 10.0, "k": 11.0, "m": 12.0, "l": 13.0, "n": 14.0}
    starts = dict(zip(table.qrels.docids.tolist(), table.tie_start[0]))
    assert [starts[docid] for docid in "cdgkmn"] == [1.0, 4.0, 7.0, 11.0, 12.0, 14.0]
    assert dict(zip(table.qrels.docids.tolist(), table.tie_size[0]))["i"] == 4


def reference_ranks(queries, docids, scores) -> tuple[list, list, list]:
    """Per row: its rank within its query (score descending, then docid bytes descending), the first
    rank of its tie group and the group's size, computed the plain way."""
    rows = sorted(range(len(queries)), key=lambda row: (queries[row], -scores[row],
                                                        [-byte for byte in docids[row].encode()]))
    rank, start, size = [0.0] * len(rows), [0.0] * len(rows), [0] * len(rows)
    for place, row in enumerate(rows):
        ahead = [other for other in rows[:place] if queries[other] == queries[row]]
        tied = [other for other in rows if queries[other] == queries[row] and scores[other] == scores[row]]
        rank[row] = len(ahead) + 1.0
        start[row] = 1.0 + sum(1 for other in ahead if scores[other] != scores[row])
        size[row] = len(tied)
    return rank, start, size


run_rows = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "x"]), st.sampled_from(list("abcdefé")),
                              st.sampled_from([0.5, 1.0, 2.0, 3.0])), max_size=40, unique_by=lambda row: row[:2])
"""Rows (qid, docid, score) of a run, a document at most once in a query; ``x`` is not in the qrels."""


def in_ranking_order(rows, docid_order):
    """The rows by query, then score descending, tied rows in ``docid_order`` (1 or -1: the order of their
    docids; 0: as they come)."""
    return sorted(rows, key=lambda row: (row[0], -row[2], [docid_order * ord(c) for c in row[1]]))


@settings(max_examples=300, deadline=None)
@given(run_rows, st.sampled_from([None, 1, -1, 0]))
def test_ranks_within_queries_agree_with_a_plain_sort(rows, docid_order):
    # rows in any order (None), or each query one block by score descending, ties in some order of their docids
    if docid_order is not None:
        rows = in_ranking_order(rows, docid_order)
    queries, docids, scores = (list(column) for column in zip(*rows)) if rows else ([], [], [])
    ranking = rank_within_queries(np.array([int(q[1:]) if q != "x" else 0 for q in queries], dtype=np.int64),
                                  TextColumn.of_texts(docids), np.array(scores, dtype=np.float64))
    rank, start, size = reference_ranks(queries, docids, scores)
    assert ranking.rank.tolist() == rank
    if ranking.tie_size is None:
        assert set(size) <= {1}
    else:
        assert ranking.tie_start.tolist() == start and ranking.tie_size.tolist() == size


judgments = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q4"]), st.sampled_from(list("abcdefé")),
                               st.sampled_from([-1, 0, 1, 2])), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(judgments, run_rows, st.sampled_from([None, 1, -1, 0]), st.sampled_from([None, 1, 3]))
def test_rank_relevant_agrees_with_a_plain_ranking(judged, rows, docid_order, topk):
    if docid_order is not None:
        rows = in_ranking_order(rows, docid_order)
    data = "".join(f"{qid} 0 {docid} {grade}\n" for qid, docid, grade in judged).encode()
    try:
        qrels = qrels_from_columns("<qrels>", *read_fields(data, "<qrels>", QRELS_FORMAT))
    except InputError:
        return  # no relevant document
    run = RunColumns("<run>", "run", TextColumn.of_texts([row[0] for row in rows]),
                     TextColumn.of_texts([row[1] for row in rows]), np.array([row[2] for row in rows]))
    known = [row for row in rows if row[0] in qrels.qids]
    foreign = list(dict.fromkeys(row[0] for row in rows if row[0] not in qrels.qids + qrels.dropped_qids))
    if not known and foreign and not any(row[0] in qrels.dropped_qids for row in rows):
        with pytest.raises(InputError, match="no query id of this run is in the qrels"):
            rank_relevant(run, RelevantLookup(qrels), topk)
        return
    ranked = rank_relevant(run, RelevantLookup(qrels, others=True), topk)
    rank, start, size = reference_ranks(*zip(*known)) if known else ([], [], [])
    where = {(qid, docid): row for row, (qid, docid, _) in enumerate(known)}
    deep = topk or np.inf

    def expected(documents: TextColumn, query_of_document):
        found = [where.get((qrels.qids[query], docid)) for query, docid in zip(query_of_document, documents.tolist())]
        ranks = [rank[row] if row is not None and rank[row] <= deep else np.inf for row in found]
        starts = [start[row] if row is not None else np.inf for row in found]
        sizes = [size[row] if row is not None and (rank[row] <= deep or start[row] <= deep) else 1 for row in found]
        return ranks, starts, sizes

    ranks, starts, sizes = expected(qrels.docids, qrels.query_of_document)
    assert ranked.ranks.tolist() == ranks and ranked.tie_size.tolist() == sizes
    tied = ranked.tie_size >= 2
    assert ranked.tie_start[tied].tolist() == np.array(starts)[tied].tolist()
    assert ranked.other_ranks.tolist() == expected(qrels.other_docids, qrels.query_of_other)[0]
    counts = [sum(1 for row in known if row[0] == qid) for qid in qrels.qids]
    assert ranked.num_retrieved.tolist() == [min(count, deep) for count in counts]
    assert ranked.in_run.tolist() == [count > 0 for count in counts]
    assert ranked.foreign_queries == foreign and ranked.scored_lines == len(rows)


@settings(max_examples=200, deadline=None)
@given(run_rows, st.data())
def test_a_document_twice_in_a_query_names_both_lines(rows, data):
    rows = [row for row in rows if row[0] != "x"]
    if not rows:
        return
    again = data.draw(st.sampled_from(rows))
    place = data.draw(st.integers(0, len(rows)))
    rows = rows[:place] + [(again[0], again[1], data.draw(st.sampled_from([0.5, 9.0])))] + rows[place:]
    judged = "".join(f"{qid} 0 {docid} 1\n" for qid in ("q1", "q2", "q3") for docid in "ab").encode()
    qrels = qrels_from_columns("<qrels>", *read_fields(judged, "<qrels>", QRELS_FORMAT))
    text = "".join(f"{qid} Q0 {docid} 0 {score} t\n" for qid, docid, score in rows).encode()
    run = RunColumns("<run>", "run", *read_fields(text, "<run>", RUN_FORMAT), lines=LineNumbers())
    pairs = [row[:2] for row in rows]
    second = next(row for row in range(len(pairs)) if pairs[row] in pairs[:row])
    first = pairs.index(pairs[second])
    with pytest.raises(InputError) as caught:
        rank_relevant(run, RelevantLookup(qrels))
    qid, docid = pairs[second]
    assert caught.value.message == f"document {docid!r} appears twice for query {qid!r} (first on line {first + 1})"
    assert caught.value.line == second + 1
