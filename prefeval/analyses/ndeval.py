"""ndeval's evaluation (``prefeval ndeval``): a run's intent-aware measures per topic and their means,
or their risk-sensitive differences from a baseline run, as ndeval 4.5 computes and lists them.

The values are those of prefeval's measures (:mod:`prefeval.measures.diversity`, at ndeval's α and β
and its 21 columns: :mod:`prefeval.measures.foreign.ndeval`), on the files as ndeval reads them
(:mod:`prefeval.io.ndeval`). What this module adds is ndeval's bookkeeping of topics:

* **the topics listed**: every topic of the run, in increasing order, those the qrels lack included
  (every value 0); a topic of the qrels that the run lacks is not listed;
* **the mean** (``amean``): the sum of the listed values, added in the order listed, divided by the
  number of the run's topics that the qrels have; with ``complete`` (``-c``) by the number of the
  qrels' topics (those the run lacks count 0);
* **against a baseline** (``-baseline``, ``-riskAlpha a``): the topics of the run and of the baseline
  are merged in increasing order; a topic of the baseline that the run lacks is listed (the run
  scoring 0 on it) only with ``complete``; each value is the run's r against the baseline's b,
  r − b when r >= b, else (1 + a)(r − b) (a baseline lacking the topic scoring 0); the mean divides
  by the larger of the number above and the number of topics listed; the run id becomes
  ``RUN (rel to. BASELINE; rs=1+a; a=TEXT)``, TEXT the risk weight as written on the command line.

A mean over no topic (no topic of the run in the qrels, without ``-c``) is an error here, where ndeval
prints NaN. So is none: where ndeval divides 0 by 0 for nNRBP (a topic of the qrels without a
relevant document that the run has, or α = 0 with β = 1), the value is 0 and :attr:`NdevalReport.nan`
says where ndeval prints ``-nan``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError, UsageError
from prefeval.io.ndeval import NdevalQrels, NdevalRun, read_ndeval_qrels, read_ndeval_run
from prefeval.measures import parse_measures
from prefeval.measures.foreign import ndeval
from prefeval.ranking.intents import intent_positions
from prefeval.ranking.loading import note_views
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant

MEAN_TOPIC = "amean"
"""The topic of ndeval's line of means."""


class NdevalOptions(NamedTuple):
    """ndeval's options (:mod:`prefeval.cli.ndeval` reads its command line): α and β, the order of the
    runs (``traditional``: by score), the cut-off ``depth`` (``-M``), ``complete`` (``-c``), and the
    baseline run with its risk weight (``risk_alpha``, as written: ``risk_text``)."""

    alpha: float = ndeval.ALPHA
    beta: float = ndeval.BETA
    traditional: bool = False
    depth: int | None = None
    complete: bool = False
    baseline: str | None = None
    risk_alpha: float = 0.0
    risk_text: str = "0"

    def check(self) -> NdevalOptions:
        """These options, or a :class:`UsageError` for a value ndeval refuses (or would read as NaN)."""
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"-{name} must be in [0, 1], not {value!r}")
        if not (0.0 <= self.risk_alpha < float("inf")):
            raise UsageError(f"-riskAlpha must be a finite number >= 0, not {self.risk_alpha!r}")
        if self.depth is not None and self.depth <= 0:
            raise UsageError(f"-M must be a positive integer, not {self.depth!r}")
        return self


class NdevalReport(NamedTuple):
    """What ndeval prints for a run: its run id (with the baseline's, in risk-sensitive mode), the
    columns, one row per topic listed (topic, values) and the means; and the (topic, column) where
    ndeval itself prints ``-nan`` (module docstring), with ``mean_nan`` the columns of its means."""

    run_id: str
    columns: tuple[str, ...]
    rows: list[tuple[int, np.ndarray]]
    means: np.ndarray
    nan: list[tuple[int, str]]
    mean_nan: list[str]


DEFAULT_OPTIONS = NdevalOptions()
"""ndeval's defaults."""


def ndeval_report(qrels: str, run: str, options: NdevalOptions = DEFAULT_OPTIONS) -> NdevalReport:
    """ndeval's evaluation of the run file ``run`` against the qrels file ``qrels`` (module docstring)."""
    options = options.check()
    judgments = read_ndeval_qrels(qrels)
    runs = [read_ndeval_run(run, options.traditional, options.depth)]
    if options.baseline is not None:
        runs.append(read_ndeval_run(options.baseline, options.traditional, options.depth))
    values = topic_values(judgments, runs, options.alpha, options.beta)
    return _report(judgments, runs, values, options)


