"""Values by user group (prefeval.analyses.groups) equal prefeval's own values on each group's users
filtered by hand."""

import numpy as np
import pandas as pd
import pytest

from prefeval.analyses.groups import UserGroupIndex, worst_off
from prefeval.dataframes import evaluate
from prefeval.engine.evaluation import Evaluation
from prefeval.engine.results import Summary

MEASURES = ["p@3", "ndcg@5", "rr"]


def recommender_data(seed=7, users=60, items=30):
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, items + 1)  # popularity skew
    qrels, runs = [], {"a": [], "b": []}
    for user in range(users):
        liked = rng.choice(items, size=rng.integers(1, 5), replace=False, p=popularity / popularity.sum())
        qrels += [(f"u{user}", f"i{item}", 1) for item in liked]
        for name in runs:
            shown = rng.choice(items, size=5, replace=False)
            scores = rng.integers(0, 3, size=5)  # ties of score
            runs[name] += [(f"u{user}", f"i{item}", float(score)) for item, score in zip(shown, scores)]
    groups = {f"u{user}": ("cold" if user % 3 == 0 else "active") for user in range(users - 5)}  # 5 in none
    as_frame = lambda rows, last: pd.DataFrame(rows, columns=["user", "item", last])  # noqa: E731
    return as_frame(qrels, "rating"), {name: as_frame(rows, "score") for name, rows in runs.items()}, groups


def group_summaries(qrels, runs, groups, **options):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the note on the users in no group
        evaluation = Evaluation.from_files(qrels, runs, MEASURES, user_groups=groups, **options)
        return next(result for result in evaluation.results() if isinstance(result, Summary)).groups


def test_group_summaries_equal_values_on_the_group_filtered_by_hand():
    qrels, runs, groups = recommender_data()
    summaries = group_summaries(qrels, runs, groups)
    assert list(summaries) == ["active", "cold"]
    for group, summary in summaries.items():
        users = [user for user, its in groups.items() if its == group]
        alone = evaluate(qrels[qrels.user.isin(users)], {name: run[run.user.isin(users)] for name, run in runs.items()},
                         MEASURES, per_query=False)
        for measure in MEASURES:  # the same values added in the same order: equal bit for bit
            assert summary.metrics[measure].tolist() == alone[measure].tolist()
        # the preference of run a over run b (a metric's difference) on the group's users
        assert summary.preferences["p@3"][0] == pytest.approx(alone["p@3"].iloc[0] - alone["p@3"].iloc[1], abs=1e-12)
        assert summary.num_queries == len(users)


def test_worst_off_group_is_the_least_value_ties_to_the_first_name():
    summaries = {name: Summary(0, 3, {"p@3": np.array(values)}, {})
                 for name, values in (("a", [0.5, 0.2, 0.1]), ("b", [0.4, 0.2, 0.3]), ("c", [0.6, 0.3, 0.1]))}
    groups, values = worst_off(summaries)["p@3"]
    assert groups == ["b", "a", "a"] and values.tolist() == [0.4, 0.2, 0.1]


ITEM_MEASURES = ["arp@3", "ild@5", "gini@5", "icov", "entropy@3,discount=1", "expshare@5,discount=1", "disparity"]


def item_side_inputs(qrels, runs, items=30):
    """The side inputs of the item measures for :func:`recommender_data`: training interactions
    skewed to the first items, the catalogue, a feature or two per item, two providers."""
    names = [f"i{item}" for item in range(items)]
    train = pd.DataFrame({"user": [f"t{n % 7}" for n in range(60)], "item": [names[n * n % 11] for n in range(60)]})
    features = pd.DataFrame({"item": names + names[::3], "genre": [f"g{n % 4}" for n in range(items)]
                             + [f"g{n % 3 + 4}" for n in range(0, items, 3)]})
    providers = pd.DataFrame({"item": names, "provider": ["major" if n < 5 else "indie" for n in range(items)]})
    return {"train": train, "items": pd.DataFrame({"item": names}), "item_features": features,
            "item_groups": providers}


