"""Which measures read which kind of judgments (:mod:`prefeval.io.judgments`), and how.

* **grades** (``qrels``): every measure but those below.
* **preferences** (``prefs``, ``qrels_prefs``, ``pairs``): trec_eval's fourteen ``prefs_*`` measures
  (:mod:`prefeval.measures.prefs`); ``compat`` (Clarke, Vtyurina and Smucker), its ideal ranking
  being each judgment group's preferences, averaged over the groups (:func:`group_compat`); and
  ``num_q``.
* **judgment groups** (``qrels_jg``): trec_eval's ``map_avgjg``, ``P_avgjg`` and
  ``Rprec_mult_avgjg`` (:mod:`prefeval.measures.judgment_groups`), prefeval's ``ap_avgjg``,
  ``p_avgjg`` and ``rp_mult_avgjg``; ``compat`` averaged over the groups, each group's grades its
  ideal ranking; and ``num_q``.

Any other measure is refused with a one-line reason naming it (:func:`check_judgments`): the
measures of grades read one grade per document, which preferences do not give and judgment groups
give several of (prefeval does not pick one silently; the ``_avgjg`` measures average a measure over
the groups); the measures of preferences and of judgment groups read what a qrels does not hold.
The tie policies of ``--ties expected`` and ``range``, ``--label_fraction`` (which draws among
relevant documents) and the streamed engines apply to qrels only.

A measure of another kind than grades is a :class:`JudgmentMetric`: its values come from a
:class:`JudgedRuns`, the runs of a sample ranked against such judgments, which the evaluation makes
(:func:`judged_values`) where it would make positions.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.judgments import GRADES, GROUPS, PREFERENCES, QRELS, JudgmentsPath, kind
from prefeval.measures.base import Measure, Metric
from prefeval.ranking.options import RelevanceOptions
from prefeval.runtime.notes import note

if TYPE_CHECKING:  # only named in annotations: importing them would slow `prefeval measures`
    from prefeval.ranking.positions import Positions
    from prefeval.ranking.ranktable import RankTable

ANY_JUDGMENTS = ("num_q",)
"""The families that read no judgment (a count of queries): valid with every kind."""
GROUP_AVERAGED = ("compat",)
"""prefeval's measures of grades that also read preference judgments and judgment groups: averaged
over the judgment groups, each group's preferences (or grades) the ideal ranking (:func:`group_compat`)."""


class JudgmentMetric(Metric):
    """A metric of judgments other than grades (:attr:`judgments`: preferences or judgment groups),
    per run and query, computed from the runs ranked against them."""

    judgments: ClassVar[str]

    @abstractmethod
    def compute(self, judged: JudgedRuns) -> np.ndarray:
        """Values for all runs and the sample's queries: (R, Q)."""


def reads(measure: Measure, holds: str) -> bool:
    """Whether ``measure`` reads judgments that hold ``holds`` (grades, preferences, judgment groups)."""
    if measure.family in ANY_JUDGMENTS:
        return True
    if isinstance(measure, JudgmentMetric):
        return measure.judgments == holds
    return holds == GRADES or measure.family in GROUP_AVERAGED


def check_judgments(rel_format: str, measures: Sequence[Measure], *, ties: str = "docid",
                    label_fraction: float = 1.0, layout_lines: Sequence[str] = (), tool: str | None = None,
                    relevance: RelevanceOptions | None = None, named: bool = True) -> None:
    """A :class:`UsageError` (one line, naming the measure or option) for what the judgments of kind
    ``rel_format`` cannot give (module docstring): measures not named (``named`` false: the default
    lists read grades), a measure that does not read them, a tie policy
    other than ``docid``, ``--label_fraction``, trec_eval's ``relstring`` line (the grades of the
    documents retrieved), a foreign tool's layout (``tool``) whose measures do not read them, ``-b``
    and ``-f`` with preference judgments (which have no grades to map)."""
    found = kind(rel_format)
    what = f"--rel-format {found.name} ({found.holds})"
    if not named and found.holds != GRADES:
        nicknames = "all_prefs or prefs" if found.holds == PREFERENCES else "qrels_jg"
        raise UsageError(f"{what}: name its measures with -m (trec_eval's {nicknames}, or measure names: see "
                         "`prefeval measures`); the default lists read grades")
    check_read(found.holds, measures, ties=ties, label_fraction=label_fraction, what=what)
    if found.name == QRELS:
        return
    if tool is not None and tool not in found.tools:
        raise UsageError(f"--format {tool}: {tool} has no measures of {found.holds}; {what} needs another format")
    if "relstring" in layout_lines:
        raise UsageError(f"relstring shows the grades of the documents retrieved; {what} has none")
    if relevance is not None and found.holds == PREFERENCES and (
            relevance.binary_relevance is not None or relevance.relevance_floor is not None):
        raise UsageError(f"-b and -f map grades; {what} only orders documents: leave them out")


