"""Loading a collection: the qrels read, the runs ranked against them, and the notes on the data.

Parsing a run and ranking it (:func:`prefeval.ranking.ranktable.rank_relevant`) is independent of
every other run, and what comes back from a worker is only the run's RankTable row (the ranks of the
relevant documents: kilobytes), so runs are spread over ``jobs`` processes. The result does not
depend on ``jobs``. A run read from stdin (``-``) is parsed in the main process, which owns stdin.

When the runs are ranked in this process (one run, or ``jobs=1``), the first run file is read in a
thread while the qrels are read (:class:`ReadAhead`): both readers spend most of their time in numpy,
which lets go of the interpreter's lock, so the two reads overlap on two processors (one robust03 run
and its qrels: 122 ms one after the other, 79 ms side by side). Only the reading moves: the run is
ranked, and any error in it reported, when its turn comes, as without it.

This is the one place that reports what the user should know about the data (as
:class:`~prefeval.runtime.notes.Note` s, for the command line and the API alike): queries of the
qrels without a relevant document (dropped), queries without a document at the relevance level
(left out), per run the queries of the qrels it lacks (scored as retrieving nothing) and the
queries it has that the qrels lack (ignored), and qrels whose queries are judged on several
subtopics, with which view of them each measure reads (:func:`note_views`: never silently).

Under conventions that judge once (trec_eval's, :mod:`prefeval.ranking.conventions`), a document
judged on two lines of a query is an error, as trec_eval stops on it (:func:`check_judged_once`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from prefeval.errors import InputError
from prefeval.io.ids import id_text, id_texts
from prefeval.io.inputs import Judgments, load_qrels, load_run, named_runs
from prefeval.io.source import STDIN, check_stdin_used_once
from prefeval.io.subtopics import Subtopics
from prefeval.io.trec import Qrels, RunColumns
from prefeval.ranking.conventions import LISTED, REFERENCE_CONVENTIONS, SKIP, WORST, ZERO, Conventions
from prefeval.ranking.items import ItemRequest
from prefeval.ranking.options import NO_RELEVANCE_OPTIONS, RelevanceOptions
from prefeval.ranking.positions import Selection
from prefeval.ranking.ranktable import RankedRun, RankTable, RelevantLookup, rank_relevant
from prefeval.runtime.notes import note
from prefeval.runtime.parallel import Background, fork_map, shares_out
from prefeval.runtime.progress import Progress

SHOWN = 5
"""How many query ids a note lists."""
MISSING_NOTES = {WORST: "scored as retrieving nothing", SKIP: "left out of its lines and means",
                 ZERO: "scored 0 on every measure"}
"""What the note on a run's missing queries says became of them, by convention."""


def load_collection(
    qrels: Judgments,
    runs,
    relevance: RelevanceOptions = NO_RELEVANCE_OPTIONS,
    jobs: int = 1,
    progress: Progress | None = None,
    others: bool = False,
    conventions: Conventions = REFERENCE_CONVENTIONS,
    items: ItemRequest | Background | None = None,
) -> RankTable:
    """Read the qrels and rank the runs against them, reporting the notes on the data. Each may be
    a path (``-`` for stdin, at most once), a DataFrame or a dict; ``runs`` a list or a dict
    ``{name: run}`` (:mod:`prefeval.io.inputs`). ``others``: keep the ranks of the qrels' documents
    that are not relevant too (:attr:`~prefeval.ranking.ranktable.RankTable.other_ranks`), for the
    measures that read them. ``conventions``: whether the queries without a relevant document are
    kept, and what becomes of the queries a run lacks (the notes say it). ``items``: what the item
    measures read of each run's ranking (:mod:`prefeval.ranking.items`), or that request being made
    in the background (the side inputs read while the qrels are: :class:`~prefeval.runtime.parallel.Background`),
    waited for once the qrels are read."""
    named = named_runs(runs)
    check_stdin_used_once([qrels, *(run for _, run in named)])
    ahead = ReadAhead.first_run_ranked_here(named, jobs)
    judgments = load_judgments(qrels, relevance, conventions.keep_empty)
    if conventions.judged_once:
        check_judged_once(judgments)
    if isinstance(items, Background):
        items = items.result()
    ranked = _rank_runs(judgments, named, relevance.topk, jobs, progress or Progress.silent(), others, ahead,
                        listing=conventions.summary_order == LISTED, items=items)
    table = RankTable.from_ranked(judgments, ranked)
    _note_levels(table, relevance.relevance_level)
    _note_runs(table, ranked, conventions.missing_queries)
    return table