def topic_values(judgments: NdevalQrels, runs: list[NdevalRun], alpha: float = ndeval.ALPHA,
                 beta: float = ndeval.BETA) -> np.ndarray:
    """(R, Q, 21): the values of ndeval's columns for every run and topic of the qrels (0 on a topic the
    run lacks)."""
    qrels = judgments.qrels
    lookup = RelevantLookup(qrels)
    ranked = []
    for number, run in enumerate(runs):
        columns = run.columns
        queries = lookup.query_numbers(columns.qids)
        kept = queries >= 0  # the topics the qrels lack are listed at 0, without a note
        columns = columns._replace(run_id=f"run{number}", qids=columns.qids[kept], docids=columns.docids[kept],
                                   scores=columns.scores[kept])
        ranked.append(rank_relevant(columns, lookup, queries=queries[kept]))
    table = RankTable.from_ranked(qrels, ranked)
    selection = Selection.everything(table)
    positions = binary_positions(table, selection)
    positions = positions._replace(intents=intent_positions(table, selection))
    measures = parse_measures(ndeval.column_measures(alpha, beta))
    note_views(qrels.source, qrels.subtopics, measures)
    return np.stack([measure.compute(positions) for measure in measures], axis=-1)


def _report(judgments: NdevalQrels, runs: list[NdevalRun], values: np.ndarray, options: NdevalOptions) -> NdevalReport:
    columns = tuple(name for name, _ in ndeval.COLUMNS)
    width = len(columns)
    nnrbp = columns.index("nNRBP")
    column_of = {int(topic): place for place, topic in enumerate(judgments.topics)}
    nan_ideal = _nan_topics(judgments, options)

    def of(run: int, topic: int) -> np.ndarray:
        place = column_of.get(topic)
        return values[run, place] if place is not None else np.zeros(width)

    run, baseline = runs[0], (runs[1] if len(runs) > 1 else None)
    in_qrels = sum(int(topic) in column_of for topic in run.topics)
    if baseline is None:
        listed = [(int(topic), True, False) for topic in run.topics]
    else:
        listed = _merged(run.topics, baseline.topics, options.complete)
    rows, nan = [], []
    total = np.zeros(width)
    zeros = np.zeros(width)
    for topic, run_has, base_has in listed:  # (a side that lacks the topic scores 0 on it)
        ours = of(0, topic) if run_has else zeros
        if baseline is None:
            row = ours - 0.0
        else:
            base = of(1, topic) if base_has else zeros
            row = np.where(ours >= base, ours - base, (options.risk_alpha + 1.0) * (ours - base))
        if topic in nan_ideal and (run_has or base_has):
            nan.append((topic, columns[nnrbp]))
        rows.append((topic, row))
        for column in range(width):  # one after the other, in the order listed (ndeval's totals)
            total[column] += row[column]
    count = len(judgments.topics) if options.complete else in_qrels
    if baseline is not None:
        count = max(count, len(listed))
    if count == 0:
        raise InputError(run.source, "no topic of this run is in the qrels: ndeval's means would be 0/0 (it prints "
                                     "-nan); -c averages over the qrels' topics")
    means = total / count
    run_id = run.run_id if baseline is None else (
        f"{run.run_id} (rel to. {baseline.run_id}; rs=1+a; a={options.risk_text})")
    return NdevalReport(run_id, columns, rows, means, nan, [columns[nnrbp]] if nan else [])


def _nan_topics(judgments: NdevalQrels, options: NdevalOptions) -> set[int]:
    """The topics of the qrels where ndeval's nNRBP is 0/0: those without a relevant judgment, and every
    one when 1 − (1 − α) β is 0."""
    subtopics = judgments.qrels.subtopics
    if (1.0 - (1.0 - options.alpha) * options.beta) == 0.0:
        return {int(topic) for topic in judgments.topics}
    if subtopics is not None:
        empty = np.diff(subtopics.offsets) == 0
    else:
        empty = np.diff(judgments.qrels.offsets) == 0
    return {int(topic) for topic in judgments.topics[empty]}


def _merged(run_topics: np.ndarray, base_topics: np.ndarray, complete: bool) -> list[tuple[int, bool, bool]]:
    """ndeval's walk through the run's and the baseline's topics, both increasing (module docstring):
    per topic listed, (topic, whether the run has it, whether the baseline has it)."""
    listed = []
    i = j = 0
    while i < len(run_topics) or (j < len(base_topics) and complete):
        if i >= len(run_topics) or (j < len(base_topics) and run_topics[i] > base_topics[j]):
            if complete:  # a topic of the baseline alone
                listed.append((int(base_topics[j]), False, True))
            j += 1
        elif j >= len(base_topics) or run_topics[i] < base_topics[j]:
            listed.append((int(run_topics[i]), True, False))
            i += 1
        else:
            listed.append((int(run_topics[i]), True, True))
            i += 1
            j += 1
    return listed