def check_read(holds: str, measures: Sequence[Measure], *, ties: str = "docid", label_fraction: float = 1.0,
               what: str | None = None) -> None:
    """The part of :func:`check_judgments` an evaluation checks once its judgments are read (they
    hold ``holds``): every measure reads them, and the tie policy and subsampling apply to them."""
    for measure in measures:
        if not reads(measure, holds):
            raise UsageError(f"{measure.name} {_cannot_read(measure, holds)}")
    if holds == GRADES:
        return
    what = what or f"judgments of {holds}"
    if ties != "docid":
        raise UsageError(f"--ties {ties} applies to qrels; with {what} documents of equal scores are ordered as "
                         "trec_eval orders them: use --ties docid")
    if label_fraction != 1.0:
        raise UsageError(f"--label_fraction draws among the relevant documents of a qrels, not among the "
                         f"judgments of {what}")


def loading_options(rel_format: str, qrels, runs, relevance: RelevanceOptions,
                    reader: str) -> tuple[JudgmentsPath, RelevanceOptions]:
    """How a collection whose judgments are of kind ``rel_format`` (not ``qrels``) is read: the path
    with its kind (:class:`~prefeval.io.judgments.JudgmentsPath`, which the reader of qrels hands to
    the kind's reader), and the options the runs are ranked with: for preferences without a rank
    cut-off (their measures cut at ``--topk`` in trec_eval's order of preferences:
    :mod:`prefeval.ranking.preferences`) and without ``-J`` (they rank the judged documents only
    already, as trec_eval, which ignores it for them); a note says that ``-l`` does not apply to
    them (trec_eval ignores it too). The judgments must be a file (or ``-``), read in memory."""
    from prefeval.io.source import STDIN

    found = kind(rel_format)
    if not isinstance(qrels, (str, os.PathLike)):
        raise UsageError(f"--rel-format {found.name}: the judgments are read from a file (or -), not from a value "
                         f"of type {type(qrels).__name__}")
    if reader != "memory":
        raise UsageError(f"the {reader} reader reads qrels; --rel-format {found.name} is read in memory "
                         "(--engine memory)")
    path = os.fspath(qrels)
    named = runs if isinstance(runs, (list, tuple)) else [runs]
    if path == STDIN and any(isinstance(run, str) and run == STDIN for run in named):
        raise UsageError("standard input (-) can stand for only one of the input files")
    if found.holds == PREFERENCES:
        if relevance.relevance_level is not None:
            note(f"-l has no effect on the measures of --rel-format {found.name} (preferences have no grades to "
                 "compare with a level; trec_eval ignores it too)")
        relevance = dataclasses.replace(relevance, topk=None, judged_only=False)
    return JudgmentsPath(path, found.name), relevance


def _cannot_read(measure: Measure, holds: str) -> str:
    """Why ``measure`` cannot read judgments that hold ``holds``."""
    if isinstance(measure, JudgmentMetric):
        return (f"reads {measure.judgments} (--rel-format "
                f"{'prefs, qrels_prefs or pairs' if measure.judgments == PREFERENCES else 'qrels_jg'}), not {holds}")
    if holds == GROUPS:
        return ("reads one grade per document, and judgment groups give one per group: use its average over the "
                "groups (map_avgjg, P_avgjg, Rprec_mult_avgjg) or a qrels")
    if measure.is_metric:
        return f"reads grades, which {holds} do not give (prefs_* and compat read them)"
    return f"compares the positions of relevant documents, which {holds} do not give (prefs_* and compat read them)"


