"""Judgments per subtopic: the qrels' iter column read as the id of a subtopic (an intent).

TREC's diversity qrels (the Web tracks of 2009 to 2014, the input of ndeval) judge every document
once per subtopic of its query, one line each: ``qid subtopic docid grade``, so that a document
relevant to two subtopics has two lines. The ad hoc qrels write ``0`` or ``Q0`` in that column.

**When a qrels has subtopics.** A query's lines that carry two or more distinct iter values judge
it on several subtopics; a qrels has subtopics when one of its queries does (the iter values are
compared as the bytes of the file: ``0`` and ``Q0`` are two values). Its judgments are then kept per
subtopic (:class:`Subtopics`), beside the ad hoc view that :class:`~prefeval.io.trec.Qrels` has always
held (each document's largest grade over its lines), which the classic measures read. A qrels whose
every query has a single iter value, whatever it is, is an ad hoc qrels: no :class:`Subtopics`.

**Subtopics are numbered** within each query from 0, in the order of their ids: as numbers when every
id of the qrels is written in ASCII digits (``2`` before ``10``, as ndeval's integers), else as bytes.
A subtopic counts for a measure when it has a relevant document (ndeval's "actual subtopics"); those
judged on no relevant document (every grade <= 0) are listed in :attr:`Subtopics.counts` only.

**A document judged twice for one subtopic** of a query keeps its largest grade there, as the ad hoc
view keeps the largest over all its lines. A document judged on two lines of a query, whatever their
iter values, is a :class:`Repeated` judgment: trec_eval stops on it (``duplicate docs``), and so does
prefeval under trec_eval's conventions (:mod:`prefeval.ranking.conventions`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.io.codes import KeyIndex, factorize
from prefeval.io.fields import TextColumn, pair_keys


class Subtopics(NamedTuple):
    """The relevant judgments of each kept query of a :class:`~prefeval.io.trec.Qrels`, per subtopic.

    Judgment j (of J) says that relevant document ``document[j]`` (its number among the qrels'
    relevant documents, :attr:`~prefeval.io.trec.Qrels.docids`) has grade ``grades[j]`` > 0 (after
    ``-b`` and ``-f``) for subtopic ``subtopic[j]`` of its query (numbered as the module docstring
    says). Query q holds judgments ``offsets[q] .. offsets[q + 1] - 1``, in subtopic order, then in
    the order of the documents. ``counts[q]``: how many distinct subtopic ids the lines of query q
    hold, those without a relevant document included (1 for a query of one iter value)."""

    offsets: np.ndarray
    subtopic: np.ndarray
    document: np.ndarray
    grades: np.ndarray
    counts: np.ndarray

    @property
    def num_judgments(self) -> int:
        return len(self.document)

    @property
    def query_of_judgment(self) -> np.ndarray:
        """For each judgment, the index of its query."""
        return np.repeat(np.arange(len(self.counts)), np.diff(self.offsets))

    @property
    def several(self) -> np.ndarray:
        """Per query, whether its lines judge it on several subtopics."""
        return self.counts >= 2


class Repeated(NamedTuple):
    """The first document judged on two lines of a query: its ids, the line that judges it again and
    the line that judged it first (None where the judgments did not come from a file)."""

    qid: str
    docid: str
    line: int | None
    first_line: int | None

    def message(self) -> str:
        """What is wrong, without the file and line (an error names them)."""
        first = f" (first on line {self.first_line})" if self.first_line is not None else ""
        return f"document {self.docid!r} is judged twice for query {self.qid!r}{first}"


def subtopic_judgments(query_codes: np.ndarray, kept: np.ndarray, iters: TextColumn, pair_codes: np.ndarray,
                       grades: np.ndarray, relevant_keys: np.ndarray) -> Subtopics | None:
    """The :class:`Subtopics` of a qrels read as rows, or None when no query has two iter values.

    ``query_codes`` numbers each row's query among all the qrels' queries (in order of first
    appearance), ``kept`` says which of them the qrels keep (they are numbered among the kept in the
    same order); ``iters`` is the iter column, ``pair_codes`` each row's (query, docid) key
    (:func:`~prefeval.io.fields.pair_keys`), ``grades`` the grades after ``-b`` and ``-f``, and
    ``relevant_keys`` the (query, docid) keys of the qrels' relevant documents, in their order."""
    if not len(iters) or bool((iters.keys == iters.keys[0]).all()):
        return None
    codes, first = factorize(pair_keys(query_codes, iters.keys))  # the distinct (query, iter) pairs
    pair_query = query_codes[first]
    counts = np.bincount(pair_query, minlength=len(kept))
    if not (counts[kept] >= 2).any():
        return None
    number = _subtopic_numbers(pair_query, iters.texts(first))
    kept_number = np.cumsum(kept) - 1
    rows = np.flatnonzero((grades > 0) & kept[query_codes])
    query = kept_number[query_codes[rows]]
    subtopic = number[codes[rows]]
    document = KeyIndex(relevant_keys).positions(pair_codes[rows])
    order = np.lexsort((document, subtopic, query))
    query, subtopic, document, best = query[order], subtopic[order], document[order], grades[rows][order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (query[1:] != query[:-1]) | (subtopic[1:] != subtopic[:-1]) | (document[1:] != document[:-1])
    if not new.all():  # a document judged twice for one subtopic: its largest grade
        starts = np.flatnonzero(new)
        best = np.maximum.reduceat(best, starts)
        query, subtopic, document = query[starts], subtopic[starts], document[starts]
    offsets = np.zeros(int(kept.sum()) + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=len(offsets) - 1), out=offsets[1:])
    return Subtopics(offsets=offsets, subtopic=subtopic.astype(np.int64), document=document.astype(np.int64),
                     grades=best.astype(np.float64), counts=counts[kept].astype(np.int64))


def _subtopic_numbers(pair_query: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The number of each distinct (query, subtopic id) pair within its query: the rank of its id
    among the query's, as integers when every id is written in ASCII digits, else as bytes."""
    texts = ids.tolist()
    if all(text.isascii() and text.isdigit() for text in texts):
        values = np.array([int(text) for text in texts], dtype=object)
        order = sorted(range(len(texts)), key=lambda i: (int(pair_query[i]), values[i]))
    else:
        encoded = [text.encode("utf-8", "surrogateescape") for text in texts]
        order = sorted(range(len(texts)), key=lambda i: (int(pair_query[i]), encoded[i]))
    order = np.array(order, dtype=np.int64)
    sorted_query = pair_query[order]
    starts = np.searchsorted(sorted_query, sorted_query)
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order)) - starts
    return number
