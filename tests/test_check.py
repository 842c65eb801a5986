"""``prefeval check``: hand-made files with known problems, robust03, and the command line."""

from __future__ import annotations

import orjson
import pytest
from conftest import EXAMPLES, json_lines, robust03_or_skip, run_cli, write_text

from prefeval.analyses.check import check, has_errors, widest_tie_range


def run_lines(scores: dict[str, dict[str, float]]) -> list[str]:
    return [f"{q} Q0 {d} 0 {s} tag" for q, docs in scores.items() for d, s in docs.items()]


@pytest.fixture
def files(tmp_path):
    qrels = write_text(tmp_path / "qrels",
                       ["q1 0 d1 1", "q1 0 d2 0", "q2 0 e1 2", "q2 0 e2 0", "q2 0 e3 1", "q3 0 x 0"])
    q1 = {f"d{i}": 20.0 - i for i in range(1, 9)} | {"d9": 5.0, "d10": 5.0, "d11": 5.0, "d12": 1.0}
    q2 = {"e1": 3.0, "e2": 2.0, "e3": 2.0}
    tied = write_text(tmp_path / "input.tied.gz.txt", run_lines({"q1": q1, "q2": q2}))
    return tmp_path, qrels, tied


def test_a_clean_run_is_described(files):
    _, qrels, tied = files
    qrels_record, run = check(qrels, [tied])
    assert qrels_record == {
        "file": qrels, "kind": "qrels", "status": "warning", "lines": 6, "queries": 3, "judgments": 6,
        "relevant": 3,
        "grades": {"0": 3, "1": 2, "2": 1}, "queries_without_relevant": {"count": 1, "first": ["q3"]},
        "malformed_lines": {"count": 0, "first": [], "message": None}, "errors": [],
        "warnings": ["1 query has no relevant document (grade > 0), left out of evaluations"],
    }
    assert run["run"] == "tied.gz.txt" and run["lines"] == 15 and run["queries"] == 2
    # q1: d9, d10, d11 tie at ranks 9-11 (across rank 10); q2: e2, e3 tie at ranks 2-3 (its last)
    assert run["ties"] == {"groups": 2, "documents": 5, "queries": 2, "across_rank_10": 1, "at_depth": 1}
    assert run["depth"] == {"min": 3, "median": 7.5, "max": 12}
    # top 10 of q1 holds d1..d8, then d9 and d11 or d10 by docid descending: only d1, d2 judged
    assert run["unjudged_at_10"] == pytest.approx((8 / 10 + 0 / 3) / 2)
    assert run["queries_not_in_qrels"] == {"count": 0, "first": []}
    assert run["queries_missing_from_run"] == {"count": 0, "first": []}
    assert run["duplicate_documents"] == {"count": 0, "first": None}
    assert run["errors"] == []
    # e3, relevant, ties with e2 at ranks 2-3 (d9 to d11 hold no relevant document): AP of q2 is 1 or 5/6,
    # RBP 0.25 + 0.5 or 0.125 + 0.5, R-precision 1 or 1/2; the means over q1 and q2 move by half that
    ranges = run["tie_ranges"]
    assert list(ranges) == ["ap", "rbp", "rr", "ndcg", "rp", "p@1", "p@10", "r@1", "r@10"]
    assert ranges["ap"] == pytest.approx({"docid": 1.0, "min": (1 + 5 / 6) / 2, "max": 1.0})
    assert ranges["rbp"] == pytest.approx({"docid": 0.625, "min": 0.5625, "max": 0.625})
    assert ranges["rp"] == pytest.approx({"docid": 1.0, "min": 0.75, "max": 1.0})
    assert ranges["p@10"] == pytest.approx({"docid": 0.15, "min": 0.15, "max": 0.15})
    assert widest_tie_range(run) == ("rp", pytest.approx(0.25))
    assert run["warnings"] == [
        "1 tie group straddles rank 10: which tied documents count at cut-off 10 is decided by docid",
        "the order of tied documents can move mean ap by 0.0833 (0.9167 to 1.0000), rbp by 0.0625 (0.5625 to "
        "0.6250), ndcg by 0.0249 (0.9751 to 1.0000), rp by 0.2500 (0.7500 to 1.0000): see eval --ties expected "
        "or range",
    ]
    assert run["status"] == "warning" and not has_errors([qrels_record, run])


