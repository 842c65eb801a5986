"""Measure names of trec_eval and ir_measures: one table, :data:`FOREIGN_NAMES`, read both ways.

prefeval spells a measure ``family[@param[,param]][,keyword=value]`` (``ap@10``, ``rbp@0.8,100``,
``p@10,rel=2.0``), case-insensitively, so most of ir_measures' plain names already are prefeval names
(``AP@100``, ``nDCG@10``, ``P@10``, ``R@100``, ``RR@10``, ``Rprec``, ``Bpref``, ``infAP``,
``IPrec@0.5``, ``Judged@10``, ``ERR@10``, ``Accuracy``, ``Compat``). The table adds the other
spellings people type, and :func:`translate` reads them:

* trec_eval: ``map``, ``gm_map``, ``recip_rank``, ``Rprec``, ``bpref``, ``infAP``, ``num_ret``,
  ``set_P`` (``p@0``, the precision of the whole list), ``set_recall`` (``r@0``), ``set_F`` (``f@0``),
  ``set_map`` and a name with a cut-off after ``.`` or ``_`` (``map_cut.10``, ``map_cut_10``,
  ``P.10``, ``P_10``, ``ndcg_cut.10``, ``recall.100``, ``success.10``, ``relative_P.10``,
  ``unj.10``). Some cut-offs set another parameter than the rank cut-off ``k``: the recall level of
  ``iprec_at_recall.0.5`` (``iprec@0.5,0.5``: trec_eval 10 rounds a level to ``lround(r R)``
  documents, prefeval's ``round_from`` 0.5), the factor of ``Rprec_mult.0.2`` and the first
  coefficient of ``utility.1,-1,0,0``. A list such as ``P.5,10`` is split by
  :func:`~prefeval.measures.base.parse_measures` into ``P.5`` and ``10``, the number continuing the
  measure before it. trec_eval's ``name.L=G,L=G`` parameters are read as a gain map and, on ``rbp``
  and ``rbp_resid``, ``p=`` as the persistence: ``ndcg.1=3.5,2=9`` is ``ndcg@gains=1:3.5;2:9``,
  ``rbp.p=0.95`` is ``trec_rbp@0.95``.
* ir_measures: ``Name(param=value, ...)`` with an optional ``@cutoff`` (``RBP(p=0.8)``,
  ``RBP(p=0.8)@10``, ``IPrec(rel=2)@0.5``), and the names ir_measures has that are not prefeval's
  (``SetP``, ``SetR``, ``SetF``, ``SetAP``, ``SetRelP``, ``NumQ``, ``NumRet``, ``NumRel``,
  ``NumRelRet``, ``BPref``; not its other aliases ``MAP``, ``MRR``, ``NDCG``, ``Precision``,
  ``Recall``, ``RPrec``, which would crowd the suggestions for a mistyped name).
  Parameters take ir_measures' defaults where they differ from prefeval's: ``RBP()`` has p = 0.8
  (prefeval's ``rbp`` has γ = 0.5). Every metric takes ir_measures' ``rel=`` (its own relevance
  level, prefeval's keyword ``rel=``, on binary metrics) and ``judged_only=`` (True/1: prefeval's
  ``judged_only=1``; False is the default and is dropped). Parameters that choose another prefeval
  family: ``nDCG(dcg='exp-log2')`` is ``ndcg_exp``, ``SetP(relative=True)`` is ``relative_p@0``,
  ``NumRet(rel=r)`` is ``num_rel_ret@rel=r``. ``nDCG(gains={0:0,1:1,2:3})`` is
  ``ndcg@gains=0:0;1:1;2:3``. ``SetF(beta=b)`` is ``f@0,sqrt(b)``: ir_measures hands b to
  trec_eval's set_F, whose parameter is β² (F = (1 + x) P R / (x P + R)), so ``SetF(beta=2.0)`` is
  F with β = √2.

  ``RBP``: ir_measures 0.4.3 computes ``RBP(rel=r, p=x)`` with cwl_eval (binary gain at level r,
  (1 − x) Σ x^(rank − 1) over the first 1000 documents, no residual), which is prefeval's ``rbp``
  (γ = x) at that level, so every ``RBP`` name is prefeval's ``rbp``. Without ``rel=`` ir_measures
  means graded gains (the raw grades, through trectools, which its default pipeline leaves out, so
  that it computes nothing); prefeval's ``rbp@x`` is that on binary qrels. ``trec_rbp`` (trec_eval
  10's ``rbp``, grades scaled to [0, 1], p = 0.9) is another measure.

The same table writes a prefeval measure under its trec_eval name (:func:`trec_eval_spelling`), as
trec_eval prints it on a per-measure line, its cut-off after ``_``: ``map``, ``map_cut_10``, ``ndcg``,
``ndcg_cut_10``, ``P_10``, ``set_P``, ``recall_10``, ``set_recall``, ``recip_rank``, ``Rprec``,
``success_1``, ``iprec_at_recall_0.50``, ``Rprec_mult_0.20``, ``11pt_avg``. Every name written reads
back as the same measure.

Deliberately refused, with a message saying what to write instead: a trec_eval cut-off family without
a cut-off (``map_cut``: trec_eval would expand it to nine default cut-offs), a cut-off on a trec_eval
measure that has none (``recip_rank.10``), and ir_measures parameters that prefeval has no
counterpart of. Bare ``P`` and ``recall`` are prefeval's ``p`` and ``r`` (cut-off 10 by default), not
trec_eval's lists of cut-offs; bare ``unj`` is prefeval's ``unj@10``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from prefeval.errors import UsageError

TREC_EVAL = "trec_eval"
IR_MEASURES = "ir_measures"
CUTOFF_PARAMETER = "k"
"""The prefeval parameter that a trec_eval ``.k`` or an ir_measures ``@k`` cut-off sets by default."""
LEVELS = "#"
"""In :attr:`ForeignName.pairs`: the integer names of trec_eval's ``name.L=G`` pairs (a gain map)."""


