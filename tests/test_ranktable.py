"""Ranking runs into the RankTable: trec_eval's ordering, topk, missing queries, duplicates."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import write_qrels, write_run, write_text

from prefeval.errors import InputError
from prefeval.ranking.loading import load_collection
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable


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
    assert dict(zip(table.qrels.docids, table.ranks[0])) == {"d10": 3.0, "d9": 2.0, "a": 4.0, "B": 5.0}
    assert table.num_retrieved[0].tolist() == [6]


def test_unicode_docids_tie_in_byte_order(tmp_path):
    judgments = {"q": {"é": 1, "z": 1, "€": 1}}
    table = table_for(tmp_path, judgments, {"q": {"z": 1.0, "é": 1.0, "€": 1.0}})
    # UTF-8 bytes: 'z' 7a < 'é' c3a9 < '€' e282ac, so descending: €, é, z
    assert dict(zip(table.qrels.docids, table.ranks[0])) == {"€": 1.0, "é": 2.0, "z": 3.0}


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
    ranks = {docid.encode("utf-8", "surrogateescape"): rank for docid, rank in zip(table.qrels.docids, table.ranks[0])}
    # b first; then the ties by bytes descending: 0xff > 0xe2 > 0xc3 > 0x80 > 'z'
    assert ranks == {b"b": 1.0, b"a\xff": 2.0, b"a\xe2\x82\xac": 3.0, b"a\xc3\xa9": 4.0, b"a\x80": 5.0, b"az": 6.0}


def test_tie_groups_are_kept_with_the_ranks(tmp_path):
    judgments = {"q": {"a": 1, "c": 2, "e": 1, "g": 1}, "r": {"x": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 1.0, "f": 1.0, "g": 0.5}, "r": {"x": 1.0}}
    table = table_for(tmp_path, judgments, run)
    # ranks: a 1; d, c, b (2..4, docid descending); f, e (5, 6); g 7
    assert dict(zip(table.qrels.docids, table.ranks[0])) == {"a": 1.0, "c": 3.0, "e": 6.0, "g": 7.0, "x": 1.0}
    size = dict(zip(table.qrels.docids, table.tie_size[0]))
    assert size == {"a": 1, "c": 3, "e": 2, "g": 1, "x": 1}
    assert table.tie_start[0][list(table.qrels.docids).index("c")] == 2.0
    assert table.tie_start[0][list(table.qrels.docids).index("e")] == 5.0
    # under topk, a group across rank K keeps its members beyond K (rank inf); a group beyond K is no group
    cut = table_for(tmp_path, judgments, run, topk=5)
    assert dict(zip(cut.qrels.docids, cut.ranks[0])) == {"a": 1.0, "c": 3.0, "e": np.inf, "g": np.inf, "x": 1.0}
    assert dict(zip(cut.qrels.docids, cut.tie_size[0])) == {"a": 1, "c": 3, "e": 2, "g": 1, "x": 1}
    positions = binary_positions(cut, Selection.everything(cut), ties=True)
    # q's elements in order a, c, e (within the straddling group), g; e is alone of q's documents in its group
    assert positions.ties.size[0, :4].tolist() == [1, 3, 2, 1]
    assert positions.ties.relevant[0, :4].tolist() == [1, 1, 1, 1]
    assert positions.ties.start[0, :3].tolist() == [1.0, 2.0, 5.0]
    assert binary_positions(cut, Selection.everything(cut)).ties is None