def test_item_measures_by_group_equal_the_group_evaluated_alone():
    """Per-list item measures and the measures of the whole run (exposure counted over the group's
    users' lists alone) of each group: the values of the group's users evaluated alone, bit for bit."""
    import warnings

    qrels, runs, groups = recommender_data()
    side = item_side_inputs(qrels, runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation = Evaluation.from_files(qrels, runs, ITEM_MEASURES, user_groups=groups, **side)
        summary = next(result for result in evaluation.results() if isinstance(result, Summary))
    assert list(summary.groups) == ["active", "cold"]
    for group, values in summary.groups.items():
        users = [user for user, its in groups.items() if its == group]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alone = Evaluation.from_files(qrels[qrels.user.isin(users)],
                                          {name: run[run.user.isin(users)] for name, run in runs.items()},
                                          ITEM_MEASURES, **side)
            whole = next(result for result in alone.results() if isinstance(result, Summary))
        assert set(values.metrics) == set(whole.metrics) and "expshare@5,discount=1:major" in values.metrics
        for key, value in whole.metrics.items():
            assert values.metrics[key].tolist() == value.tolist(), (group, key)


def test_worst_off_group_follows_which_way_a_measure_is_better():
    """ARP and the Gini index are better when smaller: their worst-off group has the largest value; a
    group's share of exposure is neither better nor worse: it has no worst-off group."""
    summaries = {name: Summary(0, 3, {"arp@10": np.array(arp), "gini@10": np.array(arp), "expshare@10:x": np.array(arp),
                                      "ndcg": np.array(arp)}, {})
                 for name, arp in (("a", [5.0, 1.0]), ("b", [3.0, 2.0]))}
    worst = worst_off(summaries)
    assert worst["arp@10"][0] == ["a", "b"] and worst["gini@10"][0] == ["a", "b"]
    assert worst["ndcg"][0] == ["b", "a"] and "expshare@10:x" not in worst


def test_api_by_group_from_a_file_equals_filtered_evaluations(tmp_path):
    import prefeval

    qrels, runs, groups = recommender_data(seed=3)
    path = tmp_path / "groups.tsv"
    path.write_text("user_id\tgroup\n" + "".join(f"{user}\t{group}\n" for user, group in groups.items()))
    frame = prefeval.evaluate_by_group(qrels, runs, MEASURES, user_groups=str(path))
    assert frame["group"].tolist() == ["active", "active", "cold", "cold"]
    for group in ("active", "cold"):
        users = [user for user, its in groups.items() if its == group]
        alone = evaluate(qrels[qrels.user.isin(users)], {name: run[run.user.isin(users)] for name, run in runs.items()},
                         MEASURES, per_query=False)
        rows = frame[frame.group == group]
        assert rows["run"].tolist() == alone["run"].tolist() and set(rows["users"]) == {len(users)}
        for measure in MEASURES:
            assert rows[measure].to_numpy() == pytest.approx(alone[measure].to_numpy(), abs=1e-12)


def test_api_user_in_two_groups_is_an_input_error():
    import prefeval
    from prefeval.errors import InputError

    qrels, runs, _ = recommender_data()
    with pytest.raises(InputError, match=r"user 'u1' is in two groups \('a' and 'b'\)"):
        prefeval.evaluate_by_group(qrels, runs, MEASURES,
                                   user_groups=pd.DataFrame({"user": ["u1", "u1"], "group": ["a", "b"]}))


# --- the command line: eval --user-groups ----------------------------------------------------------

def write_trec(directory, qrels, runs, groups, users=None):
    """The collection as TREC files (the users kept: ``users``, default all), and the groups file."""
    keep = (lambda frame: frame) if users is None else (lambda frame: frame[frame.user.isin(users)])  # noqa: E731
    directory.mkdir(exist_ok=True)
    (directory / "qrels").write_text("".join(f"{row.user} 0 {row.item} {row.rating}\n"
                                             for row in keep(qrels).itertuples()))
    paths = []
    for name, run in runs.items():
        path = directory / name
        path.write_text("".join(f"{row.user} Q0 {row.item} 0 {row.score} {name}\n" for row in keep(run).itertuples()))
        paths.append(str(path))
    (directory / "groups.tsv").write_text("user\tgroup\n" + "".join(f"{u}\t{g}\n" for u, g in groups.items()))
    return str(directory / "qrels"), paths, str(directory / "groups.tsv")


def prefeval_cli(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "prefeval", *map(str, args)], capture_output=True, text=True)


