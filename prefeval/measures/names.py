"""Measure names of trec_eval and ir_measures: one table, :data:`FOREIGN_NAMES`, read both ways.

prefeval spells a measure ``family[@param[,param]]`` (``ap@10``, ``rbp@0.8,100``), case-insensitively,
so ir_measures' plain names already are prefeval names (``AP@100``, ``nDCG@10``, ``P@10``, ``R@100``,
``RR@10``, ``Rprec``). The table adds the two other spellings people type, and :func:`translate` reads
them:

* trec_eval: ``map``, ``recip_rank``, ``Rprec``, ``set_P`` (``p@0``, the precision of the whole list),
  ``set_recall`` (``r@0``), and a name with a cut-off after ``.`` or ``_`` (``map_cut.10``,
  ``map_cut_10``, ``P.10``, ``P_10``, ``ndcg_cut.10``, ``recall.100``, ``success.10``). A list such as
  ``P.5,10`` is split by :func:`~prefeval.measures.base.parse_measures` into ``P.5`` and ``10``, the
  number continuing the measure before it.
* ir_measures with parameters: ``Name(param=value, ...)`` with an optional ``@cutoff``
  (``RBP(p=0.8)``, ``RBP(p=0.8)@10``). Parameters take ir_measures' defaults where they differ from
  prefeval's: ``RBP()`` has p = 0.8 (prefeval's ``rbp`` has γ = 0.5).

The same table writes a prefeval measure under its trec_eval name (:func:`trec_eval_spelling`), as
trec_eval prints it on a per-measure line, its cut-off after ``_``: ``map``, ``map_cut_10``, ``ndcg``,
``ndcg_cut_10``, ``P_10``, ``set_P``, ``recall_10``, ``set_recall``, ``recip_rank``, ``Rprec``,
``success_1``. Every name written reads back as the same measure.

Deliberately refused, with a message saying what to write instead: a trec_eval cut-off family without
a cut-off (``map_cut``: trec_eval would expand it to nine default cut-offs), a cut-off on a trec_eval
measure that has none (``recip_rank.10``), and ir_measures' per-measure relevance level ``rel=`` (use
``--relevance-level``, which applies to every binary measure). Bare ``P`` and ``recall`` are
prefeval's ``p`` and ``r`` (cut-off 10 by default), not trec_eval's lists of cut-offs.
"""


from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from prefeval.errors import UsageError

TREC_EVAL = "trec_eval"
IR_MEASURES = "ir_measures"
CUTOFF_PARAMETER = "k"
"""The prefeval parameter that a trec_eval ``.k`` or an ir_measures ``@k`` cut-off sets."""


@dataclass(frozen=True)
class ForeignName:
    """A measure as another tool names it, and the prefeval measure it is.

    ``cutoff``: the name takes a rank cut-off, prefeval's parameter ``k`` (for trec_eval, requires
    one). ``parameters`` maps the tool's parameter names to prefeval's. ``values`` holds the parameter
    values (by prefeval name, as text) that the name stands for where they differ from prefeval's
    defaults: what a trec_eval name fixes (``set_P`` is ``p@0``) or ir_measures' own defaults
    (``RBP()`` has p = 0.8); parameters written in the name override them.
    """

    tool: str
    name: str
    family: str
    cutoff: bool
    parameters: dict[str, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)

    def shown(self) -> str:
        """How the name is written, with placeholders: ``map_cut.k``, ``AP[@k]``, ``RBP(p=gamma)[@k]``."""
        if self.tool == TREC_EVAL:
            return f"{self.name}.k" if self.cutoff else self.name
        params = ",".join(f"{theirs}={ours}" for theirs, ours in self.parameters.items())
        return self.name + (f"({params})" if params else "") + ("[@k]" if self.cutoff else "")