def _sqrt_text(text: str) -> str:
    """SetF's beta (trec_eval's set_F parameter, which is β²) as prefeval's β: its square root."""
    try:
        value = float(text)
    except ValueError:
        return text
    return repr(math.sqrt(value)) if value >= 0 else text


@dataclass(frozen=True)
class ForeignName:
    """A measure as another tool names it, and the prefeval measure it is.

    ``cutoff``: the name takes a cut-off (trec_eval ``.k``, ir_measures ``@k``) that sets prefeval's
    parameter ``cutoff_parameter`` (``k``; the recall level of ``iprec_at_recall.0.5``); a trec_eval
    cut-off family requires one unless ``cutoff_required`` is False. ``parameters`` maps the tool's
    parameter names to prefeval's (ir_measures' ``rel`` and ``judged_only`` map on every ir_measures
    name), ``convert`` turns a value's text into prefeval's. ``values`` holds the parameter values (by
    prefeval name, as text) that the name stands for where they differ from prefeval's defaults: what
    a trec_eval name fixes (``set_P`` is ``p@0``) or ir_measures' own defaults (``RBP()`` has p =
    0.8); parameters written in the name override them. ``switches`` maps an ir_measures parameter
    written ``name=value`` (lower case) to the prefeval family it selects (``dcg=exp-log2`` ->
    ``ndcg_exp``), or a bare parameter name to the family its presence selects (NumRet's ``rel``).
    ``pairs`` maps the names of trec_eval's ``name.a=b,...`` pairs to prefeval parameters
    (:data:`LEVELS`: the integer names, a gain map).
    """

    tool: str
    name: str
    family: str
    cutoff: bool
    parameters: dict[str, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    cutoff_parameter: str = CUTOFF_PARAMETER
    cutoff_required: bool = True
    convert: dict[str, Callable[[str], str]] = field(default_factory=dict)
    switches: dict[str, str] = field(default_factory=dict)
    pairs: dict[str, str] = field(default_factory=dict)

    def shown(self) -> str:
        """How the name is written, with placeholders: ``map_cut.k``, ``AP[@k]``, ``RBP(p=gamma)[@k]``."""
        placeholder = self.cutoff_parameter
        if self.tool == TREC_EVAL:
            if self.cutoff:
                return f"{self.name}.{placeholder}" if self.cutoff_required else f"{self.name}[.{placeholder},...]"
            if self.pairs:
                return f"{self.name}[.{','.join('L=G' if key == LEVELS else f'{key}=...' for key in self.pairs)}]"
            return self.name
        params = ",".join(f"{theirs}={ours}" for theirs, ours in self.parameters.items())
        return self.name + (f"({params})" if params else "") + (f"[@{placeholder}]" if self.cutoff else "")

    def example(self) -> str:
        """The name written out with example values, as a user types it: ``map_cut.10``,
        ``iprec_at_recall.0.5``, ``ndcg.1=3``, ``rbp.p=0.7``, ``RBP(p=0.7)@10``, ``SetF(beta=2.0)``."""
        cutoff = _EXAMPLES.get(self.cutoff_parameter, "10")
        if self.tool == TREC_EVAL:
            if self.cutoff:
                return f"{self.name}.{cutoff}"
            if self.name.lower() in _SHADOWED:
                return f"{self.name}.p=0.7"
            return self.name
        params = ",".join(f"{theirs}={_EXAMPLES.get(theirs, '1')}" for theirs in self.parameters)
        return self.name + (f"({params})" if params else "") + (f"@{cutoff}" if self.cutoff else "")


def _te(name: str, family: str, cutoff: bool = False, **extra) -> ForeignName:
    return ForeignName(TREC_EVAL, name, family, cutoff, **extra)


def _irm(name: str, family: str, cutoff: bool = False, **extra) -> ForeignName:
    return ForeignName(IR_MEASURES, name, family, cutoff, **extra)


_GAIN_PAIRS = {LEVELS: "gains"}
_SET = {CUTOFF_PARAMETER: "0"}
_TREC_EVAL_10_ROUNDING = {"round_from": "0.5"}

FOREIGN_NAMES: tuple[ForeignName, ...] = (
    # trec_eval: the first entry that fits a measure is the name trec_eval_spelling writes
    _te("map", "ap"),
    _te("map_cut", "ap", cutoff=True),
    _te("gm_map", "gm_ap"),
    _te("ndcg", "ndcg", pairs=_GAIN_PAIRS),
    _te("ndcg_cut", "ndcg", cutoff=True),
    _te("ndcg_rel", "ndcg_rel", pairs=_GAIN_PAIRS),
    _te("Rndcg", "rndcg", pairs=_GAIN_PAIRS),
    _te("G", "gain_shortfall", pairs=_GAIN_PAIRS),
    _te("binG", "binary_gain_shortfall"),
    _te("rbp", "trec_rbp", pairs={"p": "p", **_GAIN_PAIRS}),
    _te("rbp_resid", "trec_rbp_resid", pairs={"p": "p"}),
    _te("P", "p", cutoff=True),
    _te("set_P", "p", values=_SET),
    _te("relative_P", "relative_p", cutoff=True),
    _te("set_relative_P", "relative_p", values=_SET),
    _te("recall", "r", cutoff=True),
    _te("set_recall", "r", values=_SET),
    _te("set_F", "f", values=_SET),
    _te("set_map", "set_ap"),
    _te("recip_rank", "rr"),
    _te("Rprec", "rp"),
    _te("Rprec_mult", "rp_mult", cutoff=True, cutoff_parameter="f"),
    _te("success", "success", cutoff=True),
    _te("iprec_at_recall", "iprec", cutoff=True, cutoff_parameter="recall", values=_TREC_EVAL_10_ROUNDING),
    _te("11pt_avg", "iprec_avg", values=_TREC_EVAL_10_ROUNDING),
    _te("utility", "utility", cutoff=True, cutoff_parameter="a", cutoff_required=False),
    _te("num_q", "num_q"),
    _te("num_ret", "num_ret"),
    _te("num_rel", "num_rel"),
    _te("num_rel_ret", "num_rel_ret"),
    _te("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    _te("bpref", "bpref"),
    _te("gm_bpref", "gm_bpref"),
    _te("infAP", "infap"),
    _te("unj", "unj", cutoff=True),
    # ir_measures (rel= and judged_only= map on every one of them)
    _irm("AP", "ap", cutoff=True),
    _irm("nDCG", "ndcg", cutoff=True, parameters={"gains": "gains"},
         switches={"dcg=log2": "ndcg", "dcg=exp-log2": "ndcg_exp"}),
    _irm("P", "p", cutoff=True),
    _irm("R", "r", cutoff=True),
    _irm("RR", "rr", cutoff=True),
    _irm("Rprec", "rp"),
    _irm("Success", "success", cutoff=True),
    _irm("RBP", "rbp", cutoff=True, parameters={"p": "gamma"}, values={"gamma": "0.8"}),
    _irm("ERR", "err", cutoff=True),
    _irm("IPrec", "iprec", cutoff=True, cutoff_parameter="recall"),
    _irm("SetP", "p", values=_SET, switches={"relative=false": "p", "relative=true": "relative_p"}),
    _irm("SetRelP", "relative_p", values=_SET),
    _irm("SetR", "r", values=_SET),
    _irm("SetF", "f", values=_SET, parameters={"beta": "beta"}, convert={"beta": _sqrt_text}),
    _irm("SetAP", "set_ap"),
    _irm("NumQ", "num_q"),
    _irm("NumRet", "num_ret", switches={"rel": "num_rel_ret"}),
    _irm("NumRelRet", "num_rel_ret"),
    _irm("NumRel", "num_rel"),
    _irm("Bpref", "bpref"),
    _irm("BPref", "bpref"),
    _irm("infAP", "infap"),
    _irm("Judged", "judged", cutoff=True),
    _irm("Compat", "compat", parameters={"p": "p", "normalize": "normalize"}),
    _irm("Accuracy", "accuracy", cutoff=True),
)
"""Every foreign name: read by :func:`translate`, written by :func:`trec_eval_spelling` (the first
trec_eval entry that fits a measure), and listed by ``prefeval measures`` beside each family."""

IR_MEASURES_COMMON = {"rel": "rel", "judged_only": "judged_only"}
"""ir_measures' parameters that every ir_measures name maps (prefeval's keyword parameters of every
metric; ``rel`` only on binary ones, where prefeval refuses it otherwise)."""

_BY_TOOL = {
    tool: {entry.name.lower(): entry for entry in FOREIGN_NAMES if entry.tool == tool}
    for tool in (TREC_EVAL, IR_MEASURES)
}
_TREC_EVAL_BY_FAMILY = {
    family: [entry for entry in FOREIGN_NAMES if entry.tool == TREC_EVAL and entry.family == family]
    for family in dict.fromkeys(entry.family for entry in FOREIGN_NAMES)
}
_TREC_EVAL_NAME = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_]*?)(?:[._](?P<cutoff>\d+(?:\.\d*)?))?$")
_TREC_EVAL_PAIRS = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_]*?)[._](?P<pairs>(?:-?\d+|p)\s*=.*)$", re.DOTALL)
_PAIR_START = re.compile(r"^\s*(?:-?\d+|p)\s*=")
"""The start of a trec_eval pair: a grade (``2=9``) or rbp's persistence (``p=0.95``)."""
_IR_MEASURES_NAME = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z_]*)(?:\((?P<args>.*)\))?(?:@(?P<cutoff>[0-9][0-9.]*))?$", re.DOTALL)
_ARGUMENT = re.compile(r"""^\s*(?P<key>[A-Za-z_]+)\s*=\s*(?P<quote>['"]?)(?P<value>[^'"]*)(?P=quote)\s*$""")
_DICT_ENTRY = re.compile(r"^\s*(?P<level>[-+]?\d+)\s*:\s*(?P<gain>[^:]+?)\s*$")
_TRUE, _FALSE = ("true", "1"), ("false", "0")
_EXAMPLES = {"k": "10", "recall": "0.5", "f": "0.2", "a": "1", "p": "0.7", "beta": "2.0", "normalize": "False",
             "gains": "{0:0,1:1,2:3}"}