def load_judgments(qrels: Judgments, relevance: RelevanceOptions = NO_RELEVANCE_OPTIONS,
                   keep_empty: bool = False) -> Qrels:
    """Read the qrels alone, noting the queries dropped for want of a relevant document (unless
    ``keep_empty`` keeps them)."""
    judgments = load_qrels(qrels, relevance.binary_relevance, relevance.relevance_floor, keep_empty)
    note_dropped(judgments.source, judgments.dropped_qids)
    return judgments


def check_judged_once(qrels: Qrels) -> None:
    """An :class:`InputError` naming the line of the first document judged twice in a query, which
    trec_eval stops on (``duplicate docs``): the conventions that judge once
    (:attr:`~prefeval.ranking.conventions.Conventions.judged_once`)."""
    if qrels.repeated is not None:
        kind = " (a qrels of subtopics: the other formats read it)" if qrels.subtopics is not None else ""
        raise InputError(qrels.source, f"{qrels.repeated.message()}: trec_eval stops on it (duplicate docs), and so "
                                       f"do its conventions{kind}", qrels.repeated.line)


SHOWN_MEASURES = 5
"""How many measure names a note lists."""


def note_views(source: str, subtopics: Subtopics | None, measures: Sequence) -> None:
    """The note on judgments per subtopic (:mod:`prefeval.io.subtopics`), so that a qrels of subtopics
    is never read silently as an ad hoc one: when some query is judged on several subtopics, how many,
    and which measures read each document's largest grade over its subtopics (the classic ones) and
    which read the judgments per subtopic (those of :attr:`~prefeval.measures.base.Measure.reads_intents`);
    when none is but a measure reads subtopics, that it reads each query as one intent."""
    intents = [m.name for m in measures if m.reads_intents]
    classic = [m.name for m in measures if not m.reads_intents]
    if subtopics is None:
        if intents:
            note(f"{source}: no query is judged on several subtopics (one iter value each): {_listed(intents)} "
                 "read each query as one intent")
        return
    several = int(subtopics.several.sum())
    views = []
    if classic:
        views.append(f"{_listed(classic)} read each document's largest grade over its subtopics")
    if intents:
        views.append(f"{_listed(intents)} read the judgments per subtopic")
    if not measures:
        views.append("the classic measures read each document's largest grade over its subtopics, the intent-aware "
                     "ones the judgments per subtopic")
    note(f"{source}: {several} of {len(subtopics.counts)} {'query' if len(subtopics.counts) == 1 else 'queries'} "
         f"judged on several subtopics (the iter column): " + "; ".join(views))


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_MEASURES])
    return shown + (f" and {len(names) - SHOWN_MEASURES} more" if len(names) > SHOWN_MEASURES else "")


def note_dropped(source: str, dropped_qids: Sequence[str], count: int | None = None) -> None:
    """The note on the queries of the qrels dropped for want of a relevant document (``count`` of
    them, ``dropped_qids`` the first few when not all are given)."""
    if dropped_qids:
        note(f"{source}: dropped {queries_text(dropped_qids, count)} without relevant documents")


def note_below_level(source: str, qids: Sequence[str], count: int, level: float) -> None:
    """The note on the queries without a document at the relevance level (``count``; the first few)."""
    if count:
        note(f"{source}: {queries_text(qids, count)} without a document of grade >= {level:g}: "
             "the binary measures score 0 on them")


def note_run(run_id: str, scored_lines: int, missing: int, num_queries: int, foreign_qids: Sequence[str],
             foreign_count: int | None = None, missing_queries: str = WORST) -> None:
    """The notes on one run: every line scored nan, the queries of the qrels it lacks, and those it
    has that the qrels lack (``foreign_count``; ``foreign_qids`` the first few)."""
    run_id = id_text(run_id)
    if scored_lines == 0:
        note(f"run {run_id}: every line is scored nan; it is evaluated as retrieving nothing")
    elif missing:
        note(f"run {run_id}: {missing} of {num_queries} queries missing, "
             + MISSING_NOTES[missing_queries])
    if foreign_qids:
        note(f"run {run_id}: {queries_text(foreign_qids, foreign_count)} not in the qrels, ignored")


