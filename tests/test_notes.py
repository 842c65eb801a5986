"""Notes and seeds: produced once, in the library, and surfaced alike by the CLI (stderr) and the API
(warnings of category Note)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import QRELS, RUNS, run_cli, write_qrels, write_run, write_text

import prefeval
from prefeval.analyses.significance import SignificanceOptions, compare_pairs, pairwise_significance
from prefeval.errors import UsageError
from prefeval.runtime.notes import Note
from prefeval.runtime.seeds import resolve_seed


def notes_of(call) -> list[str]:
    """The notes raised while ``call()`` runs (each, however often it repeats)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, Note)]


def test_the_api_reports_the_data_notes_the_cli_prints():
    api = notes_of(lambda: prefeval.evaluate(QRELS, RUNS, "ap"))
    cli = run_cli("eval", "-R", QRELS, "-m", "ap", *RUNS)
    assert cli.exit_code == 0
    assert api == [line.removeprefix("prefeval: note: ") for line in cli.stderr.splitlines()]
    assert api == [f"{QRELS}: dropped 1 query (q107) without relevant documents",
                   "run hybrid: 1 of 7 queries missing, scored as retrieving nothing"]


def test_queries_not_in_the_qrels_and_runs_of_nan_scores_are_noted(tmp_path):
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1}, "q2": {"b": 1}})
    extra = write_run(tmp_path / "extra", {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q9": {"a": 1.0}, "q8": {"c": 2.0}})
    nan = write_text(tmp_path / "nan", ["q1 Q0 a 1 nan t", "q2 Q0 b 2 nan t"])
    result = run_cli("eval", "-R", qrels, "-m", "ap", extra, nan)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "prefeval: note: run extra: 2 queries (q9, q8) not in the qrels, ignored",
        "prefeval: note: run nan: every line is scored nan; it is evaluated as retrieving nothing",
    ]


def test_a_run_whose_queries_were_all_dropped_retrieves_nothing(tmp_path):
    qrels = write_qrels(tmp_path / "qrels", {"q1": {"a": 1}, "q2": {"b": 0}})
    only_q2 = write_run(tmp_path / "only_q2", {"q2": {"b": 1.0}})
    result = run_cli("eval", "-R", qrels, "-m", "ap", only_q2)
    assert result.exit_code == 0, result.output
    assert '"ap":0.0' in result.stdout
    assert "no query id of this run is in the qrels" not in result.stderr
    assert "1 of 1 queries missing" in result.stderr


def test_a_note_before_an_error_is_not_shown():
    result = run_cli("eval", "-R", QRELS, "-m", "rpp", RUNS[0])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["prefeval: error: preference measures need two or more runs, "
                                          "and no metric was asked for"]


def test_resolve_seed_reports_only_the_seeds_it_draws():
    drawn = []
    assert notes_of(lambda: drawn.append(resolve_seed(None)))[0].endswith(f"pass --seed {drawn[0]} to repeat)")
    assert notes_of(lambda: resolve_seed(np.int64(7))) == []
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(UsageError):
            resolve_seed(bad)


def test_every_random_api_operation_reports_a_drawn_seed(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    assert run_cli("eval", "-q", "-R", QRELS, "-m", "ap,rpp", "-o", prefs, *RUNS).exit_code == 0
    values = np.arange(12.0).reshape(2, 6) - 5.0
    operations = {
        "evaluate with query_fraction": lambda: prefeval.evaluate(QRELS, RUNS, "ap", query_fraction=0.5),
        "aggregate with query_fraction": lambda: list(prefeval.aggregate(str(prefs), query_fraction=0.5)),
        "significance with intervals": lambda: list(pairwise_significance(str(prefs), ["ap"], bootstrap=50)),
        "randomization test": lambda: compare_pairs(values, test="randomization", permutations=10, bootstrap=None),
    }
    for name, operation in operations.items():
        notes = [note for note in notes_of(operation) if "seed" in note]
        assert len(notes) == 1 and "drew seed" in notes[0], name


def test_deterministic_operations_draw_no_seed(tmp_path):
    values = np.arange(12.0).reshape(2, 6) - 5.0
    assert notes_of(lambda: compare_pairs(values, test="t", bootstrap=None)) == []
    pool = run_cli("eval", "-R", QRELS, "-m", "ap", "--label_fraction", "0.5", "--label_fraction_policy", "pool", *RUNS)
    assert pool.exit_code == 0 and "seed" not in pool.stderr
    assert SignificanceOptions(test="sign", bootstrap=None).seeded().seed is None


def test_the_same_seed_gives_the_same_result_in_the_api(tmp_path):
    prefs = tmp_path / "prefs.jsonl"
    assert run_cli("eval", "-q", "-R", QRELS, "-m", "ap,rpp", "-o", prefs, *RUNS).exit_code == 0
    first = list(prefeval.aggregate(str(prefs), query_fraction=0.5, num_samples=3, seed=4))
    assert first == list(prefeval.aggregate(str(prefs), query_fraction=0.5, num_samples=3, seed=4))


@pytest.mark.parametrize("call, message", [
    (lambda: prefeval.evaluate(QRELS, None), "runs are needed"),
    (lambda: prefeval.evaluate(QRELS, RUNS, "ap", label_policy="pool"), "unknown option"),
    (lambda: prefeval.evaluate(QRELS, RUNS, [3]), "a measure is a name"),
    (lambda: prefeval.evaluate(QRELS, RUNS, "ap", jobs=0), "jobs must be an integer of at least 1"),
    (lambda: prefeval.evaluate(QRELS, RUNS, "ap", topk=0), "topk must be an integer of at least 1"),
    (lambda: prefeval.evaluate(QRELS, RUNS, "ap", relevance_level=float("nan")), "relevance_level must be a finite"),
    (lambda: compare_pairs(np.ones((1, 3)), seed=1, unknown=2), "unknown significance option"),
])
def test_api_misuse_is_a_clear_usage_error(call, message):
    with pytest.raises(UsageError, match=message):
        call()


def test_api_takes_one_name_a_list_or_none_and_the_cli_option_names():
    one = prefeval.evaluate(QRELS, RUNS, "ap")
    assert list(one.columns) == ["sample", "run", "qid", "ap"]
    assert one.equals(prefeval.evaluate(QRELS, RUNS, ["ap"]))
    assert "rpp" not in prefeval.evaluate(QRELS, RUNS, None).columns and "ap" in prefeval.evaluate(QRELS, RUNS).columns
    pooled = prefeval.evaluate(QRELS, RUNS, "ap", label_fraction=0.5, label_fraction_policy="pool")
    assert not pooled["ap"].equals(one["ap"])
