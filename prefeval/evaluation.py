"""Evaluating runs: from files to the values of every measure, sample by sample.

:class:`Evaluation` parses the qrels and each run once into a :class:`~prefeval.ranktable.RankTable`,
then, for every sample (a choice of queries and relevance labels, see :mod:`prefeval.sampling`),
computes every metric for all runs × queries and every preference for all pairs × queries with numpy.
Results stream as :class:`Block` (one sample, a block of consecutive queries) and :class:`Summary`
(one sample's means), in output order, so memory stays bounded however many pairs there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.trec import Qrels, read_qrels, read_run
from prefeval.measures import Measure, Metric, Preference, select_measures
from prefeval.positions import Positions, binary_positions, graded_positions
from prefeval.ranktable import RankTable
from prefeval.sampling import LABEL_POLICIES, draw_seed, draw_selection

BLOCK_ELEMENTS = 1 << 22
"""At most this many pair × position elements are compared at once (bounds memory per block)."""


@dataclass(frozen=True)
class Block:
    """The values of one sample on a block of consecutive queries.

    ``metrics[name]`` is (R, Qb); ``preferences[name]`` is (P, Qb) for every measure, metrics
    included as deltas metric(runi) − metric(runj), pairs in the order of :attr:`Evaluation.pairs`.
    """

    sample: int
    qids: list[str]
    metrics: dict[str, np.ndarray]
    preferences: dict[str, np.ndarray]


@dataclass(frozen=True)
class Summary:
    """One sample's means over its queries: ``metrics[name]`` (R,), ``preferences[name]`` (P,)."""

    sample: int
    num_queries: int
    metrics: dict[str, np.ndarray]
    preferences: dict[str, np.ndarray]