"""Example values of parameters, for :meth:`ForeignName.example`."""
_SHADOWED = {"rbp"}
"""trec_eval names that are also a prefeval family of another measure: trec_eval's ``rbp`` is
prefeval's ``trec_rbp``, written ``rbp_p=0.9`` (which reads back) rather than ``rbp``."""


class Translation(NamedTuple):
    """A prefeval family and the texts of the parameters a foreign name sets, by prefeval name."""

    family: str
    values: dict[str, str]

    def spelling(self, family: type, text: str) -> str:
        """prefeval's spelling of the measure: ``family@positional,...,keyword=value``. The
        positional parameters are written up to the last one set (the earlier ones at their
        defaults), then each keyword parameter set. ``family`` is the registered class of
        :attr:`family` (a :class:`~prefeval.measures.base.Measure`), ``text`` the name as written
        (for the error about a parameter the family does not have)."""
        params = family.all_parameters()
        by_name = {param.name: param for param in params}
        for key in self.values:
            if key not in by_name:
                raise UsageError(f"{text}: prefeval's {family.family} has no parameter {key}")
        positional = [param for param in params if not param.keyword]
        last = max((positional.index(by_name[key]) for key in self.values if not by_name[key].keyword), default=-1)
        texts = [self.values.get(param.name, param.written(param.default)) for param in positional[: last + 1]]
        texts += [f"{param.name}={self.values[param.name]}" for param in params
                  if param.keyword and param.name in self.values]
        return family.family + ("@" + ",".join(texts) if texts else "")