def test_every_malformed_line_is_counted(tmp_path, files):
    _, qrels, _ = files
    lines = ["q1 Q0 d1 1 1.0 t", "q1 Q0 d2 2 oops t", "", "# a comment", "q1 Q0 d3 3",
             "q1 Q0 d1 4 0.5 t", "q9 Q0 z 1 1 t", "q1 Q0 d4 5 nan t"]
    lines += [f"q2 Q0 e{i} {i}" for i in range(7)]  # four fields: malformed (a seventh field would be ignored)
    bad = write_text(tmp_path / "bad", lines)
    run = check(qrels, [bad])[1]
    assert run["malformed_lines"] == {"count": 9, "first": [2, 5, 9, 10, 11], "message": "score 'oops' is not a number"}
    assert run["duplicate_documents"] == {"count": 1, "first": {"qid": "q1", "docid": "d1", "lines": [1, 6]}}
    assert run["nan_scores"] == 1 and run["lines"] == 3
    assert run["queries_not_in_qrels"] == {"count": 1, "first": ["q9"]}
    assert run["queries_missing_from_run"] == {"count": 1, "first": ["q2"]}
    assert run["status"] == "error"
    assert run["errors"] == [
        "9 malformed run lines (line 2, 5, 9, 10, 11, ...); the first: score 'oops' is not a number",
        "1 document appears twice for a query (first: 'd1' for query 'q1', lines 1 and 6)",
    ]
    assert run["warnings"] == [
        "1 line is scored nan and skipped",
        "1 query is not in the qrels and ignored",
        "1 query with relevant documents missing, scored as retrieving nothing",
    ]


def test_files_given_in_the_wrong_place_and_unreadable_ones(files):
    tmp_path, qrels, tied = files
    records = check(qrels, [qrels, tmp_path / "absent", tied, tied])
    as_run, absent, first, second = records[1:]
    assert as_run["malformed_lines"]["count"] == 6
    assert "is this a qrels file given as a run?" in as_run["malformed_lines"]["message"]
    assert absent == {"file": str(tmp_path / "absent"), "kind": "run", "run": "absent", "status": "error",
                      "errors": ["no such file"], "warnings": []}
    assert first["status"] == "warning"
    assert second["errors"] == [f"run id 'tied.gz.txt' is also the id of {tied}; rename one file"]
    run_as_qrels = check(tied, [])[0]
    assert run_as_qrels["status"] == "error"
    assert "is this a run file given as qrels?" in run_as_qrels["malformed_lines"]["message"]


def test_query_ids_that_never_match_get_a_hint(tmp_path):
    qrels = write_text(tmp_path / "qrels", ["51 0 a 1", "52 0 b 1"])
    padded = write_text(tmp_path / "padded", ["051 Q0 a 1 1 t"])
    other = write_text(tmp_path / "other", ["q51 Q0 a 1 1 t"])
    _, padded_record, other_record = check(qrels, [padded, other])
    assert padded_record["errors"] == [
        "no query of the run is in the qrels; the ids differ in zero-padding ('051' in the run, '51' in the qrels)"
    ]
    assert other_record["errors"] == [
        "no query of the run is in the qrels (run ids such as 'q51', qrels ids such as '51')"
    ]


def test_robust03_ties_and_a_shallow_run():
    folder = robust03_or_skip()
    names = ["MU03rob01", "rutcor03100", "NLPR03vb10", "pircRBa1"]
    records = check(folder / "qrels.txt", [folder / "runs" / f"input.{name}.gz" for name in names])
    qrels, *runs = records
    by_name = {record["run"]: record for record in runs}
    assert qrels["queries"] == 100 and qrels["judgments"] == 128796 and qrels["status"] == "ok"
    for name in ("MU03rob01", "rutcor03100"):
        ties = by_name[name]["ties"]
        assert ties["documents"] > 0.9 * by_name[name]["lines"]  # nearly every document is tied
        assert ties["across_rank_10"] > 10
        assert any("straddle rank 10" in warning for warning in by_name[name]["warnings"])
    shallow = by_name["NLPR03vb10"]
    assert 10 <= shallow["depth"]["min"] and shallow["depth"]["max"] <= 12
    assert any(warning.startswith("shallow:") for warning in shallow["warnings"])
    assert by_name["pircRBa1"]["depth"] == {"min": 1000, "median": 1000.0, "max": 1000}
    # the order of ties decides much of rutcor03100's results, a little of MU03rob01's, nothing of pircRBa1's
    assert widest_tie_range(by_name["rutcor03100"]) == ("p@1", pytest.approx(0.34))
    assert widest_tie_range(by_name["MU03rob01"]) == ("p@10", pytest.approx(0.01))
    assert widest_tie_range(by_name["pircRBa1"])[1] < 1e-3
    for record in runs:
        for bounds in record["tie_ranges"].values():
            assert bounds["min"] - 1e-12 <= bounds["docid"] <= bounds["max"] + 1e-12
    assert not any("straddle" in w or "shallow" in w for w in by_name["pircRBa1"]["warnings"])
    assert not has_errors(records)