FOREIGN_NAMES: tuple[ForeignName, ...] = (
    ForeignName(TREC_EVAL, "map", "ap", cutoff=False),
    ForeignName(TREC_EVAL, "map_cut", "ap", cutoff=True),
    ForeignName(TREC_EVAL, "ndcg", "ndcg", cutoff=False),
    ForeignName(TREC_EVAL, "ndcg_cut", "ndcg", cutoff=True),
    ForeignName(TREC_EVAL, "P", "p", cutoff=True),
    ForeignName(TREC_EVAL, "set_P", "p", cutoff=False, values={CUTOFF_PARAMETER: "0"}),
    ForeignName(TREC_EVAL, "recall", "r", cutoff=True),
    ForeignName(TREC_EVAL, "set_recall", "r", cutoff=False, values={CUTOFF_PARAMETER: "0"}),
    ForeignName(TREC_EVAL, "recip_rank", "rr", cutoff=False),
    ForeignName(TREC_EVAL, "Rprec", "rp", cutoff=False),
    ForeignName(TREC_EVAL, "success", "success", cutoff=True),
    ForeignName(IR_MEASURES, "AP", "ap", cutoff=True),
    ForeignName(IR_MEASURES, "nDCG", "ndcg", cutoff=True),
    ForeignName(IR_MEASURES, "P", "p", cutoff=True),
    ForeignName(IR_MEASURES, "R", "r", cutoff=True),
    ForeignName(IR_MEASURES, "RR", "rr", cutoff=True),
    ForeignName(IR_MEASURES, "Rprec", "rp", cutoff=False),
    ForeignName(IR_MEASURES, "Success", "success", cutoff=True),
    ForeignName(IR_MEASURES, "RBP", "rbp", cutoff=True, parameters={"p": "gamma"}, values={"gamma": "0.8"}),
)
"""Every foreign name: read by :func:`translate`, written by :func:`trec_eval_spelling` (the first
trec_eval entry that fits a measure), and listed by ``prefeval measures`` beside each family."""

_BY_TOOL = {
    tool: {entry.name.lower(): entry for entry in FOREIGN_NAMES if entry.tool == tool}
    for tool in (TREC_EVAL, IR_MEASURES)
}
_TREC_EVAL_BY_FAMILY = {
    family: [entry for entry in FOREIGN_NAMES if entry.tool == TREC_EVAL and entry.family == family]
    for family in dict.fromkeys(entry.family for entry in FOREIGN_NAMES)
}
_TREC_EVAL_NAME = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_]*?)(?:[._](?P<cutoff>\d+))?$")
_IR_MEASURES_NAME = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_]*)\((?P<args>[^()]*)\)(?:@(?P<cutoff>\d+))?$")
_ARGUMENT = re.compile(r"""^\s*(?P<key>[A-Za-z_]+)\s*=\s*(?P<quote>['"]?)(?P<value>[^'"]*)(?P=quote)\s*$""")


@dataclass(frozen=True)
class Translation:
    """A prefeval family and the texts of the parameters a foreign name sets, by prefeval name."""

    family: str
    values: dict[str, str]


def translate(text: str) -> Translation | None:
    """The prefeval measure that a trec_eval or ir_measures name stands for; None if ``text`` is
    neither. A known name used in a way prefeval refuses is a :class:`UsageError` saying why."""
    text = text.strip()
    match = _IR_MEASURES_NAME.match(text)
    if match and match.group("name").lower() in _BY_TOOL[IR_MEASURES]:
        return _translate_ir_measures(text, _BY_TOOL[IR_MEASURES][match.group("name").lower()], match)
    match = _TREC_EVAL_NAME.match(text)
    if match and match.group("name").lower() in _BY_TOOL[TREC_EVAL]:
        return _translate_trec_eval(text, _BY_TOOL[TREC_EVAL][match.group("name").lower()], match.group("cutoff"))
    return None


class _Parametrised(Protocol):
    """What :func:`trec_eval_spelling` reads of a measure (a :class:`~prefeval.measures.base.Measure`)."""

    family: str
    parameters: tuple
    values: tuple


def trec_eval_spelling(measure: _Parametrised) -> str | None:
    """trec_eval's name of a prefeval measure, as trec_eval prints it on a per-measure line; None when
    trec_eval has none (preferences, ``rbp``, ``rr@10``, ``success@0``).

    The name is that of the first trec_eval entry of :data:`FOREIGN_NAMES` that fits the measure: an
    entry with a cut-off fits a measure whose ``k`` is > 0 and whose other parameters are the entry's
    (``ap@10`` → ``map_cut_10``, ``p@10`` → ``P_10``, ``success@1`` → ``success_1``); an entry without
    one fits a measure whose parameters are all the entry's (``ap`` and ``ap@0`` → ``map``, ``p@0`` →
    ``set_P``, ``rr`` → ``recip_rank``). :func:`translate` reads the name back as the same values.
    """
    numeric = [param for param in measure.parameters if not param.keyword and param.parser is None]
    values = dict(zip((param.name for param in measure.parameters), measure.values))
    if any(values.get(param.name) is not None for param in measure.parameters if param.keyword):
        return None  # a keyword parameter (gains=, rel=) that trec_eval's name does not say
    values = {param.name: values[param.name] for param in numeric}
    for entry in _TREC_EVAL_BY_FAMILY.get(measure.family, ()):
        implied = {param.name: param.type(entry.values.get(param.name, param.default)) for param in numeric}
        if entry.cutoff:
            if values.get(CUTOFF_PARAMETER, 0) <= 0:
                continue
            implied[CUTOFF_PARAMETER] = values[CUTOFF_PARAMETER]
        if values == implied:
            return f"{entry.name}_{values[CUTOFF_PARAMETER]}" if entry.cutoff else entry.name
    return None