def translate(text: str) -> Translation | None:
    """The prefeval measure that a trec_eval or ir_measures name stands for; None if ``text`` is
    neither. A known name used in a way prefeval refuses is a :class:`UsageError` saying why.

    A name with parentheses or ``@`` is ir_measures'; otherwise trec_eval's name is tried first
    (``map`` is trec_eval's, and ir_measures' ``MAP`` the same measure), then ir_measures' plain one."""
    text = text.strip()
    ir_match = _IR_MEASURES_NAME.match(text)
    ir_entry = _BY_TOOL[IR_MEASURES].get(ir_match.group("name").lower()) if ir_match else None
    if ir_entry is not None and ("(" in text or "@" in text or prefers_translation(text)):
        return _translate_ir_measures(text, ir_entry, ir_match)
    match = _TREC_EVAL_PAIRS.match(text)
    if match and match.group("name").lower() in _BY_TOOL[TREC_EVAL]:
        return _translate_trec_eval_pairs(text, _BY_TOOL[TREC_EVAL][match.group("name").lower()], match.group("pairs"))
    match = _TREC_EVAL_NAME.match(text)
    if match and match.group("name").lower() in _BY_TOOL[TREC_EVAL]:
        return _translate_trec_eval(text, _BY_TOOL[TREC_EVAL][match.group("name").lower()], match.group("cutoff"))
    if ir_entry is not None:
        return _translate_ir_measures(text, ir_entry, ir_match)
    return None