class JudgedRuns:
    """The runs of one sample ranked against judgments of another kind than grades: what a
    :class:`JudgmentMetric` reads. ``table`` holds every run's ranks of the judged documents (read
    without a rank cut-off for preferences: :mod:`prefeval.ranking.preferences`), ``queries`` the
    sample's queries (the table's numbering, in the order the values are listed)."""

    def __init__(self, table: RankTable, queries: np.ndarray, relevance: RelevanceOptions, sequential: bool):
        self.table = table
        self.queries = np.asarray(queries)
        self.relevance = relevance
        self.sequential = sequential

    @property
    def judgments(self):
        return self.table.qrels.judgments

    @property
    def num_runs(self) -> int:
        return self.table.num_runs

    @functools.cached_property
    def preference_counts(self) -> list:
        """Per query, its :class:`~prefeval.ranking.preferences.PreferenceCounts` (made once)."""
        from prefeval.ranking.preferences import judged_order, query_counts

        preferences = self.judgments
        offsets = self.table.qrels.offsets
        counts = []
        for query in self.queries.tolist():
            position, retrieved = judged_order(self.table, query, self.relevance.topk)
            counts.append(query_counts(preferences, int(offsets[query]),
                                       slice(int(preferences.group_offsets[query]),
                                             int(preferences.group_offsets[query + 1])),
                                       position, retrieved, slice(query, query + 1)))
        return counts

    def per_query(self, value_of) -> np.ndarray:
        """(R, Q): ``value_of(counts)`` (R,) for each query's preference counts."""
        columns = [value_of(counts) for counts in self.preference_counts]
        return np.stack(columns, axis=1) if columns else np.zeros((self.num_runs, 0))

    def group_average(self, measure: Metric) -> np.ndarray:
        """(R, Q): ``measure`` (a metric of grades) on each judgment group of each query, its
        documents and grades the group's, averaged over the query's groups
        (:mod:`prefeval.ranking.judgment_groups`)."""
        from prefeval.ranking.judgment_groups import group_average

        return group_average(measure, self.table, self.queries, self.relevance, self.sequential)


def judged_values(measure: Metric, judged: JudgedRuns, positions: Callable[[], Positions]) -> np.ndarray:
    """The values (R, Q) of ``measure`` on runs ranked against judgments of another kind than grades:
    a :class:`JudgmentMetric` from ``judged``, ``compat`` from each group's judgments
    (:func:`group_compat`), a measure that reads no judgment (``num_q``) from the positions of the
    judged documents (``positions()``)."""
    if isinstance(measure, JudgmentMetric):
        return measure.compute(judged)
    if measure.family in GROUP_AVERAGED:
        return group_compat(measure, judged)
    return measure.compute(positions())


def group_compat(measure: Metric, judged: JudgedRuns) -> np.ndarray:
    """compat (Clarke, Vtyurina and Smucker, ICTIR 2020, doi:10.1145/3409256.3409816, and TOIS 2021),
    whose ideal ranking may have ties, on the judgments of several groups: the mean over the query's G
    groups of compat with each group's ideal ranking I_g,

        compat(run, query) = (1/G) Σ_g compat(run, I_g).

    On judgment groups (qrels_jg), I_g holds the documents group g grades > 0, by grade. On preference
    judgments, I_g holds g's relevant documents (value > 0), a document above another when g prefers
    it, documents g leaves unordered tied (compat orders ties as the run does). That needs g's
    preferences among its relevant documents to be a ranking with ties (a weak order: two documents
    g leaves unordered are each preferred to the same documents), as they always are in a group of
    one sub-group (a qrels_prefs, a pairwise line); a group of several sub-groups whose preferences
    are not is an error naming it and two documents (:mod:`prefeval.ranking.judgment_groups`)."""
    return judged.group_average(measure)