def lines_of(text):
    import orjson

    return [orjson.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("engine", ["memory", "stream", "dask"])
def test_cli_group_lines_equal_the_evaluation_of_the_group_filtered_by_hand(tmp_path, engine):
    qrels, runs, groups = recommender_data()
    qrels_path, run_paths, groups_path = write_trec(tmp_path / "all", qrels, runs, groups)
    result = prefeval_cli("eval", "-m", ",".join(MEASURES), "--engine", engine, "--jobs", "2",
                          "--user-groups", groups_path, "-R", qrels_path, *run_paths)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ("prefeval: note: --user-groups: 5 of the 60 users are in no group: they count "
                                     "in the whole run's summary and in no group's")
    lines = lines_of(result.stdout)
    for group in ("active", "cold"):
        users = [user for user, its in groups.items() if its == group]
        alone_qrels, alone_runs, _ = write_trec(tmp_path / group, qrels, runs, groups, users)
        alone = prefeval_cli("eval", "-m", ",".join(MEASURES), "-R", alone_qrels, *alone_runs)
        assert alone.returncode == 0, alone.stderr
        of_group = [{key: value for key, value in line.items() if key != "group"}
                    for line in lines if line.get("group") == group and line.get("type") != "worst-off"]
        assert of_group == lines_of(alone.stdout)  # the same bytes' values, every engine
    # the worst-off lines: per run and metric, the least of the groups' values, by hand
    by_group = {(line["group"], line["run"]): line for line in lines
                if "group" in line and line.get("type") == "metric"}
    worst = [line for line in lines if line.get("type") == "worst-off"]
    assert [(line["run"], next(k for k in line if k in MEASURES)) for line in worst] == \
        [(run, measure) for run in ("a", "b") for measure in MEASURES]
    for line in worst:
        measure = next(k for k in line if k in MEASURES)
        values = {group: by_group[(group, line["run"])][measure] for group in ("active", "cold")}
        least = min(values.values())
        assert line[measure] == least and line["group"] == min(g for g, v in values.items() if v == least)


def test_cli_user_in_two_groups_is_one_line_at_its_line(tmp_path):
    qrels, runs, groups = recommender_data()
    qrels_path, run_paths, _ = write_trec(tmp_path, qrels, runs, groups)
    bad = tmp_path / "bad.tsv"
    bad.write_text("user\tgroup\nu1\tcold\nu2\tactive\nu1\tactive\n")
    result = prefeval_cli("eval", "-m", "p@3", "--user-groups", bad, "-R", qrels_path, *run_paths)
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr == (f"prefeval: error: {bad}:4: user 'u1' is in two groups ('cold' and 'active'); "
                             "a user belongs to one group\n")


def test_cli_tsv_names_the_group_in_the_query_column(tmp_path):
    qrels, runs, groups = recommender_data()
    qrels_path, run_paths, groups_path = write_trec(tmp_path, qrels, runs, groups)
    result = prefeval_cli("eval", "-m", "p@3", "--format", "tsv", "--user-groups", groups_path, "-R", qrels_path,
                          *run_paths)
    assert result.returncode == 0, result.stderr
    jsonl = lines_of(prefeval_cli("eval", "-m", "p@3", "--user-groups", groups_path, "-R", qrels_path,
                                  *run_paths).stdout)
    cold_a = next(line for line in jsonl if line.get("group") == "cold" and line.get("run") == "a"
                  and line.get("type") == "metric")
    assert f"a\tP_3                   \tall:cold\t{cold_a['p@3']:6.4f}" in result.stdout.splitlines()
    assert sum(line.split("\t")[2].startswith("worst-off:") for line in result.stdout.splitlines()) == 2


def test_api_summary_rows_hold_the_measures_of_the_whole_run():
    """evaluate(per_query=False) and evaluate_by_group: a column per measure of the whole run (and per
    item group of expshare), beside the means of the per-user ones."""
    import warnings

    from prefeval.dataframes import evaluate_by_group

    qrels, runs, groups = recommender_data()
    side = item_side_inputs(qrels, runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = evaluate(qrels, runs, ["arp@3", "gini@5", "expshare@5"], per_query=False, **side)
        by_group = evaluate_by_group(qrels, runs, ["arp@3", "gini@5"], user_groups=groups, **side)
    assert list(whole.columns) == ["sample", "run", "qid", "arp@3", "gini@5", "expshare@5:indie", "expshare@5:major"]
    assert whole["expshare@5:indie"].add(whole["expshare@5:major"]).round(12).tolist() == [1.0, 1.0]
    assert list(by_group.columns) == ["group", "run", "users", "arp@3", "gini@5"]
    assert ((by_group["gini@5"] > 0) & (by_group["gini@5"] < 1)).all()


def test_user_group_index_finds_each_users_group_as_a_dict_would(tmp_path):
    """The users' groups found by their keys: read from a file or given as a dict, each user's code is
    its group's place among the groups in name order, -1 for a user in no group, ids of any text
    (non-ASCII, a surrogate-escaped byte, a number-like id) included."""
    groups = {"u1": "cold", "ü2": "active", "u\udcff3": "cold", "17": "zz", "u5": "active"}
    path = tmp_path / "groups.tsv"
    path.write_bytes(b"user\tgroup\n" + b"".join(f"{u}\t{g}\n".encode("utf-8", "surrogateescape")
                                                for u, g in groups.items()))
    asked = ["u5", "nobody", "u\udcff3", "17", "ü2", "u1", "u1", ""]
    framed = {u: g for u, g in groups.items() if u.isprintable() and "\udcff" not in u}  # text a frame can hold
    for made, given in ((UserGroupIndex.of(groups), groups), (UserGroupIndex.of(str(path)), groups),
                        (UserGroupIndex.of(pd.DataFrame({"user": list(framed), "group": list(framed.values())})),
                         framed)):
        names = sorted(set(given.values()))
        assert made.names == names == ["active", "cold", "zz"]
        assert made.codes(asked).tolist() == [names.index(given[u]) if u in given else -1 for u in asked]
        assert made.codes([]).tolist() == []