# --- the command line -------------------------------------------------------------------------

def test_check_command_writes_json_lines_and_exits_by_severity(files):
    tmp_path, qrels, tied = files
    result = run_cli("check", "-R", qrels, tied)
    assert result.exit_code == 0 and result.stderr == ""
    assert [orjson.loads(line)["status"] for line in result.stdout.splitlines()] == ["warning", "warning"]
    bad = write_text(tmp_path / "bad", ["q1 Q0 d1 1 1 t", "q1 Q0 d2 2"])
    result = run_cli("check", "-R", qrels, tied, bad)
    assert result.exit_code == 1
    assert [orjson.loads(line)["status"] for line in result.stdout.splitlines()] == ["warning", "warning", "error"]


def test_check_table_and_output_file(files):
    tmp_path, qrels, tied = files
    result = run_cli("check", "-R", qrels, "--format", "table", tied)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == (f"{qrels}: 3 queries, 6 judgments (3 relevant; grades 0: 3, 1: 2, 2: 1), "
                        "0 malformed lines: warning")
    assert lines[1] == ""
    assert lines[2].split()[:4] == ["run", "status", "queries", "not"]
    assert set(lines[3]) == {"-", " "} and len(lines[3]) == len(lines[2].rstrip())  # the rule under the header
    assert lines[4].split() == ["tied.gz.txt", "warning", "2", "0", "0", "0", "2", "1", "1", "3/7.5/12", "0.400", "0"]
    assert lines[4].index("warning") == lines[2].index("status")  # labels are left-aligned
    assert lines[4].endswith("0") and len(lines[4]) == len(lines[2])  # numbers are right-aligned
    assert lines[5] == ""
    assert lines[-2] == (f"{tied}: warning: 1 tie group straddles rank 10: "
                         "which tied documents count at cut-off 10 is decided by docid")
    assert lines[-1].startswith(f"{tied}: warning: the order of tied documents can move mean ap by 0.0833")
    assert "\x1b[" not in result.stdout
    target = tmp_path / "report.jsonl"
    result = run_cli("check", "-R", qrels, "-o", target, tied)
    assert result.exit_code == 0 and result.stdout == "" and len(target.read_text().splitlines()) == 2


def test_check_reads_a_run_from_stdin():
    run = (EXAMPLES / "runs" / "bm25").read_text()
    result = run_cli("check", "-R", str(EXAMPLES / "qrels.txt"), "-", input=run)
    records = json_lines(result.stdout)
    assert records[1]["file"] == "<stdin>" and records[1]["run"] == "stdin"
    assert records[1]["lines"] == len(run.splitlines())
    twice = run_cli("check", "-R", "-", "-", input=run)
    assert twice.exit_code == 2 and twice.stdout == ""
    assert twice.stderr == "prefeval: error: standard input (-) can stand for only one of the input files\n"


def test_ids_whose_bytes_are_not_utf8_are_checked_with_pyarrow_installed(tmp_path):
    """pandas 3 stores inferred strings as Arrow strings once pyarrow is installed (the test extra
    installs it), which cannot hold a surrogate escape: the duplicate-document check raised a
    UnicodeEncodeError on a run with such a docid (found by the fuzz test in a fresh clone)."""
    qrels = EXAMPLES / "qrels.txt"
    lines = (EXAMPLES / "runs" / "bm25").read_bytes().splitlines(keepends=True)
    odd = lines[5].replace(b"DOC-", b"\x80DOC-")
    run = tmp_path / "odd"
    run.write_bytes(b"".join([*lines[:5], odd, *lines[6:]]))
    result = run_cli("check", "-R", qrels, run)
    assert result.exit_code == 0, result.output
    assert json_lines(result.stdout)[1]["duplicate_documents"] == {"count": 0, "first": None}
    twice = tmp_path / "twice"
    twice.write_bytes(b"".join([*lines[:5], odd, odd.replace(b"\t6\t", b"\t7\t", 1), *lines[7:]]))
    result = run_cli("check", "-R", qrels, twice)
    assert result.exit_code == 1, result.output
    first = json_lines(result.stdout)[1]["duplicate_documents"]["first"]
    assert first["docid"] == "\\x80" + lines[5].split()[2].decode() and first["lines"] == [6, 7]
