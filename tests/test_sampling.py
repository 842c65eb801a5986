"""Query and label subsampling: how many are kept, which, and reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import table_from_positions

from prefeval.engine.evaluation import Evaluation
from prefeval.engine.whole import WholeCollection
from prefeval.errors import UsageError
from prefeval.ranking.subsampling import SubsamplingOptions, draw_selection, keep_count
from prefeval.runtime.notes import Note

INF = math.inf


def table():
    # 5 queries with 1, 2, 4, 5, 10 relevant documents; run r retrieves document f of query q when
    # f < r + 1 (so early documents are retrieved by more runs)
    lengths = [1, 2, 4, 5, 10]
    runs = [[[float(f + 1) if f <= r else INF for f in range(m)] for m in lengths] for r in range(3)]
    return table_from_positions(runs)


def test_keep_count_floors_but_keeps_one():
    assert keep_count(np.array([1, 2, 4, 5, 10]), 0.5).tolist() == [1, 1, 2, 2, 5]
    assert keep_count(10, 0.3) == 3  # not 2, despite 10 * 0.3 = 2.9999999999999996
    assert keep_count(7, 0.01) == 1


def test_query_fraction_keeps_queries_in_order():
    selection = draw_selection(table(), np.random.default_rng(0), SubsamplingOptions(query_fraction=0.6))
    assert len(selection.queries) == 3
    assert selection.queries.tolist() == sorted(selection.queries.tolist())
    assert selection.documents.all()


def test_random_labels_keep_a_fraction_of_each_query():
    t = table()
    selection = draw_selection(t, np.random.default_rng(0), SubsamplingOptions(label_fraction=0.5))
    kept = np.add.reduceat(selection.documents.astype(int), t.qrels.offsets[:-1])
    assert kept.tolist() == [1, 1, 2, 2, 5]


def test_pool_labels_drop_the_least_retrieved_first():
    t = table()
    selection = draw_selection(t, None, SubsamplingOptions(label_fraction=0.5, label_policy="pool"))
    # per query, the first documents are retrieved by the most runs and are the ones kept
    expected = np.concatenate([np.arange(m) < max(1, m // 2) for m in (1, 2, 4, 5, 10)])
    # ties in how often a document was retrieved (none retrieved it) are broken by docid descending:
    # query 4 keeps d0, d1, d2 (3, 2, 1 runs) then the two largest docids among the rest
    docids = t.qrels.docids
    fourth = slice(t.qrels.offsets[4], t.qrels.offsets[5])
    assert sorted(docids[fourth][selection.documents[fourth]].tolist()) == sorted(["d12", "d13", "d14", "d21", "d20"])
    expected[fourth] = selection.documents[fourth]
    np.testing.assert_array_equal(selection.documents, expected)


def test_samples_are_reproducible_with_a_seed_and_fresh_each_time():
    def selections(seed):
        options = SubsamplingOptions(samples=3, query_fraction=0.4, seed=seed)
        evaluation = Evaluation(WholeCollection(table()), [], options)
        return [tuple(sample.qids) for sample in evaluation.draw_samples()]
    first = selections(11)
    assert first == selections(11)
    assert len(set(first)) == 3  # each sample draws afresh
    assert first != selections(12)


def test_a_seed_is_drawn_and_reported_when_needed(recwarn):
    evaluation = Evaluation(WholeCollection(table()), [], SubsamplingOptions(query_fraction=0.5))
    assert evaluation.seed is not None
    (drawn,) = [w for w in recwarn if issubclass(w.category, Note)]
    assert f"--seed {evaluation.seed}" in str(drawn.message)


@pytest.mark.parametrize("options", [{}, {"label_fraction": 0.5, "label_policy": "pool"},
                                     {"query_fraction": 0.5, "seed": 3}])
def test_no_seed_is_drawn_or_reported_when_nothing_is_random_or_one_is_given(recwarn, options):
    evaluation = Evaluation(WholeCollection(table()), [], SubsamplingOptions(**options))
    assert evaluation.seed == options.get("seed")
    assert not [w for w in recwarn if issubclass(w.category, Note)]


@pytest.mark.parametrize("options", [{"samples": 0}, {"query_fraction": 0.0}, {"label_fraction": 1.5},
                                     {"label_policy": "x"}, {"samples": 1.5}, {"query_fraction": "1"}])
def test_bad_sampling_options(options):
    with pytest.raises(UsageError):
        SubsamplingOptions(**options)
