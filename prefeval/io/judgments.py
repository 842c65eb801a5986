"""The kinds of relevance judgments prefeval reads (``eval --rel-format``, trec_eval's ``-R``): one
registry, :data:`KINDS`, one reader per kind.

=============== ========================= ==========================================================
kind            a line                    what it holds
=============== ========================= ==========================================================
``qrels``       ``qid iter docid grade``  a grade per document (:mod:`prefeval.io.trec`): every
                                          measure but those of the kinds below
``prefs``       ``qid jg jsg docid value`` preference judgments, trec_eval's ``prefs``
                                          (:mod:`prefeval.io.prefs`)
``qrels_prefs`` ``qid jg docid value``    a qrels read as preferences, trec_eval's ``qrels_prefs``
``pairs``       ``qid docA docB winner``  pairwise preferences, as preference-judging studies
                                          publish them (TREC CAsT 2019's), read as trec_eval's
                                          documented conversion into ``prefs``
``qrels_jg``    ``qid jg docid grade``    a grade per document from each of several judgment
                                          groups, trec_eval's ``qrels_jg``
                                          (:mod:`prefeval.io.judgment_groups`)
=============== ========================= ==========================================================

Every reader gives :class:`~prefeval.io.trec.Qrels`: for ``qrels`` the judgments themselves; for
the other kinds the documents the runs are ranked against, with the judgments in
:attr:`~prefeval.io.trec.Qrels.judgments`. What each kind holds (:attr:`JudgmentKind.holds`:
grades, preferences or judgment groups) decides which measures read it
(:mod:`prefeval.measures.judgments`). A new kind is one reader and its line here.

A kind other than ``qrels`` is read from a file (or ``-``); the Python API passes such a path as a
:class:`JudgmentsPath`, which the reader of qrels (:func:`prefeval.io.inputs.load_qrels`) hands to
:func:`read_judgments`.
"""

from __future__ import annotations

import importlib
import os
from typing import NamedTuple

from prefeval.errors import UsageError

GRADES, PREFERENCES, GROUPS = "grades", "preferences", "judgment groups"
"""What the judgments of a kind hold."""

QRELS, PREFS, QRELS_PREFS, PAIRS, QRELS_JG = "qrels", "prefs", "qrels_prefs", "pairs", "qrels_jg"


class JudgmentKind(NamedTuple):
    """One kind of judgments: its name (``--rel-format``; trec_eval's ``-R`` name where trec_eval has
    it), the fields of a line, what it holds, its reader (``module:function``, imported when used:
    ``function(path, binary_relevance, relevance_floor, keep_empty) -> Qrels``), the foreign tools
    whose measures read it (whose output layout can show its measures), and a line of help."""

    name: str
    layout: str
    holds: str
    reader: str
    tools: tuple[str, ...]
    help: str


KINDS: dict[str, JudgmentKind] = {kind.name: kind for kind in (
    JudgmentKind(QRELS, "qid iter docid grade", GRADES, "prefeval.io.trec:read_qrels", ("trec_eval", "ir_measures"),
                 "TREC qrels, a grade per document"),
    JudgmentKind(PREFS, "qid jg jsg docid value", PREFERENCES, "prefeval.io.prefs:read_prefs", ("trec_eval",),
                 "trec_eval's preference judgments: within a judgment group (jg) and sub-group (jsg), a "
                 "document of a larger value is preferred"),
    JudgmentKind(QRELS_PREFS, "qid jg docid value", PREFERENCES, "prefeval.io.prefs:read_qrels_prefs", ("trec_eval",),
                 "a qrels read as preferences (trec_eval's qrels_prefs): the iter field is the judgment group"),
    JudgmentKind(PAIRS, "qid docA docB winner", PREFERENCES, "prefeval.io.prefs:read_pairs", ("trec_eval",),
                 "pairwise preferences (winner: docA or docB), each line a judgment group of its own"),
    JudgmentKind(QRELS_JG, "qid jg docid grade", GROUPS, "prefeval.io.judgment_groups:read_qrels_jg", ("trec_eval",),
                 "trec_eval's qrels_jg: the grades of several judgment groups (assessors)"),
)}
"""Every kind of judgments, by name (module docstring)."""


def kind(name: str) -> JudgmentKind:
    """The kind ``name``, or a :class:`UsageError` listing them."""
    if name not in KINDS:
        raise UsageError(f"unknown judgment format {name!r}; choose one of {', '.join(KINDS)}")
    return KINDS[name]


def kinds_help() -> str:
    """What ``--rel-format`` says of each kind."""
    return "; ".join(f"{found.name} ({found.layout}): {found.help}" for found in KINDS.values())


def judgments_obstacle(name: str) -> str | None:
    """Why judgments of kind ``name`` cannot be streamed (:func:`prefeval.engine.streaming_obstacle`
    gives the other reasons): every kind but ``qrels`` is read in memory. None for ``qrels``."""
    if kind(name).name == QRELS:
        return None
    return f"--rel-format {name} is read in memory (the streamed readers read qrels)"


class JudgmentsPath(NamedTuple):
    """A file of judgments of another kind than ``qrels`` (a path, or ``-`` for standard input): how
    the kind travels with the path to :func:`prefeval.io.inputs.load_qrels`. It is a path-like
    object (``os.fspath`` gives the path)."""

    path: str
    kind: str

    def __fspath__(self) -> str:
        return self.path


def read_judgments(judgments: JudgmentsPath, binary_relevance: float | None = None,
                   relevance_floor: float | None = None, keep_empty: bool = False):
    """The :class:`~prefeval.io.trec.Qrels` of a file of judgments of the kind it names, read by the
    kind's reader (``binary_relevance`` and ``relevance_floor`` as ``-b`` and ``-f``; ``keep_empty``
    keeps the queries without a relevant document)."""
    module, function = kind(judgments.kind).reader.split(":")
    read = getattr(importlib.import_module(module), function)
    return read(os.fspath(judgments.path), binary_relevance, relevance_floor, keep_empty)
