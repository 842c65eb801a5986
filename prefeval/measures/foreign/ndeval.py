"""ndeval 4.5's measures (the TREC Web track's evaluator of novelty and diversity): one table
(:data:`ROWS`), read (:func:`read`) and written (:func:`spell`), and what ``prefeval ndeval`` needs of
the tool: its columns in order (:data:`COLUMNS`), its defaults and its version.

ndeval prints 21 columns, each the mean over topics of an intent-aware measure
(:mod:`prefeval.measures.diversity`): ``ERR-IA@k``, ``nERR-IA@k``, ``alpha-DCG@k`` and
``alpha-nDCG@k`` at k = 5, 10 and 20, ``NRBP``, ``nNRBP``, ``MAP-IA``, ``P-IA@k`` and ``strec@k``.
Its names carry no α or β: the command line sets them for every column (``-alpha``, ``-beta``,
default 0.5), so that a name reads as the measure at ndeval's defaults, and a measure is written
with ndeval's name only there (and at a cut-off of its columns: ndeval computes no other). The
names are read as written (``alpha-nDCG@20``), then case-insensitively; a cut-off may be any
positive integer (pyndeval's names, ``P-IA@3``), though ndeval prints only 5, 10 and 20, and a name
without one is at 20 (``alpha-nDCG`` is ``alpha-nDCG@20``).
"""

from __future__ import annotations

import re
from typing import NamedTuple, Protocol

from prefeval.measures.foreign.rows import CUTOFF, Translation

TOOL = "ndeval"
VERSION = "version 4.5 (Mon 29 Apr 2013 20:51:02 EDT)"
"""The ndeval whose command line and output ``prefeval ndeval`` is (its ``-version``)."""
ALPHA = BETA = 0.5
"""ndeval's defaults of ``-alpha`` and ``-beta``."""
DEPTH = 20
"""ndeval's deepest cut-off (its ``DEPTH``): the measures at k are computed up to it."""
CUTOFFS = (5, 10, 20)
"""The cut-offs of ndeval's columns."""


class Row(NamedTuple):
    """One of ndeval's names: the prefeval family it is, and whether it takes ``@k``."""

    name: str
    family: str
    cutoff: str | None = None

    def shown(self) -> str:
        return self.name + (f"@{self.cutoff}" if self.cutoff else "")

    def example(self) -> str:
        return self.name + ("@10" if self.cutoff else "")


ROWS: tuple[Row, ...] = (
    Row("ERR-IA", "err_ia", CUTOFF),
    Row("nERR-IA", "nerr_ia", CUTOFF),
    Row("alpha-DCG", "alpha_dcg", CUTOFF),
    Row("alpha-nDCG", "alpha_ndcg", CUTOFF),
    Row("NRBP", "nrbp"),
    Row("nNRBP", "nnrbp"),
    Row("MAP-IA", "ap_ia"),
    Row("P-IA", "p_ia", CUTOFF),
    Row("strec", "strec", CUTOFF),
)
"""ndeval's names, in the order of its columns."""

COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (f"{row.name}@{k}", row.family) if row.cutoff else (row.name, row.family)
    for row in ROWS for k in (CUTOFFS if row.cutoff else (None,)))
"""ndeval's 21 columns, in its order: (the column's name, the prefeval family)."""

BY_NAME = {row.name: row for row in ROWS}
BY_LOWER = {row.name.lower(): row for row in ROWS}
_NAME = re.compile(r"^(?P<name>[A-Za-z][A-Za-z-]*)(?:@(?P<cutoff>[0-9]+))?$")


def row_of(text: str) -> Row | None:
    """The row of an ndeval name (with or without its cut-off), None if it is none."""
    match = _NAME.match(text.strip())
    if match is None:
        return None
    return BY_NAME.get(match.group("name")) or BY_LOWER.get(match.group("name").lower())


def read(text: str) -> Translation | None:
    """The prefeval measure an ndeval name stands for (at ndeval's α and β; a name of a measure at k
    without its cut-off is at ndeval's deepest, 20); None if ``text`` is not one (a cut-off on a name
    that takes none, or of 0, is not)."""
    text = text.strip()
    row = row_of(text)
    if row is None:
        return None
    cutoff = _NAME.match(text).group("cutoff")
    if (cutoff is not None and row.cutoff is None) or (cutoff is not None and int(cutoff) < 1):
        return None
    return Translation(row.family, {CUTOFF: str(int(cutoff))} if cutoff is not None else {}, row=row.name)


class _Parametrised(Protocol):
    family: str
    values: tuple

    def all_parameters(self) -> tuple: ...


def spell(measure: _Parametrised) -> str | None:
    """ndeval's column name of a prefeval measure: one of its families at ndeval's α and β, at a
    cut-off of its columns (5, 10, 20), at every positive grade and not on judged documents only;
    None otherwise."""
    row = next((row for row in ROWS if row.family == measure.family), None)
    if row is None:
        return None
    values = dict(zip((param.name for param in measure.all_parameters()), measure.values))
    if values.get("alpha", ALPHA) != ALPHA or values.get("beta", BETA) != BETA:
        return None
    if values.get("rel") is not None or values.get("judged_only"):
        return None
    if row.cutoff is None:
        return row.name
    return f"{row.name}@{values[CUTOFF]}" if values[CUTOFF] in CUTOFFS else None


def column_measures(alpha: float = ALPHA, beta: float = BETA) -> list[str]:
    """The prefeval names of ndeval's 21 columns at α and β, in its order."""
    names = []
    for column, family in COLUMNS:
        cutoff = column.partition("@")[2]
        if family in ("nrbp", "nnrbp"):
            names.append(family + (f"@{alpha!r},{beta!r}" if (alpha, beta) != (ALPHA, BETA) else ""))
        elif family in ("ap_ia", "p_ia", "strec"):
            names.append(f"{family}@{cutoff}" if cutoff else family)
        else:
            names.append(f"{family}@{cutoff}" + (f",{alpha!r}" if alpha != ALPHA else ""))
    return names
