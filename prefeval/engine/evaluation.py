"""Evaluating runs: every measure on every sample of a collection, block by block of queries.

An :class:`Evaluation` is made of explicit choices, all given when it is made:

* its **reader** (:data:`prefeval.engine.READERS`): where the RankTables of the queries come from,
  the collection read whole into one table (whose samples are drawn from it, see
  :mod:`prefeval.ranking.subsampling`) or streamed chunk by chunk from its files;
* its **executor** (:mod:`prefeval.engine.executors`): where the chunks are evaluated, here (blocks
  of queries shared among forked processes) or on a Dask cluster;
* its **conventions** (:mod:`prefeval.ranking.conventions`): which queries count, in which order,
  and how sums are added;
* its measures and the options of ``prefeval eval`` (ties, summary statistics, ...).

For every sample it computes every metric for all runs × queries and every preference for all pairs
× queries with numpy. Results stream as :class:`~prefeval.engine.results.Block` (one sample, a block
of consecutive queries) and :class:`~prefeval.engine.results.Summary` (one sample's summary, made
once, here), in output order, so memory stays bounded however many pairs there are; every output
format renders these. A chunk (a whole sample, or the queries of one streamed RankTable) is
evaluated as the whole sample's queries would be, and the summary adds every chunk's values in query
order, so every reader and executor gives the same bytes.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from prefeval.engine import reader_class
from prefeval.engine.chunks import Chunk, Reader, Sampling
from prefeval.engine.executors import LOCAL, Executor
from prefeval.engine.results import Block, FixedOrderSum, RunningSummary, SequentialSum, Summary
from prefeval.engine.whole import WholeCollection
from prefeval.errors import UsageError
from prefeval.io.judgments import QRELS
from prefeval.io.output import InPlace, PartsDirectory, PartWriter
from prefeval.measures import Measure, Metric, Preference, select_measures
from prefeval.measures.judgments import JudgedRuns, check_judgments, check_read, judged_values, loading_options
from prefeval.measures.summaries import MEAN, check_statistics
from prefeval.measures.ties import (
    DEFAULT_DRAWS,
    DOCID,
    EXPECTED,
    bound_keys,
    check_measures,
    check_policy,
    metric_deltas,
    metrics_under,
    needs_draws,
    preferences_on_ties,
    preferences_under,
    summary_extras,
)
from prefeval.ranking.conventions import LISTED, REFERENCE, REFERENCE_CONVENTIONS, ZERO, Conventions
from prefeval.ranking.conventions import conventions as make_conventions
from prefeval.ranking.intents import with_intents
from prefeval.ranking.items import ExposureCounts, ItemRequest, note_items
from prefeval.ranking.options import NO_RELEVANCE_OPTIONS, RelevanceOptions
from prefeval.ranking.positions import Positions, Selection, binary_positions, graded_positions
from prefeval.ranking.ranktable import RankTable
from prefeval.ranking.subsampling import SubsamplingOptions
from prefeval.runtime.memory import CACHED_ELEMENTS
from prefeval.runtime.notes import note
from prefeval.runtime.parallel import Background, check_jobs, default_jobs, fork_map
from prefeval.runtime.progress import Progress
from prefeval.runtime.seeds import resolve_seed

if TYPE_CHECKING:
    from prefeval.analyses.groups import GroupSummaries, UserGroupIndex

__all__ = ["Block", "Chunk", "Evaluation", "SampleEvaluation", "Summary", "resolve_measures"]

T = TypeVar("T")

BLOCK_ELEMENTS = CACHED_ELEMENTS
"""At most this many pair × position elements are compared at once (:mod:`prefeval.runtime.memory`)."""

MIN_BLOCKS = 8

SHARED_VALUES = 1 << 20
"""The blocks of a sample are shared out among the :attr:`Evaluation.jobs` processes only when it has
at least this many values to compute and write ((runs + pairs) × queries × measures): below it,
forking the workers and sending the lines back costs more than it saves (on robust03, 17 runs × 100
queries with the 15 default measures, 230,000 values: 118 ms in one process against 167 ms in two;
2 runs × 30,000 queries, 1,350,000 values: 1.65 s against 1.38 s)."""

TIE_STREAM = 1
"""The first spawn key of the random streams of tie orders (the subsampling uses the seed itself)."""


@dataclass(eq=False)
class Evaluation:
    """Runs ranked against qrels, and the measures to compute on them (module docstring).

    ``reader``: where the RankTables come from (:data:`prefeval.engine.READERS`); ``executor``: where
    the chunks are evaluated (:mod:`prefeval.engine.executors`); ``conventions``: which queries
    count and how (:mod:`prefeval.ranking.conventions`).

    ``subsampling`` repeats the evaluation ``samples`` times with fresh subsampling of queries and
    labels, numbered from 0 (:mod:`prefeval.ranking.subsampling`), which a reader of the whole
    collection draws; its seed is resolved once, when the choices are random
    (:mod:`prefeval.runtime.seeds`), and kept in :attr:`seed`.

    ``relevance.relevance_level`` L (trec_eval's ``-l``): binary measures (every one whose
    ``reads_grades`` is false: AP, P@k, RR, the lexicographic preferences, ...) count a document as
    relevant when its grade is >= L; those that read the grades (nDCG, graded RPP) keep every
    positive grade. A query is evaluated, in a sample, only when it has a (selected) document of
    grade >= L, so that m >= 1 for every measure.

    Blocks of queries are computed in ``jobs`` forked processes (the same ``jobs`` that read the
    runs) when a sample has enough of them (:data:`SHARED_VALUES`); the output does not depend on it.

    ``summary_statistics`` are the statistics of every metric over the queries that the summary
    holds (``eval --summary``; :mod:`prefeval.measures.summaries`): the mean (the default) and any of
    median, min, q10, cvar10 and gini. The summary itself is each measure's aggregator's.

    ``ties`` says how documents with equal scores are ordered (:mod:`prefeval.measures.ties`):
    ``docid`` (trec_eval's order), ``expected`` (every value is its expectation over uniformly random
    orders; the lexicographic preferences are estimated from ``draws`` random orders where there
    are more joint orders than that, with a seed resolved then, once, and kept in :attr:`seed`) or
    ``range`` (more keys: the minimum and maximum over all orders).

    ``compare``: whether pairs of runs are compared (trec_eval's layout shows runs one by one). A
    preference on a query without a relevant document is 0.
    """

    reader: Reader
    measures: list[Measure]
    subsampling: SubsamplingOptions = SubsamplingOptions()
    relevance: RelevanceOptions = NO_RELEVANCE_OPTIONS
    jobs: int = 1
    progress: Progress | None = None
    summary_statistics: tuple[str, ...] = (MEAN,)
    ties: str = DOCID
    draws: int = DEFAULT_DRAWS
    conventions: Conventions = REFERENCE_CONVENTIONS
    compare: bool = True
    executor: Executor = LOCAL
    user_groups: UserGroupIndex | None = None
    """The users' groups (``eval --user-groups``): every summary also holds the summary of each
    group's users alone (:attr:`Summary.groups`, :mod:`prefeval.analyses.groups`)."""
    items: ItemRequest | None = None
    """What the item measures read (:mod:`prefeval.measures.items`): the item context, and what the
    reader computed of every run's ranking for them (the reader must have been opened with it)."""
    seed: int | None = field(init=False, default=None)
    parts: PartsDirectory | None = field(init=False, default=None)
    """Where the per-query lines go, as part files (``eval --parts``), instead of :meth:`rendered`'s
    results: written by the workers for a partitioned reader, here otherwise (one part)."""
    in_place: InPlace | None = field(init=False, default=None)
    """The output file that :meth:`rendered`'s lines are written to, one after the other, when the
    executor's workers may write their chunks' lines there themselves (``--engine dask``,
    :meth:`prefeval.engine.dask.DaskExecutor.map_chunks`); None: the lines are rendered here."""

    def __post_init__(self):
        from prefeval.measures.items import RunMeasure, check_item_inputs

        check_jobs(self.jobs)
        check_item_inputs(self.measures, self.items.context if self.items is not None else None)
        self.run_measures: list[RunMeasure] = [m for m in self.measures if isinstance(m, RunMeasure)]
        """The measures of the whole run (:mod:`prefeval.measures.items`): on the summary lines only."""
        self.measures = [m for m in self.measures if not isinstance(m, RunMeasure)]
        self.conventions = self.conventions.check()
        check_judged(self.ties, self.relevance)
        self._run_ids = list(self.reader.run_ids)
        if not self.reader.draws_samples and (self.subsampling.samples > 1 or self.subsampling.draws_at_random):
            raise UsageError("a streamed evaluation has one sample of every query and label: subsampling draws "
                             "from the whole collection, which needs it in memory")
        self._table = getattr(self.reader, "table", None)
        self._judged_table: RankTable | None = None
        wants_others = self.relevance.judged_only or self.needs_others
        if wants_others and self._table is not None and self._table.other_ranks is None:
            raise UsageError("these measures read the judged documents that are not relevant: load the table "
                             "with others=True (Evaluation.from_files does)")
        if self._table is not None and self._table.qrels.judgments is not None:
            check_read(self._table.qrels.judgments.kind, self.measures, ties=self.ties,
                       label_fraction=self.subsampling.label_fraction)
        elif self.relevance.judged_only and self._table is not None:
            self._table = self._table.judged_only()
        check_policy(self.ties, self.draws)
        check_measures(self.ties, self.measures)
        self.summary_statistics = check_statistics(self.summary_statistics, self.measures)
        if self.run_measures and (self.subsampling.samples > 1 or self.subsampling.draws_at_random):
            raise UsageError(f"{self.run_measures[0].name} is a measure of the whole run: it has no value on a "
                             "subsample of the users")
        if self.num_runs < 2 and self.preference_measures and not self.metric_measures:
            raise UsageError("preference measures need two or more runs, and no metric was asked for")
        if self.subsampling.draws_at_random:
            self.seed = resolve_seed(self.subsampling.seed)
        self.progress = self.progress or Progress.silent()
        self.reader.note_views(self.measures)

    @classmethod
    def from_files(
        cls,
        qrels,
        runs,
        measures: str | Sequence[str | Measure] | None = (),
        measure_set: str = "none",
        *,
        binary_relevance: float | None = None,
        relevance_floor: float | None = None,
        relevance_level: float | None = None,
        topk: int | None = None,
        samples: int = 1,
        query_fraction: float = 1.0,
        label_fraction: float = 1.0,
        label_fraction_policy: str = "random",
        seed: int | None = None,
        jobs: int | None = None,
        progress: Progress | None = None,
        summary: str | Sequence[str] = (MEAN,),
        ties: str = DOCID,
        draws: int = DEFAULT_DRAWS,
        conventions: str | Conventions = REFERENCE,
        complete: bool = False,
        empty_queries: str | None = None,
        missing_queries: str | None = None,
        judged_only: bool = False,
        compare: bool = True,
        others: bool = False,
        reader: str = "memory",
        executor: Executor = LOCAL,
        rel_format: str = QRELS,
        user_groups=None,
        train=None,
        items=None,
        item_features=None,
        item_groups=None,
        head_share: float = 0.2,
    ) -> Evaluation:
        """Read ``qrels`` and the ``runs`` and set up the evaluation, with the options of ``prefeval
        eval`` under the same names (its option groups are bundled here, once).

        Inputs may be paths (``-`` for stdin), DataFrames or dicts (see
        :func:`prefeval.ranking.loading.load_collection`); ``measures`` one name or a list of names
        (or measure objects). Work is shared among ``jobs`` processes (default: one per processor).

        ``conventions``: a profile of :mod:`prefeval.ranking.conventions` (``reference``,
        ``trec_eval``, ``ir_measures``) or conventions already made; ``complete`` (trec_eval's ``-c``),
        ``empty_queries`` and ``missing_queries`` change it.

        ``reader``: a name of :data:`~prefeval.engine.READERS`: ``memory`` (the whole
        collection), or ``stream`` (the files chunk by chunk as they are evaluated, unless the qrels
        are not grouped by query: then in memory); ``executor``: where the chunks are evaluated.

        ``rel_format``: the kind of the judgments in ``qrels`` (:data:`prefeval.io.judgments.KINDS`:
        ``qrels``, ``prefs``, ``qrels_prefs``, ``pairs``, ``qrels_jg``); a kind other than ``qrels``
        is read from a path, in memory, and read by its measures only
        (:mod:`prefeval.measures.judgments`).

        ``user_groups``: a path or a DataFrame of (user, group) (:mod:`prefeval.io.side`), or a dict
        ``{user: group}``: every summary is also broken down by group (:mod:`prefeval.analyses.groups`).

        ``train``, ``items``, ``item_features``, ``item_groups``: the side inputs of the item measures
        (paths or DataFrames, :mod:`prefeval.io.side`; :mod:`prefeval.measures.items`); ``head_share``:
        the share of the training interactions that the popular head holds (APLT's long tail is the rest).
        """
        chosen = resolve_measures(measures, measure_set)
        rules = make_conventions(conventions, complete=complete, empty_queries=empty_queries,
                                 missing_queries=missing_queries)
        relevance = RelevanceOptions(binary_relevance, relevance_floor, relevance_level, topk,
                                     judged_only=bool(judged_only))
        subsampling = SubsamplingOptions(samples, query_fraction, label_fraction, label_fraction_policy, seed)
        jobs = default_jobs() if jobs is None else check_jobs(jobs)
        statistics = check_statistics(summary, chosen)
        check_policy(ties, draws)
        check_measures(ties, chosen)
        check_judged(ties, relevance)
        check_judgments(rel_format, chosen, ties=ties, label_fraction=label_fraction, relevance=relevance,
                        named=bool(measures) or measure_set != "none")
        others = others or relevance.judged_only or any(m.reads_judged or m.judged_only for m in chosen)
        make_items = _item_request(chosen, train, items, item_features, item_groups, head_share, user_groups)
        loading = relevance
        if rel_format != QRELS:
            qrels, loading = loading_options(rel_format, qrels, runs, relevance, reader)
        opened = reader_class(reader)
        in_background = opened is WholeCollection and jobs > 1  # the side inputs read while the qrels are
        if make_items is None:
            item_request = None
        elif opened is WholeCollection:
            item_request = Background(make_items, fork=in_background)
        else:
            item_request = make_items()
        groups = Background(functools.partial(_user_groups, user_groups), fork=in_background) \
            if user_groups is not None else None
        try:
            collection = opened.open(qrels, runs, loading, rules, others, jobs, progress, executor, items=item_request)
            if collection is None:  # the qrels could not be streamed
                collection = WholeCollection.open(qrels, runs, relevance, rules, others, jobs, progress,
                                                  items=item_request)
        finally:
            for background in (item_request, groups):
                if isinstance(background, Background):
                    background.close()
        if isinstance(item_request, Background):
            item_request = item_request.result()
        return cls(collection, chosen, subsampling, relevance, jobs, progress, statistics, ties, draws, rules,
                   compare, executor, groups.result() if groups is not None else None, item_request)

    @property
    def table(self) -> RankTable | None:
        """The whole collection's table (without the unjudged documents under ``-J``); None when it is
        streamed."""
        return self._table

    @property
    def run_ids(self) -> list[str]:
        return self._run_ids

    @property
    def run_tags(self) -> list[str | None]:
        """The tag of each run (the last field of its first line), None where it has none; known once
        the runs are read (for a streamed collection, once its last chunk is evaluated)."""
        return self.reader.run_tags

    @property
    def num_runs(self) -> int:
        return len(self.run_ids)

    @property
    def needs_others(self) -> bool:
        """True when some measure reads the judged documents that are not relevant."""
        return any(m.reads_judged or m.judged_only for m in self.measures)

    @property
    def needs_items(self) -> bool:
        """True when some measure of the per-query lines reads the items (:mod:`prefeval.measures.items`)."""
        return any(m.reads_items for m in self.measures)

    @property
    def needs_intents(self) -> bool:
        """True when some measure reads the judgments per subtopic (:mod:`prefeval.ranking.intents`)."""
        return any(m.reads_intents for m in self.measures)

    def judged_table(self) -> RankTable:
        """The whole table with the documents that are not judged removed (``-J``, ``judged_only=1``),
        made once."""
        if self._judged_table is None:
            self._judged_table = self._table if self.relevance.judged_only else self._table.judged_only()
        return self._judged_table

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Every pair of runs (i, j), i < j, in command-line order."""
        count = self.num_runs
        return [(i, j) for i in range(count) for j in range(i + 1, count)]

    @property
    def metric_measures(self) -> list[Metric]:
        return [m for m in self.measures if isinstance(m, Metric)]

    @property
    def preference_measures(self) -> list[Preference]:
        return [m for m in self.measures if isinstance(m, Preference)]

    @property
    def pair_measures(self) -> list[Measure]:
        """What pair lines carry: every measure (metrics as deltas); none with fewer than two runs, or
        when the runs are not compared (``compare=False``: trec_eval's layout shows runs one by one)."""
        return self.measures if self.num_runs > 1 and self.compare else []

    def resolved_seed(self) -> int:
        """The seed, resolved (:func:`~prefeval.runtime.seeds.resolve_seed`) the first time it is needed."""
        if self.seed is None:
            self.seed = resolve_seed(self.subsampling.seed)
        return self.seed

    def tie_generator(self, sample: int, query: int) -> np.random.Generator:
        """The random numbers of the tie orders drawn for query ``query`` (of the RankTable) in
        sample ``sample``: a stream of its own, from the seed, so that draws do not depend on how the
        queries are split among processes."""
        return np.random.default_rng(np.random.SeedSequence(self.resolved_seed(), spawn_key=(TIE_STREAM, sample,
                                                                                              query)))

    def draw_samples(self) -> Iterator[SampleEvaluation]:
        """Each sample of the whole table in turn: its selection of queries and labels is drawn when
        it is reached, so the same seed gives the same samples."""
        for number, _, chunks in self.reader.samples(self.sampling()):
            for chunk in chunks:
                yield SampleEvaluation(self, number, chunk.selection)

    def sampling(self) -> Sampling:
        """What the reader is told of the samples to hand over."""
        return Sampling(self.subsampling, self.seed, self.conventions, self._table)

    def chunk_results(self, chunk: Chunk, render: Callable[[Block], T]) -> Iterator[tuple[T, Block]]:
        """The blocks of a chunk in query order, each rendered (in :attr:`jobs` forked processes, or
        here while the reader's own processes read the next chunk). A chunk that is a partition of the
        files is read here by the reader's part that evaluates partitions
        (:meth:`prefeval.engine.partitioned.PartitionSource.evaluate`): its outputs with None, then
        (None, what the reader merges)."""
        if chunk.partition is not None:
            return iter(self.reader.evaluate(self, chunk.partition, render))
        part = SampleEvaluation(self, chunk.sample, chunk.selection, chunk.table, chunk.query_offset)
        blocks = part.query_blocks()
        shared = self.jobs > 1 and not self.reader.reads_ahead and part.num_values >= SHARED_VALUES
        jobs = self.jobs if shared else 1
        return fork_map(functools.partial(_rendered_block, part, render), blocks, jobs)

    def for_workers(self) -> Evaluation:
        """This evaluation as a worker of another machine needs it: the reader's part that chunks refer
        to (the whole table, or nothing), no progress line, one process, evaluated where it is."""
        shared = copy.copy(self)
        shared.reader = self.reader.for_workers()
        shared.executor, shared.progress, shared.jobs = LOCAL, Progress.silent(), 1
        shared.in_place = None
        return shared

    def results(self) -> Iterator[Block | Summary]:
        """For each sample, its :class:`Block` s in query order, then its :class:`Summary`."""
        return self.rendered(lambda block: block)

    def rendered(self, render: Callable[[Block], T]) -> Iterator[T | Summary]:
        """For each sample, ``render(block)`` for its blocks in query order, then its :class:`Summary`.

        The executor computes and renders the blocks of every chunk (the rendering and the block's
        values come back; the summary adds them up in query order).
        """
        for number, num_queries, chunks in self.reader.samples(self.sampling()):
            self.progress.start(f"evaluating sample {number}: queries", num_queries)
            sink = PartWriter(self.parts) if self.parts is not None else None
            try:
                running = self.running_summary(number)
                groups = self.group_summaries(number)
                counted = ItemCounts(self._table)
                for chunk_results in self.executor.map_chunks(self, counted.passing(chunks), render):
                    for output, block in _taken(chunk_results):
                        if isinstance(block, Block):
                            running.add(block)
                            if groups is not None:
                                groups.add(block)
                            self.progress.advance(len(block.qids))
                        elif block is not None:  # a partition's results, merged by its reader
                            self.progress.advance(self.reader.merge(block, running))
                            if groups is not None:
                                groups.merge(block.groups)
                            counted.add(block.items)
                        if output is None:
                            continue
                        if sink is not None and isinstance(output, list):  # a block's lines, in pieces
                            for piece in output:
                                sink.write(piece)
                        else:
                            yield output
                if sink is not None:
                    sink.close()
                pair_names = [m.name for m in self.pair_measures]
                summary = running.summary(pair_names, summary_extras)
                if groups is not None:
                    if groups.ungrouped and number == 0:
                        note(f"--user-groups: {groups.ungrouped:,} of the {summary.num_queries:,} users are in no "
                             "group: they count in the whole run's summary and in no group's")
                    summary = dataclasses.replace(summary, groups=groups.summaries(pair_names, summary_extras))
                if self.items is not None:
                    counts = counted.total()
                    if number == 0:
                        note_items(self.items.context, counts, self.run_ids)
                    for measure in self.run_measures:
                        summary.metrics.update(measure.of_run(counts, self.items.context))
                        for name, part in zip(self.items.group_names, counts.groups):
                            if name in summary.groups:
                                summary.groups[name].metrics.update(measure.of_run(part, self.items.context))
                yield summary
            finally:
                self.progress.finish()

    def group_summaries(self, sample: int, partial: bool = False) -> GroupSummaries | None:
        """A running summary per user group of sample ``sample`` (None without :attr:`user_groups`)."""
        if self.user_groups is None:
            return None
        from prefeval.analyses.groups import GroupSummaries

        return GroupSummaries(self.user_groups, functools.partial(self.running_summary, sample), partial)

    def running_summary(self, sample: int, partial: bool = False) -> RunningSummary:
        """The summary of sample ``sample``, made from its blocks as they come (or, ``partial``, the
        sums of a partition's blocks, merged later: :meth:`RunningSummary.merge`)."""
        aggregators = {m.name: m.aggregator for m in self.metric_measures}
        sums = SequentialSum if self.conventions.sequential else FixedOrderSum
        return RunningSummary(sample, aggregators, self.summary_statistics, self.num_runs, len(self.pairs), sums,
                              partial)


class SampleEvaluation:
    """One sample (or one chunk of a sample's queries): its queries and labels, their position
    vectors and the metrics of every run.

    ``table`` is the evaluation's table unless given (a chunk of a streamed collection, whose first
    query is query ``query_offset`` of the whole collection: the random streams of tie orders are
    keyed by that number, so that they do not depend on the chunks).

    Preferences are computed by :meth:`block`, for a block of consecutive queries at a time (see
    :meth:`query_blocks`), and blocks are independent of each other. A query on which a preference
    has no relevant document (kept by ``--empty-queries keep``, or without one at the relevance
    level) is a tie: 0, neither run preferred.
    """

    def __init__(self, evaluation: Evaluation, number: int, selection: Selection, table: RankTable | None = None,
                 query_offset: int = 0):
        self._judged_table: RankTable | None = None
        if table is None:
            table = evaluation.table
        elif evaluation.relevance.judged_only:
            table = self._judged_table = table.judged_only()
        self.table = table
        self.query_offset = query_offset
        self.evaluation = evaluation
        self.number = number
        self.selection = selection
        self._positions: dict[tuple, Positions] = {}
        # binary measures count grade >= the relevance level; graded ones (ndcg, graded RPP) every
        # positive grade, on the same queries
        self.binary = self.positions(reads_grades=False)
        self.every_grade = self.positions(reads_grades=True)
        self.qids = [table.qids[q] for q in selection.queries]
        self.table_queries = selection.queries
        # judgments of another kind than grades: their measures read the runs ranked against them
        self.judged = JudgedRuns(table, selection.queries, evaluation.relevance, evaluation.conventions.sequential) \
            if table.qrels.judgments is not None else None
        tied = evaluation.ties != DOCID
        self.preference_positions: dict[bool, tuple[Positions | None, np.ndarray | None]] = {}
        for levels in (False, True):
            if any(m.per_grade_level == levels for m in evaluation.preference_measures):
                level = None if levels else evaluation.relevance.relevance_level
                intents = level if not levels and evaluation.needs_intents else False
                self.preference_positions[levels] = _with_relevant(
                    table, selection.at_relevance_level(table, level), self.every_grade if levels else self.binary,
                    levels, tied, intents, evaluation.needs_items)
        values, extras = {}, {}
        for measure in evaluation.metric_measures:
            if self.judged is not None:
                values[measure.name] = judged_values(measure, self.judged, lambda m=measure: self.positions_for(m))
                continue
            computed = _metrics_under_ties(evaluation, [measure], self.positions_for(measure))
            values.update(computed[0])
            extras.update(computed[1])
        names = [m.name for m in evaluation.metric_measures]
        rules = evaluation.conventions
        self.zeroed = table.in_run[:, selection.queries] if rules.missing_queries == ZERO else None
        self.metric_values = {name: self._zeroed(values[name]) for name in names}
        self.metric_extras = {key: self._zeroed(extras[key]) for name in names for key in bound_keys(name)
                              if key in extras}
        self.summary_metrics = {m.name: self._summary_from_qrels() for m in evaluation.metric_measures
                                if rules.qrels_num_rel and m.complete_summary_from_qrels and m.relevance_level is None}
        pairs = np.array(evaluation.pairs, dtype=np.int64).reshape(-1, 2)
        self.first, self.second = pairs[:, 0], pairs[:, 1]
        reported = table.in_run[:, selection.queries] if rules.skip_missing else None
        self.metric_reported = reported
        self.listing_order = table.listing_order[:, selection.queries] \
            if rules.summary_order == LISTED and table.listing_order is not None else None
        self.pair_reported = reported[self.first] & reported[self.second] if reported is not None else None
        drawn = [m for m in evaluation.preference_measures if not m.per_grade_level]
        if evaluation.ties == EXPECTED and needs_draws(drawn, self.binary, self.first, self.second, evaluation.draws):
            evaluation.resolved_seed()  # before any worker needs it

    def _zeroed(self, values: np.ndarray) -> np.ndarray:
        """``values`` (R, Q), 0 on the queries a run lacks under the ``zero`` convention."""
        return values if self.zeroed is None else np.where(self.zeroed, values, 0.0)

    def _summary_from_qrels(self) -> np.ndarray:
        """Per run and query, the query's documents of grade > 0 in the qrels: what trec_eval's -c
        adds up for num_rel's summary (:mod:`prefeval.ranking.conventions`)."""
        counts = self.every_grade.length.astype(np.float64)
        return np.broadcast_to(counts, (self.evaluation.num_runs, len(counts)))

    def positions(self, reads_grades: bool, level: float | None = None, judged_only: bool = False) -> Positions:
        """One-segment-per-query positions of this sample's queries, made once for each kind: every
        positive grade (``reads_grades``), or the documents at relevance level ``level`` (None: the
        evaluation's); ranked among the judged documents only with ``judged_only``."""
        evaluation = self.evaluation
        level = None if reads_grades else (level if level is not None else evaluation.relevance.relevance_level)
        key = (level, judged_only)  # every positive grade and no level select the same documents
        if key not in self._positions:
            table = self.judged_table() if judged_only else self.table
            positions = binary_positions(table, self.selection.at_relevance_level(table, level),
                                         evaluation.ties != DOCID, evaluation.needs_others,
                                         evaluation.conventions.sequential)
            if reads_grades and evaluation.relevance.relevance_level is not None:
                at_level = self.positions(False, None, judged_only)
                positions = positions._replace(num_at_level=at_level.length)
            if evaluation.needs_intents and not reads_grades:
                positions = with_intents(positions, table, self.selection.at_relevance_level(table, level), level)
            if evaluation.needs_items:
                positions = _itemised(positions, table, self.selection.queries)
            self._positions[key] = positions
        return self._positions[key]

    def judged_table(self) -> RankTable:
        """This part's table with the documents that are not judged removed, made once."""
        if self.table is self.evaluation.table:
            return self.evaluation.judged_table()
        if self._judged_table is None:
            self._judged_table = self.table.judged_only()
        return self._judged_table

    def positions_for(self, measure: Metric) -> Positions:
        """The positions ``measure`` is computed on (its grades, its ``rel=``, its ``judged_only``)."""
        return self.positions(measure.reads_grades, measure.relevance_level, measure.judged_only)

    @property
    def num_values(self) -> int:
        """The values its lines hold: (runs + pairs) × queries × measures."""
        evaluation = self.evaluation
        lines = evaluation.num_runs + len(self.first)
        return lines * len(self.qids) * len(evaluation.measures)

    def query_blocks(self) -> list[tuple[int, int]]:
        """Consecutive query ranges whose pair × element comparisons fit in :data:`BLOCK_ELEMENTS`,
        and at least :data:`MIN_BLOCKS` of them when there are that many queries, so that the work
        can be shared among processes. They do not depend on the number of processes (and the
        values do not depend on the blocks). They cover every query of the sample: the graded
        positions size them only when they hold every query (not only those with a relevant
        document)."""
        graded, columns = self.preference_positions.get(True, (None, None))
        return list(_query_blocks(self.binary, graded if columns is None else None, len(self.first), MIN_BLOCKS))

    def block(self, start: int, stop: int) -> Block:
        """The values of queries ``start..stop-1``."""
        evaluation = self.evaluation
        preferences, pair_extras = {}, {}
        computed: dict[str, np.ndarray] = {}
        for levels, (positions, columns) in self.preference_positions.items():
            measures = [m for m in evaluation.preference_measures if m.per_grade_level == levels]
            if not (measures and evaluation.pair_measures):
                continue
            first, stop_at = (start, stop) if columns is None else np.searchsorted(columns, [start, stop])
            if first == stop_at:  # no query of the block has a relevant document: every value is a tie
                values, extras = preferences_on_ties(evaluation.ties, measures, len(self.first), stop - start)
                computed.update(values)
                pair_extras.update(extras)
                continue
            values, extras = preferences_under(
                evaluation.ties, measures, positions.query_block(int(first), int(stop_at)), self.first, self.second,
                evaluation.draws,
                lambda q, first=first, columns=columns: evaluation.tie_generator(
                    self.number, self.query_offset
                    + int(self.table_queries[(first + q) if columns is None else columns[first + q]])))
            if columns is not None:  # queries without a relevant document: ties
                placed = columns[first:stop_at] - start
                values = {name: _scattered(v, placed, stop - start) for name, v in values.items()}
                extras = {name: _scattered(v, placed, stop - start) for name, v in extras.items()}
            computed.update(values)
            pair_extras.update(extras)
        metric_extras = {key: values[:, start:stop] for key, values in self.metric_extras.items()}
        for measure in evaluation.pair_measures:
            if isinstance(measure, Metric) and evaluation.ties == DOCID and self.zeroed is None and self.judged is None:
                # divided once (P@10 of 7 hits against 1 is 0.6, where 0.7 − 0.1 is 0.6000000000000001)
                positions = self.positions_for(measure).query_block(start, stop)
                preferences[measure.name] = measure.differences(positions, self.first, self.second)
            elif isinstance(measure, Metric):  # differences of expectations, of bounds, or of zeroed values
                values = self.metric_values[measure.name][:, start:stop]
                preferences[measure.name], extras = metric_deltas(measure.name, values, metric_extras,
                                                                  self.first, self.second)
                pair_extras.update(extras)
            else:
                preferences[measure.name] = computed[measure.name]
        return Block(
            sample=self.number,
            qids=self.qids[start:stop],
            metrics={name: values[:, start:stop] for name, values in self.metric_values.items()},
            preferences=preferences,
            metric_extras=metric_extras,
            pair_extras=pair_extras,
            metric_reported=self.metric_reported[:, start:stop] if self.metric_reported is not None else None,
            pair_reported=self.pair_reported[:, start:stop] if self.pair_reported is not None else None,
            summary_metrics={name: values[:, start:stop] for name, values in self.summary_metrics.items()},
            listing_order=self.listing_order[:, start:stop] if self.listing_order is not None else None,
        )


class ItemCounts:
    """The exposure counts of a sample's runs (:class:`~prefeval.ranking.items.ExposureCounts`), added
    up as the chunks' tables pass (:meth:`passing`) and as partitions hand theirs back (:meth:`add`);
    the whole table's when no chunk carries a table of its own (``table``: the evaluation's)."""

    def __init__(self, table: RankTable | None):
        self.table = table
        self.counts: ExposureCounts | None = None

    def passing(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        for chunk in chunks:
            if chunk.table is not None and chunk.table.items is not None:
                self.add(chunk.table.items.counts)
            yield chunk

    def add(self, counts: ExposureCounts | None) -> None:
        if counts is not None:
            self.counts = counts if self.counts is None else self.counts + counts

    def total(self) -> ExposureCounts:
        if self.counts is None and self.table is not None and self.table.items is not None:
            return self.table.items.counts
        return self.counts


def _user_groups(value) -> UserGroupIndex:
    """The users' groups of ``--user-groups`` (a path, a DataFrame or a dict: :meth:`UserGroupIndex.of`)."""
    from prefeval.analyses.groups import UserGroupIndex

    return UserGroupIndex.of(value)


def _item_request(measures: Sequence[Measure], train, items, item_features, item_groups, head_share: float,
                  user_groups=None) -> Callable[[], ItemRequest] | None:
    """How to make what the item measures among ``measures`` read
    (:func:`~prefeval.measures.items.item_request`) from the side inputs given (paths or DataFrames;
    None: not given), reading them (:func:`_read_item_request`); None when no measure reads the items.
    Side inputs that no measure reads are noted now, and not read."""
    from prefeval.measures.items import RunMeasure

    given = {"train": train, "items": items, "item-features": item_features, "item-groups": item_groups}
    given = {kind: value for kind, value in given.items() if value is not None}
    whole_run = any(isinstance(m, RunMeasure) for m in measures)
    read = {m.reads_items for m in measures} | ({"train"} if whole_run else set())
    if read - {None}:
        read.add("items")  # the catalogue: what every item measure ranks and counts items among
    unread = [kind for kind in given if kind not in read]
    if unread:
        note(f"{', '.join('--' + kind for kind in unread)}: no measure asked for reads "
             f"{'it' if len(unread) == 1 else 'them'} (arp, ild, gini, provider, ...: prefeval measures)")
    if not any(m.reads_items for m in measures):
        return None
    given = {kind: value for kind, value in given.items() if kind in read}
    return functools.partial(_read_item_request, measures, given, head_share, whole_run, user_groups)


def _read_item_request(measures: Sequence[Measure], given: dict, head_share: float, whole_run: bool,
                       user_groups) -> ItemRequest:
    """The side inputs ``given`` (``{kind: path or DataFrame}``) read, and what the item measures among
    ``measures`` read of them (:func:`_item_request`); with ``user_groups`` (as given to
    :meth:`Evaluation.from_files`, read here too: the two are read side by side, each in a process of
    its own when there are jobs to spare), the exposure counts are also kept per group of users."""
    from prefeval.measures.items import check_item_inputs, item_request

    items, train = given.get("items"), given.get("train")
    context = None
    if given:
        from prefeval.io.side import read_side
        from prefeval.ranking.items import ItemContext

        tables = {kind.replace("-", "_"): read_side(value, kind) for kind, value in given.items()}
        strict = items is not None or (train is not None and whole_run)
        context = ItemContext.of(**tables, head_share=head_share, strict=strict)
    check_item_inputs(measures, context)
    request = item_request(measures, context)
    if user_groups is not None and (request.exposures or request.by_rank):
        groups = _user_groups(user_groups)
        request = request._replace(user_groups=groups, group_names=tuple(groups.names))
    return request


def _itemised(positions: Positions, table: RankTable, queries: np.ndarray) -> Positions:
    """``positions`` with what the item measures read of the queries ``queries`` of ``table``."""
    if table.items is None:
        return positions
    return positions._replace(items=table.items.queries.columns(queries))


def _with_relevant(table: RankTable, selection: Selection, positions: Positions, levels: bool,
                   tied: bool, intents: float | None | bool = False,
                   items: bool = False) -> tuple[Positions | None, np.ndarray | None]:
    """The positions a preference is computed on: those of the queries with a relevant document
    (preferences need m >= 1), and the columns of those queries among all (None: every query). No
    positions (None) when no query has one: every value is a tie. ``intents`` (a relevance level, or
    None for grade > 0; False: none): the positions carry the queries' intents
    (:func:`~prefeval.ranking.intents.with_intents`); ``items``: what the item measures read."""
    has_relevant = np.bincount(table.qrels.query_of_document[selection.documents],
                               minlength=table.num_queries)[selection.queries] > 0
    if has_relevant.all():
        if not levels:
            return positions, None
        graded = graded_positions(table, selection, tied)
        return (_itemised(graded, table, selection.queries) if items else graded), None
    columns = np.flatnonzero(has_relevant)
    if not len(columns):
        return None, columns
    kept = Selection(selection.queries[columns], selection.documents)
    kept_positions = (graded_positions if levels else binary_positions)(table, kept, tied)
    if intents is not False:
        kept_positions = with_intents(kept_positions, table, kept, intents)
    if items:
        kept_positions = _itemised(kept_positions, table, kept.queries)
    return kept_positions, columns


def _taken(results: Iterable[T]) -> Iterator[T]:
    """The items of ``results`` in order; a list is emptied as they are taken, so that an item taken
    (a partition's block of lines, received whole) is not held after it has been handed on."""
    if not isinstance(results, list):
        yield from results
        return
    results.reverse()
    while results:
        yield results.pop()


def _scattered(values: np.ndarray, columns: np.ndarray, width: int) -> np.ndarray:
    """(P, width) zeros with ``values`` (P, len(columns)) placed in ``columns``."""
    out = np.zeros(values.shape[:-1] + (width,), dtype=values.dtype)
    out[..., columns] = values
    return out


def check_judged(ties: str, relevance: RelevanceOptions) -> None:
    """``-J`` ranks the judged documents only, in trec_eval's order: the tie policies do not apply."""
    if relevance.judged_only and ties != DOCID:
        raise UsageError(f"-J (judged documents only) does not apply with --ties {ties}; use --ties docid")


def _metrics_under_ties(evaluation: Evaluation, measures: list[Metric],
                        positions: Positions) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The metrics' values (and extra keys) under the evaluation's tie policy, (R, Q) each. Under
    ``expected`` and ``range`` they cost more, so they are computed for blocks of queries in the
    evaluation's processes (each query on its own: the blocks change no value)."""
    if evaluation.ties == DOCID or not measures:
        return metrics_under(evaluation.ties, measures, positions)
    blocks = list(positions.query_blocks(max(-(-int(positions.length.sum()) // MIN_BLOCKS), 1)))
    if len(blocks) < 2:
        return metrics_under(evaluation.ties, measures, positions)
    work = functools.partial(_metrics_of_block, evaluation.ties, measures, positions)
    parts = list(fork_map(work, blocks, evaluation.jobs))
    return tuple({key: np.concatenate([part[kind][key] for part in parts], axis=1) for key in parts[0][kind]}
                 for kind in (0, 1))


def _metrics_of_block(ties: str, measures: list[Metric], positions: Positions,
                      block: tuple[int, int]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return metrics_under(ties, measures, positions.query_block(*block))


def _rendered_block(sample: SampleEvaluation, render: Callable[[Block], T],
                    block_range: tuple[int, int]) -> tuple[T, Block]:
    """One block of queries, rendered, and the block itself (what a worker sends back)."""
    block = sample.block(*block_range)
    return render(block), block


def resolve_measures(measures: str | Sequence[str | Measure] | None, measure_set: str = "none") -> list[Measure]:
    """The measures of an evaluation: one name or a list of names and measure objects (``None`` or
    empty: the default list), with ``measure_set`` as ``-M`` reads it."""
    if measures is None:
        measures = ()
    elif isinstance(measures, (str, Measure)):
        measures = [measures]
    objects = [m for m in measures if isinstance(m, Measure)]
    names = [m for m in measures if not isinstance(m, Measure)]
    for name in names:
        if not isinstance(name, str):
            raise UsageError(f"a measure is a name or a measure object, not {name!r}")
    chosen = list(dict.fromkeys(objects + select_measures(names, measure_set))) if objects and (
        names or measure_set != "none") else objects or select_measures(names, measure_set)
    if not chosen:
        raise UsageError("no measure: runid and relstring are lines of trec_eval's layout (--format trec_eval)")
    return chosen


def _query_blocks(binary: Positions, graded: Positions | None, num_pairs: int, parts: int) -> Iterator[tuple[int, int]]:
    widest = graded if graded is not None else binary
    at_least_parts = -(-int(widest.length.sum()) // parts)
    return widest.query_blocks(max(min(BLOCK_ELEMENTS // max(num_pairs, 1), at_least_parts), 1))
