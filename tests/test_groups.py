"""Values by user group (prefeval.analyses.groups) equal prefeval's own values on each group's users
filtered by hand."""

import numpy as np
import pandas as pd
import pytest

from prefeval.analyses.groups import worst_off
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