def prefers_translation(text: str) -> bool:
    """True when ``text`` is an ir_measures name, spelled exactly as ir_measures spells it, whose
    measure differs from the prefeval family of the same name read case-insensitively: ``RBP`` and
    ``RBP@10`` are ir_measures' (p = 0.8: ``rbp@0.8``, ``rbp@0.8,10``), ``rbp`` and ``rbp@0.8`` are
    prefeval's (γ = 0.5 by default; the first parameter is γ, not the cut-off)."""
    match = _IR_MEASURES_NAME.match(text.strip())
    if match is None:
        return False
    entry = _BY_TOOL[IR_MEASURES].get(match.group("name").lower())
    return entry is not None and entry.name == match.group("name") and bool(entry.values) \
        and entry.family == entry.name.lower()


class _Parametrised(Protocol):
    """What :func:`trec_eval_spelling` reads of a measure (a :class:`~prefeval.measures.base.Measure`)."""

    family: str
    values: tuple

    def all_parameters(self) -> tuple: ...


def trec_eval_spelling(measure: _Parametrised) -> str | None:
    """trec_eval's name of a prefeval measure, as trec_eval prints it on a per-measure line; None when
    trec_eval has none (preferences, ``rbp``, ``rr@10``, ``success@0``, ``iprec@0.5`` with
    pytrec_eval's rounding, a measure with a keyword parameter set: ``p@10,rel=2.0``).

    The name is that of the first trec_eval entry of :data:`FOREIGN_NAMES` that fits the measure: an
    entry with a cut-off fits a measure whose cut-off parameter is set (``k`` > 0) and whose other
    parameters are the entry's (``ap@10`` → ``map_cut_10``, ``p@10`` → ``P_10``, ``success@1`` →
    ``success_1``, ``iprec@0.5,0.5`` → ``iprec_at_recall_0.50``, ``rp_mult@0.2`` → ``Rprec_mult_0.20``:
    a level or factor with two decimals, as trec_eval prints it); an entry without one fits a measure
    whose parameters are all the entry's (``ap`` and ``ap@0`` → ``map``, ``p@0`` → ``set_P``, ``rr``
    → ``recip_rank``, ``utility`` with its default coefficients → ``utility``). :func:`translate`
    reads the name back as the same values.
    """
    params = measure.all_parameters()
    values = dict(zip((param.name for param in params), measure.values))
    if any(values[param.name] is not None for param in params if param.keyword):
        return None  # a keyword parameter (gains=, rel=, judged_only=) that trec_eval's name does not say
    numeric = [param for param in params if not param.keyword and param.parser is None]
    values = {param.name: values[param.name] for param in numeric}
    for entry in _TREC_EVAL_BY_FAMILY.get(measure.family, ()):
        implied = {param.name: param.type(entry.values.get(param.name, param.default)) for param in numeric}
        if values == implied and (not entry.cutoff or not entry.cutoff_required):
            return entry.name if entry.name.lower() not in _SHADOWED else _pairs_spelling(entry, values)
        if "p" in entry.pairs and {**implied, "p": values.get("p")} == values:
            return _pairs_spelling(entry, values)
        if not entry.cutoff or not entry.cutoff_required:
            continue
        at = entry.cutoff_parameter
        value = values.get(at)
        if value is None or not math.isfinite(value) or (at == CUTOFF_PARAMETER and value <= 0):
            continue
        if {**implied, at: value} != values:
            continue
        written = str(value) if isinstance(value, int) else f"{value:.2f}"
        if isinstance(value, float) and (float(written) != value or len(written) > 20):
            continue  # trec_eval's two decimals would not read back as this value
        return f"{entry.name}_{written}"
    return None


