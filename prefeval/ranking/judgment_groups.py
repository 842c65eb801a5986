"""A measure of grades averaged over judgment groups: each group of each query a query of its own.

For judgments held by several groups (trec_eval's ``qrels_jg``: :mod:`prefeval.io.judgment_groups`;
or the groups of preference judgments, :mod:`prefeval.io.prefs`), :func:`group_average` computes a
measure of grades (AP, P@k, R-precision at a multiple, compat) on every group g of a query as if g's
judgments were a qrels of their own, and averages over the query's G groups:

    value(run, query) = (1/G) Σ_g measure(run, the query judged by g),

the terms added in the order of the groups (by id, trec_eval's order) one after the other, as
trec_eval's ``m_*_avgjg.c`` add them (they divide by G when G > 1; a mean over one group is that
group's value). A group that judges no document relevant has its measure's value for a query without
a relevant document (0 for those above), and counts among the G all the same.

The groups' documents and grades: a qrels_jg group's documents of grade > 0, its grades (``-l``
selects those of grade >= L for the binary measures, as for a qrels); a preference group's relevant
documents (value > 0), each graded 1 + the number of the group's relevant documents it is preferred
to, which ranks them as the group does when its preferences are a ranking with ties (a weak order:
anything else is an error naming the group and two documents, see
:func:`~prefeval.measures.judgments.group_compat`).

The runs' ranks are the RankTable's (score descending, equal scores by docid descending); judgments
of preferences are read without a rank cut-off (:mod:`prefeval.ranking.preferences`), so the cut
at ``--topk`` is made here: a rank beyond K is not retrieved, and a run retrieves min(n, K). With
``-J``, a judgment group's documents are ranked among the documents that group judged, as trec_eval's
``-J`` ranks them (:func:`_judged_only`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from prefeval.errors import InputError
from prefeval.io.fields import TextColumn
from prefeval.io.prefs import Preferences
from prefeval.io.trec import Qrels
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.positions import Selection, binary_positions
from prefeval.ranking.ranktable import RankTable

if TYPE_CHECKING:
    from prefeval.measures.base import Metric


def group_average(measure: Metric, table: RankTable, queries: np.ndarray, relevance: RelevanceOptions,
                  sequential: bool) -> np.ndarray:
    """(R, Q): ``measure`` averaged over the judgment groups of each of ``queries`` (module
    docstring); ``relevance`` gives the relevance level and, for preferences, the rank cut-off."""
    judgments = table.qrels.judgments
    groups = [np.arange(judgments.group_offsets[q], judgments.group_offsets[q + 1]) for q in queries.tolist()]
    group_of = np.concatenate(groups).astype(np.int64) if groups else np.zeros(0, dtype=np.int64)
    query_of = np.repeat(queries, [len(found) for found in groups])
    if isinstance(judgments, Preferences):
        docs, grades = _preference_grades(table, group_of)
        topk = relevance.topk
    else:
        offsets = judgments.member_offsets
        spans = [slice(int(offsets[g]), int(offsets[g + 1])) for g in group_of.tolist()]
        docs = [judgments.member_doc[span] for span in spans]
        grades = [judgments.member_grade[span] for span in spans]
        topk = None
    segments = _segment_table(table, query_of, docs, grades, topk)
    if relevance.judged_only and not isinstance(judgments, Preferences):
        segments = _judged_only(segments, table, group_of, docs)
    level = None if measure.reads_grades else (measure.relevance_level or relevance.relevance_level)
    selection = Selection.everything(segments).at_relevance_level(segments, level)
    values = measure.compute(binary_positions(segments, selection, sequential=sequential))
    return _mean_per_query(values, np.array([len(found) for found in groups], dtype=np.int64))


def _mean_per_query(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(R, Q): the mean of each query's ``counts[q]`` consecutive columns of ``values`` (R, S), the
    terms added one after the other (as rows of a matrix, which numpy reduces in order)."""
    num_runs = values.shape[0]
    out = np.zeros((num_runs, len(counts)))
    start = 0
    for column, count in enumerate(counts.tolist()):
        if count:
            out[:, column] = np.add.reduce(values[:, start:start + count].T, axis=0) / count
        start += count
    return out


