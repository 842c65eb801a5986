"""Collections judged by preferences or by judgment groups, built in memory for the tests: the
judgments' lines and the runs' lines as lists, and hypothesis strategies drawing small random ones
(equivalence classes, several sub-groups closed transitively, groups that disagree, ties in scores,
queries missing from a run, documents nobody judged)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from prefeval.io.fields import TextColumn
from prefeval.io.judgment_groups import judgment_groups_qrels
from prefeval.io.prefs import PreferenceLines, preferences_qrels
from prefeval.io.trec import RunColumns
from prefeval.measures.judgments import JudgedRuns
from prefeval.ranking.options import RelevanceOptions
from prefeval.ranking.ranktable import RankTable, RelevantLookup, rank_relevant

Run = list[tuple[str, str, float]]
"""A run's lines: (qid, docid, score)."""


def preference_qrels(lines: list[tuple[str, str, str, str, float]]):
    """The qrels of prefs lines (qid, jg, jsg, docid, value)."""
    qids, groups, subgroups, docids, values = zip(*lines)
    return preferences_qrels(PreferenceLines(
        source="<prefs>", qids=TextColumn.of_texts(qids), groups=TextColumn.of_texts(groups),
        subgroups=TextColumn.of_texts(subgroups), docids=TextColumn.of_texts(docids),
        values=np.array(values, dtype=np.float64), line_of=lambda row: row + 1))


def group_qrels(lines: list[tuple[str, str, str, float]], keep_empty: bool = True):
    """The qrels of qrels_jg lines (qid, jg, docid, grade)."""
    qids, groups, docids, grades = zip(*lines)
    return judgment_groups_qrels("<qrels_jg>", TextColumn.of_texts(qids), TextColumn.of_texts(groups),
                                 TextColumn.of_texts(docids), np.array(grades, dtype=np.float64),
                                 keep_empty=keep_empty)


def ranked(qrels, runs: list[Run], topk: int | None = None) -> RankTable:
    """``runs`` ranked against ``qrels`` (a run may be empty: it lacks every query)."""
    lookup = RelevantLookup(qrels)
    rows = []
    for number, run in enumerate(runs):
        qids, docids, scores = zip(*run) if run else ((), (), ())
        columns = RunColumns(source=f"<run{number}>", run_id=f"run{number}", qids=TextColumn.of_texts(qids),
                             docids=TextColumn.of_texts(docids), scores=np.array(scores, dtype=np.float64))
        rows.append(rank_relevant(columns, lookup, topk))
    return RankTable.from_ranked(qrels, rows)


def judged(table: RankTable, topk: int | None = None, level: float | None = None) -> JudgedRuns:
    """The runs of ``table`` against its judgments, every query, cut at ``topk``."""
    return JudgedRuns(table, np.arange(table.num_queries), RelevanceOptions(relevance_level=level, topk=topk), False)


@st.composite
def runs_over(draw, documents: dict[str, list[str]], num_runs: int = 3) -> list[Run]:
    """``num_runs`` runs over the queries of ``documents`` (qid -> its judged docids): each retrieves a
    random subset of a query's documents and of two unjudged ones, scores drawn from a few values (so
    that some tie), and lacks a query now and then."""
    runs = []
    for _ in range(num_runs):
        run: Run = []
        for qid, docs in documents.items():
            if draw(st.integers(0, 5)) == 0:
                continue
            pool = docs + [f"{qid}-u1", f"{qid}-u2"]
            chosen = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
            run += [(qid, doc, float(draw(st.integers(0, 3)))) for doc in chosen]
        if not run:  # a run file holds a line at least
            qid = next(iter(documents))
            run.append((qid, f"{qid}-u1", 1.0))
        runs.append(run)
    return runs


@st.composite
def preference_lines(draw) -> list[tuple[str, str, str, str, float]]:
    """prefs lines: 1 to 3 queries of 2 to 6 documents, 1 to 3 groups each, a group of 1 to 3
    sub-groups, each a random subset of the documents valued by the group's own hidden values 0 to 3
    (so that a group is consistent, and groups disagree)."""
    lines = []
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{q}{d}" for d in range(draw(st.integers(2, 6)))]
        for g in range(draw(st.integers(1, 3))):
            values = {doc: float(draw(st.integers(0, 3))) for doc in docs}
            for s in range(draw(st.integers(1, 3))):
                subset = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=len(docs)))
                lines += [(f"q{q}", f"g{g}", f"s{s}", doc, values[doc]) for doc in subset]
    return lines


@st.composite
def preference_collections(draw, num_runs: int = 3) -> RankTable:
    """A random collection judged by preferences (:func:`preference_lines`), ranked without a cut-off."""
    lines = draw(preference_lines())
    documents: dict[str, list[str]] = {}
    for qid, _, _, doc, _ in lines:
        documents.setdefault(qid, [])
        if doc not in documents[qid]:
            documents[qid].append(doc)
    return ranked(preference_qrels(lines), draw(runs_over(documents, num_runs)))


@st.composite
def group_collections(draw, num_runs: int = 3) -> RankTable:
    """A random collection judged by 1 to 3 groups per query (grades -1 to 3, each document judged by
    some of the groups)."""
    lines = []
    documents: dict[str, list[str]] = {}
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{q}{d}" for d in range(draw(st.integers(1, 6)))]
        documents[f"q{q}"] = docs
        for g in range(draw(st.integers(1, 3))):
            subset = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=len(docs)))
            lines += [(f"q{q}", f"g{g}", doc, float(draw(st.integers(-1, 3)))) for doc in subset]
    return ranked(group_qrels(lines), draw(runs_over(documents, num_runs)))