def foreign_names(family: str) -> dict[str, list[str]]:
    """The names other tools give a prefeval family, by tool: ``{"trec_eval": ["map", "map_cut.k"], ...}``."""
    found: dict[str, list[str]] = {TREC_EVAL: [], IR_MEASURES: []}
    for entry in FOREIGN_NAMES:
        if entry.family == family:
            found[entry.tool].append(entry.shown())
    return found


def measure_groups(text: str) -> list[list[str]]:
    """Split a ``-m`` value into its names: groups separated by whitespace (ir_measures' lists,
    ``nDCG@10 P@5``), each a list of tokens separated by commas (prefeval's and trec_eval's,
    ``ap,p@5,10``, where a number continues the measure before it). Neither splits inside
    parentheses (``RBP(p=0.8, rel=2)``); whitespace around a comma belongs to the comma (``ap, ndcg``
    is one group). ``,,`` or a blank value gives an empty token, which no measure is named."""
    groups: list[list[str]] = []
    tokens: list[str] = []
    current: list[str] = []
    depth, spaced = 0, False
    for char in text:
        if depth == 0 and char == ",":
            tokens.append("".join(current))
            current, spaced = [], False
        elif depth == 0 and char.isspace():
            spaced = bool(current)
        else:
            if spaced:  # whitespace, and no comma, between two names: a new group
                groups.append(tokens + ["".join(current)])
                tokens, current, spaced = [], [], False
            depth += (char == "(") - (char == ")")
            current.append(char)
    if current or tokens or not groups:
        groups.append(tokens + ["".join(current)])
    return groups


def split_measure_list(text: str) -> list[str]:
    """The names of a ``-m`` value, in order (:func:`measure_groups`, flattened)."""
    return [token for group in measure_groups(text) for token in group]


def _split_arguments(text: str) -> list[str]:
    """The ``name=value`` arguments inside ir_measures' parentheses, split on the commas that are not
    inside further parentheses."""
    parts, depth, current = [], 0, []
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts]


def _translate_trec_eval(text: str, entry: ForeignName, cutoff: str | None) -> Translation:
    if entry.cutoff and cutoff is None:
        raise UsageError(
            f"{text}: give trec_eval's {entry.name} a cut-off, such as {entry.name}.10 or {entry.name}.5,10 "
            f"(prefeval does not expand trec_eval's default list of cut-offs)"
        )
    if not entry.cutoff and cutoff is not None:
        raise UsageError(f"{text}: trec_eval's {entry.name} takes no cut-off")
    return Translation(entry.family, {**entry.values, **({CUTOFF_PARAMETER: cutoff} if cutoff is not None else {})})


def _translate_ir_measures(text: str, entry: ForeignName, match: re.Match) -> Translation:
    values = dict(entry.values)
    arguments = match.group("args")
    for argument in filter(str.strip, _split_arguments(arguments)) if arguments.strip() else ():
        parsed = _ARGUMENT.match(argument)
        if parsed is None:
            raise UsageError(f"{text}: expected parameters as name=value, found {argument!r}")
        key = parsed.group("key")
        if key == "rel":
            raise UsageError(
                f"{text}: prefeval has no per-measure relevance level; use -l/--relevance-level "
                f"{parsed.group('value')}, which applies to every binary measure"
            )
        if key not in entry.parameters:
            known = ", ".join(entry.parameters) or "none"
            raise UsageError(
                f"{text}: prefeval's {entry.family} has no counterpart of ir_measures' {key} (supported: {known})"
            )
        values[entry.parameters[key]] = parsed.group("value")
    if match.group("cutoff") is not None:
        if not entry.cutoff:
            raise UsageError(f"{text}: ir_measures' {entry.name} takes no cut-off")
        values[CUTOFF_PARAMETER] = match.group("cutoff")
    return Translation(entry.family, values)
