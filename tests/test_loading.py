"""Loading a collection: the first run read in a thread while the qrels are read, with the same result."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import QRELS, RUNS, write_text

from prefeval.errors import InputError
from prefeval.ranking import loading
from prefeval.ranking.loading import ReadAhead, load_collection


@pytest.fixture
def reader_threads(monkeypatch) -> list[str]:
    """The name of the thread that reads each run, in the order they are read."""
    names: list[str] = []
    read = loading.load_run

    def recording(run, name=None):
        names.append(threading.current_thread().name)
        return read(run, name)

    monkeypatch.setattr(loading, "load_run", recording)
    return names


def test_the_first_run_ranked_here_is_read_while_the_qrels_are(reader_threads):
    load_collection(QRELS, RUNS[:1], jobs=2)
    assert reader_threads == ["prefeval-read-ahead"]
    reader_threads.clear()
    load_collection(QRELS, RUNS, jobs=1)
    assert reader_threads == ["prefeval-read-ahead", "MainThread", "MainThread", "MainThread"]


def test_no_run_is_read_ahead_when_workers_rank_them_or_it_is_not_a_file():
    assert ReadAhead.first_run_ranked_here([(None, run) for run in RUNS], jobs=2) is None
    assert ReadAhead.first_run_ranked_here([(None, "-")], jobs=1) is None
    assert ReadAhead.first_run_ranked_here([("r", {"q1": {"d": 1.0}})], jobs=1) is None


def test_reading_ahead_changes_nothing(monkeypatch):
    ahead = load_collection(QRELS, RUNS, jobs=1)
    monkeypatch.setattr(ReadAhead, "first_run_ranked_here", classmethod(lambda cls, runs, jobs: None))
    alone = load_collection(QRELS, RUNS, jobs=1)
    assert ahead.run_ids == alone.run_ids and ahead.run_tags == alone.run_tags
    for field in ("ranks", "num_retrieved", "in_run", "tie_start", "tie_size"):
        np.testing.assert_array_equal(getattr(ahead, field), getattr(alone, field))


def test_a_bad_run_read_ahead_is_reported_at_its_turn_after_the_qrels(tmp_path):
    bad_run = write_text(tmp_path / "run", ["q101 Q0 a 1 2.5 t", "q101 Q0 b 2 1.5 t", "q101 Q0 c"])
    with pytest.raises(InputError) as caught:
        load_collection(QRELS, [bad_run], jobs=1)
    assert (caught.value.source, caught.value.line) == (bad_run, 3)
    bad_qrels = write_text(tmp_path / "qrels", ["q101 0 a 1", "q101 0 b"])
    with pytest.raises(InputError) as caught:  # both bad: the qrels are read first, as without reading ahead
        load_collection(bad_qrels, [bad_run], jobs=1)
    assert (caught.value.source, caught.value.line) == (bad_qrels, 2)