@dataclass
class Evaluation:
    """Runs ranked against qrels, and the measures to compute on them.

    ``samples`` repeats the evaluation with fresh subsampling (``query_fraction``, ``label_fraction``
    with ``label_policy``), numbered from 0; ``seed`` makes the subsampling reproducible (one is drawn,
    and reported in :attr:`notes`, when it is needed and not given).
    """

    table: RankTable
    measures: list[Measure]
    samples: int = 1
    query_fraction: float = 1.0
    label_fraction: float = 1.0
    label_policy: str = "random"
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.samples < 1:
            raise UsageError("samples must be at least 1")
        for name, fraction in (("query_fraction", self.query_fraction), ("label_fraction", self.label_fraction)):
            if not 0.0 < fraction <= 1.0:
                raise UsageError(f"{name} must be in (0, 1], not {fraction}")
        if self.label_policy not in LABEL_POLICIES:
            raise UsageError(f"label policy must be one of {', '.join(LABEL_POLICIES)}")
        if self.table.num_runs < 2 and self.preference_measures and not self.metric_measures:
            raise UsageError("preference measures need two or more runs, and no metric was asked for")
        random = self.query_fraction < 1.0 or self.label_fraction < 1.0
        if random and self.seed is None:
            self.seed = draw_seed()
            self.notes.append(f"no --seed given; drew seed {self.seed} (pass --seed {self.seed} to repeat)")

    @classmethod
    def from_files(
        cls,
        qrels: str,
        runs: Sequence[str],
        measures: Sequence[str | Measure] = (),
        measure_set: str = "none",
        binary_relevance: float | None = None,
        relevance_floor: float | None = None,
        topk: int | None = None,
        **options,
    ) -> "Evaluation":
        """Read ``qrels`` and the ``runs`` (paths, ``-`` for stdin) and set up the evaluation."""
        if not runs:
            raise UsageError("at least one run is needed")
        if topk is not None and topk < 1:
            raise UsageError("topk must be at least 1")
        chosen = _resolve_measures(measures, measure_set)
        judgments = read_qrels(qrels, binary_relevance, relevance_floor)
        table = RankTable.from_runs(judgments, (read_run(path) for path in runs), topk)
        evaluation = cls(table=table, measures=chosen, **options)
        evaluation.notes[:0] = data_notes(judgments, table)
        return evaluation

    @property
    def run_ids(self) -> list[str]:
        return self.table.run_ids

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Every pair of runs (i, j), i < j, in command-line order."""
        count = self.table.num_runs
        return [(i, j) for i in range(count) for j in range(i + 1, count)]

    @property
    def metric_measures(self) -> list[Metric]:
        return [m for m in self.measures if isinstance(m, Metric)]

    @property
    def preference_measures(self) -> list[Preference]:
        return [m for m in self.measures if isinstance(m, Preference)]

    @property
    def pair_measures(self) -> list[Measure]:
        """What pair lines carry: every measure (metrics as deltas), none with fewer than two runs."""
        return self.measures if self.table.num_runs > 1 else []

    def results(self) -> Iterator[Block | Summary]:
        """For each sample, its :class:`Block` s in query order, then its :class:`Summary`."""
        rng = np.random.default_rng(self.seed) if self.seed is not None else None
        for sample in range(self.samples):
            selection = draw_selection(self.table, rng, self.query_fraction, self.label_fraction, self.label_policy)
            yield from self._sample_results(sample, selection)

    def _sample_results(self, sample: int, selection) -> Iterator[Block | Summary]:
        binary = binary_positions(self.table, selection)
        graded = graded_positions(self.table, selection) if any(m.graded for m in self.preference_measures) else None
        qids = [self.table.qids[q] for q in selection.queries]
        metric_values = {m.name: m.compute(binary) for m in self.metric_measures}
        first, second = (np.array(side, dtype=np.int64) for side in zip(*self.pairs)) if self.pairs else (None, None)
        pair_sums = {m.name: 0.0 for m in self.pair_measures}
        for start, stop in _query_blocks(binary, graded, len(self.pairs)):
            preferences = {}
            if self.pair_measures:
                block_binary = binary.query_block(start, stop)
                block_graded = graded.query_block(start, stop) if graded is not None else None
                compared = {}
                for measure in self.pair_measures:
                    if isinstance(measure, Metric):
                        values = metric_values[measure.name][:, start:stop]
                        preferences[measure.name] = values[first] - values[second]
                    else:
                        positions = block_graded if measure.graded else block_binary
                        if id(positions) not in compared:
                            compared[id(positions)] = (positions.ranks[first], positions.ranks[second])
                        x, y = compared[id(positions)]
                        preferences[measure.name] = measure.compare(positions, x, y)
                    pair_sums[measure.name] = pair_sums[measure.name] + preferences[measure.name].sum(axis=1)
            yield Block(
                sample=sample,
                qids=qids[start:stop],
                metrics={name: values[:, start:stop] for name, values in metric_values.items()},
                preferences=preferences,
            )
        yield Summary(
            sample=sample,
            num_queries=len(qids),
            metrics={name: values.mean(axis=1) for name, values in metric_values.items()},
            preferences={name: total / len(qids) for name, total in pair_sums.items()},
        )


def _resolve_measures(measures: Sequence[str | Measure], measure_set: str) -> list[Measure]:
    objects = [m for m in measures if isinstance(m, Measure)]
    names = [m for m in measures if not isinstance(m, Measure)]
    if objects and (names or measure_set != "none"):
        return list(dict.fromkeys(objects + select_measures(names, measure_set)))
    return objects or select_measures(names, measure_set)


def _query_blocks(binary: Positions, graded: Positions | None, num_pairs: int) -> Iterator[tuple[int, int]]:
    """Consecutive query ranges whose pair × element comparisons fit in :data:`BLOCK_ELEMENTS`."""
    widest = graded if graded is not None else binary
    return widest.query_blocks(max(BLOCK_ELEMENTS // max(num_pairs, 1), 1))


def data_notes(qrels: Qrels, table: RankTable | None = None) -> list[str]:
    """What the user should know about the data (printed on stderr, never on stdout)."""
    notes = []
    if qrels.dropped_qids:
        shown = ", ".join(qrels.dropped_qids[:5]) + (", ..." if len(qrels.dropped_qids) > 5 else "")
        notes.append(f"{qrels.source}: dropped {len(qrels.dropped_qids)} queries without relevant documents ({shown})")
    runs = zip(table.run_ids, table.in_run) if table is not None else ()
    for run_id, in_run in runs:
        missing = int((~in_run).sum())
        if missing == table.num_queries:
            notes.append(f"run {run_id}: no query of the qrels is in this run; check the query ids")
        elif missing:
            notes.append(f"run {run_id}: {missing} of {table.num_queries} queries missing, scored as retrieving nothing")
    return notes
