"""Measure names of other tools: one table per tool, read and written through one dispatcher.

* :mod:`~prefeval.measures.foreign.trec_eval`: trec_eval 10.0's measures, in its order, with their
  default lists, nicknames and which lines print them;
* :mod:`~prefeval.measures.foreign.ir_measures`: ir_measures 0.4.3's names and parameters;
* :mod:`~prefeval.measures.foreign.ndeval`: ndeval 4.5's names (its intent-aware measures) and its columns.

prefeval's ``-m`` reads a name the same way in every output format (:mod:`prefeval.measures.request`):
prefeval's own name first (case-insensitively), then the tools' names through :func:`read`; each
format prints a measure under its tool's name (:func:`spell`; the trec_eval layout and ``tsv`` use
trec_eval's names, ``ir_measures`` ir_measures'). A tool added to prefeval gets a module here with a
table, ``read`` and ``spell``, and its line in :data:`TOOLS`.
"""

from __future__ import annotations

from types import ModuleType

from prefeval.measures.foreign import ir_measures, ndeval, trec_eval
from prefeval.measures.foreign.rows import CUTOFF, Translation

TOOLS: dict[str, ModuleType] = {trec_eval.TOOL: trec_eval, ir_measures.TOOL: ir_measures, ndeval.TOOL: ndeval}
"""Every foreign tool, by name: its module has ``ROWS`` (each with ``family``, ``shown()`` and
``example()``), ``read(text)`` and ``spell(measure)``."""

__all__ = ["CUTOFF", "TOOLS", "Translation", "names_of", "read", "spell", "tool_names"]


def read(text: str) -> tuple[str, list[Translation]] | None:
    """The tool whose name ``text`` is, and the prefeval measures it stands for, in order (several for
    a trec_eval list or nickname; a trec_eval line that is not a measure has family None); None if
    ``text`` is neither tool's name. A name written in ir_measures' own syntax (parentheses, ``@``,
    or an exact spelling that :func:`~prefeval.measures.foreign.ir_measures.takes_precedence`) is
    ir_measures'; otherwise trec_eval's name is tried first (``map`` is trec_eval's, and ir_measures'
    ``MAP`` the same measure), then ir_measures' plain one, then ndeval's (``alpha-nDCG@20``)."""
    text = text.strip()
    row = ir_measures.row_of(text)
    if row is not None and (ir_measures.is_explicit(text) or ir_measures.takes_precedence(text)):
        return ir_measures.TOOL, [ir_measures.read(text)]
    translations = trec_eval.read(text)
    if translations is not None:
        return trec_eval.TOOL, translations
    if row is not None:
        return ir_measures.TOOL, [ir_measures.read(text)]
    found = ndeval.read(text)
    if found is not None:
        return ndeval.TOOL, [found]
    return None


def spell(measure, tool: str) -> str | None:
    """``tool``'s name of a prefeval measure (a :class:`~prefeval.measures.base.Measure`), None when
    the tool has none."""
    return TOOLS[tool].spell(measure)


def names_of(family: str) -> dict[str, list[str]]:
    """The names the tools give a prefeval family, by tool: ``{"trec_eval": ["map", "map_cut[.k,...]"], ...}``."""
    return {tool: [row.shown() for row in module.ROWS if row.family == family] for tool, module in TOOLS.items()}


def tool_names() -> list[str]:
    """Every name of every tool, nicknames included (what a mistyped name is compared with)."""
    return [row.name for module in TOOLS.values() for row in module.ROWS] + list(trec_eval.NICKNAMES)
