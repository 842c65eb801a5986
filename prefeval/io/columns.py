"""Which column of a table holds what: the names that qrels and runs given as tables (Parquet and
Arrow files, pandas DataFrames, pyarrow Tables) use for their query ids, document ids, grades and
scores, in one table (:data:`ALIASES`), and the names a user gives instead.

A **role** is what a column holds: ``qid`` and ``docid`` (both kinds), ``grade`` and ``iter`` (qrels;
the iter column, the subtopic of a diversity qrels, is optional: :mod:`prefeval.io.subtopics`),
``score`` and ``tag`` (runs; the tag, trec_eval's run id, is optional). A table's column for a role is the
column named for it (``--qrels-columns``/``--run-columns``, ``qrels_columns=``/``run_columns=``), or
else the first name of the role's aliases that the table has: the names of TREC tools (``qid``,
``docno``, ``rel``), ir_measures (``query_id``, ``doc_id``, ``relevance``), ranx (``q_id``, its qrels'
``score``), PyTerrier (``qid``, ``docno``, ``label``; its ``docid`` is Terrier's internal number,
which ``docno`` precedes) and recommender toolkits (LensKit's ``user``, ``item``, ``rating``,
``score``; RecBole's ``user_id``, ``item_id``, ``label``; Microsoft Recommenders' ``userID``,
``itemID``, ``rating``, ``prediction``; MovieLens' ``userId``), and for the iter column ir_measures'
``iteration`` (``iter``, ``subtopic_id`` too). Names are matched exactly (case included). Every other
column (``rank``, ``timestamp``, PyTerrier's ``query`` text) is ignored, as a run file's rank field is.

Naming columns, as a user writes it: ``qid=user,docid=item,grade=rating`` (:func:`parse_columns`;
in the API a dict or that text). A named role need not be all of them: the others are found by
their aliases. The names travel with their input (:class:`TablePath`, :class:`NamedTable`), so that
every reader (whole, streamed, a worker reading its part) reads the same columns.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from prefeval.errors import InputError, UsageError

QRELS, RUN = "qrels", "run"
ROLES: dict[str, tuple[str, ...]] = {QRELS: ("qid", "docid", "grade", "iter"), RUN: ("qid", "docid", "score", "tag")}
"""The roles of each kind of input, in order."""
OPTIONAL_ROLES = frozenset({"tag", "iter"})
"""Roles a table may lack (a run without a tag has none, as a run file of five fields; qrels without
an iter column are ad hoc qrels)."""
ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ("qid", "query_id", "q_id", "user_id", "user", "userID", "userId"),
    "docid": ("docno", "doc_id", "docid", "item_id", "item", "itemID", "itemId"),
    "grade": ("rel", "relevance", "label", "grade", "rating", "score"),
    "score": ("score", "prediction"),
    "tag": ("tag",),
    "iter": ("iteration", "iter", "subtopic_id"),
}
"""The column names of each role, in the order they are looked for (module docstring). ``score`` is
a grade last, as ranx names its qrels' column."""
WHAT = {"qid": "query id", "docid": "document id", "grade": "grade", "score": "score", "tag": "run tag",
        "iter": "subtopic"}
"""How a message names what a role's column holds."""
OPTION = {QRELS: "--qrels-columns", RUN: "--run-columns"}
KEYWORD = {QRELS: "qrels_columns", RUN: "run_columns"}


def parse_columns(spec: str | Mapping[str, str] | None, kind: str) -> dict[str, str]:
    """The columns named for the roles of ``kind`` (``qrels`` or ``run``), from ``role=column,...``
    or a dict ``{role: column}``; ``{}`` for None. A role that ``kind`` lacks, a role or a column
    named twice, or an empty name is a :class:`UsageError` naming the option."""
    if spec is None:
        return {}
    where = f"{OPTION[kind]} ({KEYWORD[kind]}=)"
    if isinstance(spec, str):
        pairs = []
        for item in spec.split(","):
            role, equals, column = item.partition("=")
            if not equals:
                raise UsageError(f"{where}: {item.strip()!r} is not ROLE=COLUMN (e.g. "
                                 f"{'qid=user,docid=item,' + ROLES[kind][2] + '=rating'})")
            pairs.append((role.strip(), column.strip()))
    elif isinstance(spec, Mapping):
        pairs = list(spec.items())
    else:
        raise UsageError(f"{where}: expected 'role=column,...' or a dict, not a value of type {type(spec).__name__}")
    named: dict[str, str] = {}
    for role, column in pairs:
        if role not in ROLES[kind]:
            raise UsageError(f"{where}: unknown role {role!r}; the roles of a {kind} are {', '.join(ROLES[kind])}")
        if not isinstance(column, str) or not column:
            raise UsageError(f"{where}: the column of {role!r} must be a non-empty name")
        if role in named:
            raise UsageError(f"{where}: {role!r} is named twice")
        if column in named.values():
            raise UsageError(f"{where}: column {column!r} is named for two roles")
        named[role] = column
    return named


def resolve_columns(available: Iterable, kind: str, named: Mapping[str, str], source: str) -> dict[str, str]:
    """The column of each role of ``kind`` in a table whose columns are ``available``: the one
    ``named`` for it, else its first alias present (:data:`ALIASES`); an optional role may have
    none. A named column the table lacks, or a required role without a column, is an
    :class:`InputError` naming ``source`` and listing the table's columns."""
    columns = [name for name in available if isinstance(name, str)]
    present = set(columns)
    listed = ", ".join(map(repr, columns)) or "none"
    found: dict[str, str] = {}
    for role in ROLES[kind]:
        if role in named:
            if named[role] not in present:
                raise InputError(source, f"no column {named[role]!r}, named for the {WHAT[role]}s "
                                         f"({OPTION[kind]}); its columns: {listed}")
            found[role] = named[role]
            continue
        column = next((alias for alias in ALIASES[role] if alias in present and alias not in named.values()), None)
        if column is not None:
            found[role] = column
        elif role not in OPTIONAL_ROLES:
            raise InputError(source, f"no {WHAT[role]} column ({' or '.join(map(repr, ALIASES[role]))}); its "
                                     f"columns: {listed}. Name it with {OPTION[kind]} {role}=COLUMN "
                                     f"({KEYWORD[kind]}= in the Python API)")
    return found


class TablePath(NamedTuple):
    """A path (a columnar file, or a directory of them) with columns named for some roles
    (:func:`parse_columns`): a path wherever one is taken (``os.fspath``), its names read by the
    columnar reader, and ignored by none (:func:`~prefeval.io.inputs.with_columns` refuses names for
    an input that is text)."""

    path: str
    columns: Mapping[str, str]

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path


class NamedTable(NamedTuple):
    """A table given in memory (a pandas DataFrame, a pyarrow Table) with columns named for some
    roles (:func:`parse_columns`)."""

    table: object
    columns: Mapping[str, str]


def named_columns(value) -> Mapping[str, str]:
    """The columns named with an input (:class:`TablePath`, :class:`NamedTable`); ``{}`` for any other."""
    return value.columns if isinstance(value, (TablePath, NamedTable)) else {}


def plain_path(value):
    """The path of a :class:`TablePath` as a string; any other value as it is."""
    return os.fspath(value) if isinstance(value, TablePath) else value