def _segment_table(table: RankTable, query_of: np.ndarray, docs: list[np.ndarray], grades: list[np.ndarray],
                   topk: int | None) -> RankTable:
    """A RankTable whose queries are the groups: group s (of query ``query_of[s]``) holds the
    documents ``docs[s]`` (indexes into ``table``'s documents) with ``grades[s]``."""
    lengths = np.array([len(found) for found in docs], dtype=np.int64)
    columns = np.concatenate(docs).astype(np.int64) if docs else np.zeros(0, dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    source = table.qrels
    qrels = Qrels(source=source.source, qids=[f"{q}/{s}" for s, q in enumerate(query_of.tolist())], dropped_qids=[],
                  offsets=offsets, docids=source.docids[columns],
                  grades=np.concatenate(grades).astype(np.float64) if grades else np.zeros(0),
                  other_offsets=np.zeros(len(lengths) + 1, dtype=np.int64), other_docids=TextColumn.of_texts([]),
                  other_grades=np.zeros(0), top_grade=source.max_grade)
    ranks = table.ranks[:, columns]
    num_retrieved = table.num_retrieved[:, query_of]
    if topk is not None:
        ranks = np.where(ranks > topk, np.inf, ranks)
        num_retrieved = np.minimum(num_retrieved, topk)
    return RankTable(qrels=qrels, run_ids=table.run_ids, ranks=ranks, num_retrieved=num_retrieved,
                     in_run=table.in_run[:, query_of])


def _judged_only(segments: RankTable, table: RankTable, groups: np.ndarray, docs: list[np.ndarray]) -> RankTable:
    """``segments`` with each group's documents ranked among the documents that group judged (grade
    >= 0), as trec_eval's ``-J`` ranks them for judgment groups (``form_res_rels_jg.c``): a relevant
    document's rank is 1 + the number of the group's judged documents the run ranks above it, and a
    run retrieves the group's judged documents it retrieved. Needs the table's other documents."""
    judgments = table.qrels.judgments
    every = np.concatenate((table.ranks, table.other_ranks), axis=1)
    ranks = segments.ranks.copy()
    num_retrieved = np.zeros_like(segments.num_retrieved)
    start = 0
    for column, (group, members) in enumerate(zip(groups.tolist(), docs)):
        judged = every[:, judgments.judged_doc[judgments.judged_offsets[group]:judgments.judged_offsets[group + 1]]]
        judged_ranks = np.sort(judged, axis=1)  # inf (not retrieved) last
        own = ranks[:, start:start + len(members)]
        above = np.stack([np.searchsorted(row, values, side="left") for row, values in zip(judged_ranks, own)]) \
            if len(own) else own
        ranks[:, start:start + len(members)] = np.where(np.isfinite(own), above + 1.0, np.inf)
        num_retrieved[:, column] = np.isfinite(judged).sum(axis=1)
        start += len(members)
    return dataclasses.replace(segments, ranks=ranks, num_retrieved=num_retrieved, tie_start=None, tie_size=None)


def _preference_grades(table: RankTable, groups: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per preference group, its relevant documents and their grades 1 + the number of the group's
    relevant documents each is preferred to; an error when that does not rank them as the group does
    (the group's preferences among them are not a weak order)."""
    preferences: Preferences = table.qrels.judgments
    docs, grades = [], []
    for group in groups.tolist():
        members = slice(int(preferences.member_offsets[group]), int(preferences.member_offsets[group + 1]))
        relevant = preferences.member_doc[members][preferences.member_relevant[members]]
        pairs = slice(int(preferences.pair_offsets[group]), int(preferences.pair_offsets[group + 1]))
        winner, loser = preferences.winner[pairs], preferences.loser[pairs]
        among = np.isin(loser, relevant)  # a relevant document's winners are relevant too
        winner, loser = winner[among], loser[among]
        below = np.bincount(np.searchsorted(relevant, winner), minlength=len(relevant))
        grade = 1.0 + below
        ordered_by_grade = int((grade[:, None] > grade[None, :]).sum())
        if ordered_by_grade != len(winner):
            _not_a_ranking(table, group, relevant, grade, winner, loser)
        docs.append(relevant)
        grades.append(grade)
    return docs, grades


def _not_a_ranking(table: RankTable, group: int, relevant: np.ndarray, grade: np.ndarray, winner: np.ndarray,
                   loser: np.ndarray) -> None:
    """The error for a group whose preferences do not rank its relevant documents with ties: two
    documents it leaves unordered although their grades differ (one is preferred to more documents)."""
    preferences: Preferences = table.qrels.judgments
    stated = set(zip(winner.tolist(), loser.tolist()))
    for a, b in zip(*np.nonzero(grade[:, None] > grade[None, :])):
        if (int(relevant[a]), int(relevant[b])) not in stated:
            names = table.qrels.docids.texts(relevant[[a, b]])
            query = int(np.searchsorted(preferences.group_offsets, group, side="right")) - 1
            raise InputError(table.qrels.source, f"compat needs each judgment group to rank its relevant documents "
                                                 f"with ties: group {preferences.group_names[group]!r} of query "
                                                 f"{table.qrels.qids[query]!r} leaves {names[0]!r} and "
                                                 f"{names[1]!r} unordered, but prefers {names[0]!r} to more "
                                                 "documents")