def _pairs_spelling(entry: ForeignName, values: dict) -> str:
    """trec_eval's name of a measure set by ``name.p=x`` (``rbp_p=0.9``, as trec_eval prints
    ``rbp.p=0.9``): the plain name (``rbp``) is prefeval's own ``rbp``, another measure."""
    return f"{entry.name}_p={values['p']!r}"


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
    parentheses or braces (``RBP(p=0.8, rel=2)``, ``nDCG(gains={0:0, 1:1})``); whitespace around a
    comma belongs to the comma (``ap, ndcg`` is one group). trec_eval's pairs after a name stay with
    it (``ndcg.1=3.5,2=9``, ``rbp.p=0.95,1=3``). ``,,`` or a blank value gives an empty token, which no
    measure is named."""
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
            depth += (char in "({") - (char in ")}")
            current.append(char)
    if current or tokens or not groups:
        groups.append(tokens + ["".join(current)])
    return [_join_pairs(group) for group in groups]


def _join_pairs(tokens: list[str]) -> list[str]:
    """Tokens with each trec_eval pair (``2=9``) joined to the trec_eval name with pairs before it."""
    joined: list[str] = []
    for token in tokens:
        if joined and _PAIR_START.match(token) and _is_trec_eval_pairs(joined[-1]):
            joined[-1] += "," + token.strip()
        else:
            joined.append(token)
    return joined


def _is_trec_eval_pairs(token: str) -> bool:
    match = _TREC_EVAL_PAIRS.match(token.strip())
    entry = _BY_TOOL[TREC_EVAL].get(match.group("name").lower()) if match else None
    return entry is not None and bool(entry.pairs)


def split_measure_list(text: str) -> list[str]:
    """The names of a ``-m`` value, in order (:func:`measure_groups`, flattened)."""
    return [token for group in measure_groups(text) for token in group]


def _split_arguments(text: str) -> list[str]:
    """The ``name=value`` arguments inside ir_measures' parentheses, split on the commas that are not
    inside further parentheses or braces."""
    parts, depth, current = [], 0, []
    for char in text:
        depth += (char in "({") - (char in ")}")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts]


def _translate_trec_eval(text: str, entry: ForeignName, cutoff: str | None) -> Translation:
    if entry.cutoff and entry.cutoff_required and cutoff is None:
        raise UsageError(
            f"{text}: give trec_eval's {entry.name} a cut-off, such as {entry.name}.10 or {entry.name}.5,10 "
            f"(prefeval does not expand trec_eval's default list of cut-offs)"
        )
    if not entry.cutoff and cutoff is not None:
        raise UsageError(f"{text}: trec_eval's {entry.name} takes no cut-off")
    given = {entry.cutoff_parameter: cutoff} if cutoff is not None else {}
    return Translation(entry.family, {**entry.values, **given})


def _translate_trec_eval_pairs(text: str, entry: ForeignName, pairs: str) -> Translation:
    """trec_eval's ``name.a=b,c=d``: integer names are a gain map (``L:G``), others parameters."""
    if not entry.pairs:
        raise UsageError(f"{text}: trec_eval's {entry.name} takes no name=value parameters")
    values = dict(entry.values)
    gains: list[str] = []
    for pair in pairs.split(","):
        key, _, value = (part.strip() for part in pair.partition("="))
        if re.fullmatch(r"-?\d+", key) and LEVELS in entry.pairs:
            gains.append(f"{key}:{value}")
        elif key in entry.pairs and key != LEVELS:
            values[entry.pairs[key]] = value
        else:
            known = ", ".join("L (a grade)" if name == LEVELS else name for name in entry.pairs)
            raise UsageError(f"{text}: trec_eval's {entry.name} has no parameter {key!r} (parameters: {known})")
    if gains:
        values[entry.pairs[LEVELS]] = ";".join(gains)
    return Translation(entry.family, values)