class ReadAhead:
    """One run file read in a thread (module docstring); :meth:`columns` waits for its columns, or
    raises what reading raised. A read-ahead whose run is never asked for (the qrels were bad, the
    command was stopped) finishes on its own, its result dropped: its thread does not keep the
    process alive."""

    def __init__(self, number: int, run: Judgments, name: str | None):
        self.number = number
        self._outcome: dict[str, object] = {}
        self._thread = threading.Thread(target=self._read, args=(run, name), name="prefeval-read-ahead",
                                        daemon=True)
        self._thread.start()

    @classmethod
    def first_run_ranked_here(cls, runs: Sequence[tuple[str | None, Judgments]], jobs: int) -> ReadAhead | None:
        """The read-ahead of the first run file that :func:`_rank_runs` ranks in this process (None when
        worker processes rank them all, or the first is not a file)."""
        here = [n for n in range(len(runs)) if not _from_stdin(runs[n][1])]
        if shares_out(jobs, len(here)) or not here:
            return None
        name, run = runs[here[0]]
        return cls(here[0], run, name) if isinstance(run, (str, os.PathLike)) else None

    def _read(self, run: Judgments, name: str | None) -> None:
        try:
            self._outcome["columns"] = load_run(run, name)
        except BaseException as error:  # handed to the caller of columns(), in the main thread
            self._outcome["error"] = error

    def columns(self) -> RunColumns:
        self._thread.join()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["columns"]


def _from_stdin(run: Judgments) -> bool:
    return isinstance(run, str) and run == STDIN


def _rank_runs(qrels: Qrels, runs: Sequence[tuple[str | None, Judgments]], topk: int | None, jobs: int,
               progress: Progress, others: bool = False, ahead: ReadAhead | None = None,
               listing: bool = False, items: ItemRequest | None = None) -> list[RankedRun]:
    """Rank the runs, given as (name, run) as :func:`prefeval.io.inputs.named_runs` lists them, in order
    (``ahead``: one of them being read already; ``listing``: keep the order each lists its queries in)."""
    lookup = RelevantLookup(qrels, others, items)

    def rank(number: int) -> RankedRun:
        name, run = runs[number]
        columns = ahead.columns() if ahead is not None and ahead.number == number else load_run(run, name)
        return rank_relevant(columns, lookup, topk, listing=listing)

    from_stdin = [n for n, (_, run) in enumerate(runs) if _from_stdin(run)]
    elsewhere = [n for n in range(len(runs)) if n not in from_stdin]
    progress.start("parsing runs", len(runs))
    try:
        ranked = {}
        for number, run in zip(elsewhere, fork_map(rank, elsewhere, jobs)):
            ranked[number] = run
            progress.advance()
        for number in from_stdin:
            ranked[number] = rank(number)
            progress.advance()
    finally:
        progress.finish()
    return [ranked[number] for number in range(len(runs))]


def _note_levels(table: RankTable, level: float | None) -> None:
    if level is None:
        return
    below = below_level(table, level)
    note_below_level(table.qrels.source, [table.qids[q] for q in below[:SHOWN + 1]], len(below), level)


def below_level(table: RankTable, level: float) -> np.ndarray:
    """The queries of ``table`` with a relevant document but none of grade >= ``level``."""
    everything = Selection.everything(table)
    at_level = everything.at_relevance_level(table, level)
    has_one = np.bincount(table.qrels.query_of_document[at_level.documents], minlength=table.num_queries) > 0
    return np.setdiff1d(np.flatnonzero(np.diff(table.qrels.offsets) > 0), np.flatnonzero(has_one))


def _note_runs(table: RankTable, ranked: list[RankedRun], missing_queries: str = WORST) -> None:
    for run, in_run in zip(ranked, table.in_run):
        note_run(run.run_id, run.scored_lines, int((~in_run).sum()), table.num_queries, run.foreign_queries,
                 missing_queries=missing_queries)


def queries_text(qids: Sequence[str], count: int | None = None) -> str:
    """``3 queries (a, b, c)``, ``1 query (a)``: ``count`` queries (default: as many as ``qids``),
    the ids cut after :data:`SHOWN`, spelled as in JSON (:func:`~prefeval.io.ids.id_text`)."""
    count = len(qids) if count is None else count
    shown = ", ".join(id_texts(qids[:SHOWN])) + (", ..." if count > SHOWN else "")
    return f"{count} {'query' if count == 1 else 'queries'} ({shown})"
