"""``aggregate`` and ``significance --user-groups``: the records of each group's users are what the
same command gives on the eval lines filtered to them by hand, and each run's worst-off group is the
group of least value, checked against the group records (:mod:`prefeval.analyses.groups`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from contract import assert_one_line_error

RECSYS = Path(__file__).parent.parent / "examples" / "recsys"
RUNS = [RECSYS / name for name in ("popular.run", "cooc.run", "random.run")]
GROUP_KEYS = ("group", "users")


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> Path:
    """eval -q lines of the walkthrough's three recommenders (metrics and a preference)."""
    path = tmp_path_factory.mktemp("groups") / "prefs.jsonl"
    result = run_cli("eval", "-q", "-m", "ap,ndcg@10,rr,rpp,lexiprecision", "-R", RECSYS / "test.qrels", *RUNS,
                     "-o", path)
    assert result.exit_code == 0, result.stderr
    return path


def groups_of(path: Path) -> dict[str, str]:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    return {user: group for user, group in rows}


def filtered(lines: Path, users: set[str], target: Path) -> Path:
    """The per-query lines of ``users`` alone (eval -q's layout kept)."""
    kept = [line for line in lines.read_text().splitlines() if json.loads(line)["qid"] in users]
    target.write_text("\n".join(kept) + "\n")
    return target


def records(result) -> list[dict]:
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def without_group(record: dict) -> dict:
    return {key: value for key, value in record.items() if key not in GROUP_KEYS}


def test_each_groups_summary_is_the_summary_of_its_users_lines(lines, tmp_path):
    groups = groups_of(RECSYS / "users.tsv")
    out = records(run_cli("aggregate", "-P", lines, "--user-groups", RECSYS / "users.tsv"))
    whole = records(run_cli("aggregate", "-P", lines))
    assert out[0] == whole[0]  # the summary over all users comes first, unchanged
    by_group = [record for record in out if "group" in record]
    assert [r["group"] for r in by_group] == ["active", "cold"]
    for record in by_group:
        users = {user for user, group in groups.items() if group == record["group"]}
        alone = records(run_cli("aggregate", "-P", filtered(lines, users, tmp_path / record["group"])))
        assert record["users"] == len(users)
        assert without_group(record) == alone[0]
    # the walkthrough's finding: popular leads overall and for active users, cooc for cold users
    assert by_group[0]["ap"]["mean"][0] == "popular.run" and by_group[1]["ap"]["mean"][0] == "cooc.run"


def test_worst_off_groups_are_the_least_group_values(lines):
    out = records(run_cli("aggregate", "-P", lines, "-m", "ap,ndcg@10,rpp", "--user-groups", RECSYS / "users.tsv"))
    by_group = {record["group"]: record for record in out if "group" in record}
    worst = [record for record in out if "worst_off" in record]
    assert [record["worst_off"] for record in worst] == ["ap", "ndcg@10"]  # metrics only
    for record in worst:
        metric = record["worst_off"]
        for run, group in record["groups"].items():
            values = {name: by_group[name][metric]["scores"]["mean"][run] for name in by_group}
            assert group == min(values, key=lambda name: (values[name], name))
            assert record["values"][run] == values[group]
        assert record["ordering"] == sorted(record["values"], key=lambda run: -record["values"][run])
    assert worst[0]["groups"]["random.run"] == "cold" and worst[0]["values"]["random.run"] == 0.0


def test_group_rank_intervals_are_seeded_and_resample_the_groups_users(lines):
    args = ("aggregate", "-P", lines, "-m", "ap", "--bootstrap", "200", "--seed", "3", "--user-groups",
            RECSYS / "users.tsv")
    first, again = run_cli(*args), run_cli(*args)
    assert first.stdout == again.stdout
    intervals = [record for record in records(first) if "rank_low" in record]
    assert {record.get("group") for record in intervals} == {None, "active", "cold"}
    cold = [record for record in intervals if record.get("group") == "cold"]
    assert [record["run"] for record in cold] == ["cooc.run", "popular.run", "random.run"]
    assert all(record["users"] == 21 and 1 <= record["rank_low"] <= record["rank_high"] <= 3 for record in cold)
    assert cold[-1]["rank_low"] == 3  # random never wins a resample of the cold users (0 AP on each)


def test_significance_per_group_is_significance_on_the_groups_lines(lines, tmp_path):
    groups = groups_of(RECSYS / "users.tsv")
    out = records(run_cli("significance", "-P", lines, "-m", "ap,rpp", "--test", "t", "--seed", "1", "--user-groups",
                          RECSYS / "users.tsv"))
    for name in ("active", "cold"):
        users = {user for user, group in groups.items() if group == name}
        alone = records(run_cli("significance", "-P", filtered(lines, users, tmp_path / name), "-m", "ap,rpp",
                                "--test", "t", "--seed", "1"))
        mine = [without_group(record) for record in out if record.get("group") == name]
        assert mine == alone and all(r["users"] == len(users) for r in out if r.get("group") == name)
    assert [without_group(r) for r in out if "group" not in r] == records(
        run_cli("significance", "-P", lines, "-m", "ap,rpp", "--test", "t", "--seed", "1"))


def test_a_user_in_two_groups_is_an_error_at_its_line(lines, tmp_path):
    bad = tmp_path / "groups.tsv"
    bad.write_text("user\tgroup\nu1\tcold\nu2\tactive\nu1\tactive\n")
    for command in ("aggregate", "significance"):
        message = assert_one_line_error(run_cli(command, "-P", lines, "--user-groups", bad), 1)
        assert message.startswith(f"{bad}:4:") and "u1" in message


def test_users_in_no_group_are_noted_and_counted_in_none(lines, tmp_path):
    some = tmp_path / "groups.tsv"
    some.write_text("user\tgroup\nu0\ta\nu1\ta\nu2\tb\n")
    result = run_cli("aggregate", "-P", lines, "-m", "ap", "--user-groups", some)
    assert "117 of 120 users of sample 0 are in no group" in result.stderr
    assert [(r["group"], r["users"]) for r in records(result) if "group" in r] == [("a", 2), ("b", 1)]


@pytest.mark.parametrize("command", ["aggregate", "significance"])
def test_groups_write_json_lines_only(lines, command):
    message = assert_one_line_error(run_cli(command, "-P", lines, "--format", "tsv", "--user-groups",
                                            RECSYS / "users.tsv"), 2)
    assert "--user-groups writes JSON lines" in message