def _flag(text: str, name: str, measure: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE or lowered in _FALSE:
        return lowered in _TRUE
    raise UsageError(f"{measure}: {name} must be True or False, not {text!r}")


def _gain_map_text(text: str, measure: str) -> str:
    """ir_measures' gains, a Python dict of grade to gain (``{0:0, 1:1, 2:3}``), as prefeval's
    ``0:0;1:1;2:3``; prefeval's own syntax passes through."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return inner
    entries = [entry for entry in inner[1:-1].split(",") if entry.strip()]
    parsed = [_DICT_ENTRY.match(entry) for entry in entries]
    if not entries or not all(parsed):
        raise UsageError(f"{measure}: gains must be a dict of grade: gain, such as {{0: 0, 1: 1, 2: 3}}, not {text!r}")
    return ";".join(f"{match.group('level')}:{match.group('gain')}" for match in parsed)


def _translate_ir_measures(text: str, entry: ForeignName, match: re.Match) -> Translation:
    family = entry.family
    values = dict(entry.values)
    parameters = {**IR_MEASURES_COMMON, **entry.parameters}
    arguments = match.group("args") or ""
    for argument in filter(str.strip, _split_arguments(arguments)) if arguments.strip() else ():
        parsed = _ARGUMENT.match(argument)
        if parsed is None:
            raise UsageError(f"{text}: expected parameters as name=value, found {argument!r}")
        key, value = parsed.group("key"), parsed.group("value").strip()
        chosen = entry.switches.get(f"{key}={value}".lower())
        if chosen is not None:
            family = chosen
            continue
        if key in entry.switches:
            family = entry.switches[key]
        elif any(switch.startswith(f"{key}=") for switch in entry.switches):
            options = ", ".join(switch.partition("=")[2] for switch in entry.switches if switch.startswith(f"{key}="))
            raise UsageError(
                f"{text}: prefeval has no counterpart of ir_measures' {key}={value} (supported: {options})")
        if key not in parameters:
            known = ", ".join(list(entry.parameters) + list(IR_MEASURES_COMMON))
            raise UsageError(
                f"{text}: prefeval's {entry.family} has no counterpart of ir_measures' {key} (supported: {known})"
            )
        ours = parameters[key]
        if ours == "judged_only":
            if not _flag(value, key, text):
                values.pop(ours, None)  # False: ir_measures' default, prefeval's too
                continue
            value = "1"
        elif ours == "gains":
            value = _gain_map_text(value, text)
        if key in entry.convert:
            value = entry.convert[key](value)
        values[ours] = value
    if match.group("cutoff") is not None:
        if not entry.cutoff:
            raise UsageError(f"{text}: ir_measures' {entry.name} takes no cut-off")
        values[entry.cutoff_parameter] = match.group("cutoff")
    return Translation(family, values)
