"""ir_measures 0.4.3's measures: one table (:data:`ROWS`), read (:func:`read`) and written (:func:`spell`).

ir_measures writes ``Name(param=value, ...)@cutoff`` (``RBP(p=0.8)``, ``RBP(p=0.8)@10``,
``IPrec(rel=2)@0.5``), and whitespace separates the names of a list (``nDCG@10 P@5``). Most of its
plain names already are prefeval names read case-insensitively (``AP@100``, ``nDCG@10``, ``P@10``,
``R@100``, ``RR@10``, ``Rprec``, ``Bpref``, ``infAP``, ``IPrec@0.5``, ``Judged@10``, ``ERR@10``,
``Accuracy``, ``Compat``); the table adds the others (``SetP``, ``SetR``, ``SetF``, ``SetAP``,
``SetRelP``, ``NumQ``, ``NumRet``, ``NumRel``, ``NumRelRet``, ``BPref``; not its aliases ``MAP``,
``MRR``, ``NDCG``, ``Precision``, ``Recall``, ``RPrec``, which would crowd the suggestions for a
mistyped name).

Parameters take ir_measures' defaults where they differ from prefeval's: ``RBP()`` has p = 0.8
(prefeval's ``rbp`` has γ = 0.5). Every metric takes ir_measures' ``rel=`` (its own relevance level,
prefeval's keyword ``rel=``, on binary metrics) and ``judged_only=`` (True/1: prefeval's
``judged_only=1``; False is the default and is dropped). Parameters that choose another prefeval
family: ``nDCG(dcg='exp-log2')`` is ``ndcg_exp``, ``SetP(relative=True)`` is ``relative_p@0``,
``NumRet(rel=r)`` is ``num_rel_ret@rel=r``. ``nDCG(gains={0:0,1:1,2:3})`` is ``ndcg@gains=0:0;1:1;2:3``.
``SetF(beta=b)`` is ``f@0,weight=b``: ir_measures hands b to trec_eval's set_F, whose parameter is β²
(F = (1 + x) P R / (x P + R)), prefeval's ``weight``: ``SetF(beta=2.0)`` is F with β = √2.

``RBP``: ir_measures 0.4.3 computes ``RBP(rel=r, p=x)`` with cwl_eval (binary gain at level r,
(1 − x) Σ x^(rank − 1) over the first 1000 documents, no residual), which is prefeval's ``rbp``
(γ = x) at that level, so every ``RBP`` name is prefeval's ``rbp``. Without ``rel=`` ir_measures
means graded gains (the raw grades, through trectools, which its default pipeline leaves out, so
that it computes nothing); prefeval's ``rbp@x`` is that on binary qrels. ``trec_rbp`` (trec_eval
10's ``rbp``, grades scaled to [0, 1], p = 0.9) is another measure.

A name spelled exactly as ir_measures spells it whose measure differs from the prefeval family of the
same name read case-insensitively is ir_measures' (:func:`takes_precedence`): ``RBP`` and ``RBP@10``
are ``rbp@0.8`` and ``rbp@0.8,10``; ``rbp`` is prefeval's.

:func:`spell` writes a prefeval measure as ir_measures writes it (its canonical name: the parameters
that differ from its defaults, in the row's order, then the cut-off).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple, Protocol

from prefeval.errors import UsageError
from prefeval.measures.foreign.rows import CUTOFF, Translation

TOOL = "ir_measures"
COMMON = {"rel": "rel", "judged_only": "judged_only"}
"""ir_measures' parameters that every ir_measures name maps (prefeval's keyword parameters of every
metric; ``rel`` only on binary ones, where prefeval refuses it otherwise)."""


class Row(NamedTuple):
    """One of ir_measures' names (module docstring).

    ``cutoff``: the name takes ``@value``, which sets prefeval's parameter ``cutoff`` (None: it takes
    none). ``parameters`` maps the tool's parameter names to prefeval's (beside :data:`COMMON`),
    ``convert`` turns a value's text into prefeval's. ``values`` holds the parameter values (by
    prefeval name, as text) that the name stands for where they differ from prefeval's defaults (its
    defaults, ``RBP()``'s p = 0.8; what a name fixes, ``SetP`` is ``p@0``); parameters written in the
    name override them. ``switches`` maps a parameter written ``name=value`` (lower case) to the
    prefeval family it selects (``dcg=exp-log2`` → ``ndcg_exp``), or a bare parameter name to the
    family its presence selects (NumRet's ``rel``). ``tool_params``: ir_measures' own parameters of
    the measure (its ``SUPPORTED_PARAMS`` but the cut-off) and their defaults, which its name leaves
    out; ``alias_of``: the measure an alias stands for in ir_measures, and its parameters
    (``NumRelRet`` is ``NumRet(rel=1)``)."""

    name: str
    family: str
    cutoff: str | None = None
    parameters: dict[str, str] = {}
    values: dict[str, str] = {}
    switches: dict[str, str] = {}
    convert: dict[str, Callable[[str], str]] = {}
    tool_params: dict[str, object] = {}
    alias_of: tuple[str, dict[str, object]] | None = None

    def shown(self) -> str:
        """How the name is written, with placeholders: ``AP[@k]``, ``RBP(p=gamma)[@k]``."""
        params = ",".join(f"{theirs}={ours}" for theirs, ours in self.parameters.items())
        return self.name + (f"({params})" if params else "") + (f"[@{self.cutoff}]" if self.cutoff else "")

    def example(self) -> str:
        """The name written out with example values: ``RBP(p=0.7)@10``, ``SetF(beta=0.5)`` (a β that
        NRBP's range, [0, 1], takes too)."""
        params = ",".join(f"{theirs}={_EXAMPLES.get(theirs, '1')}" for theirs in self.parameters)
        cutoff = _EXAMPLES.get(self.cutoff, "10")
        return self.name + (f"({params})" if params else "") + (f"@{cutoff}" if self.cutoff else "")


_EXAMPLES = {CUTOFF: "10", "recall": "0.5", "p": "0.7", "beta": "0.5", "normalize": "False",
             "gains": "{0:0,1:1,2:3}"}
_SET = {CUTOFF: "0"}

_BINARY = {"rel": 1, "judged_only": False}
"""ir_measures' parameters of most of its measures, and their defaults."""

ROWS: tuple[Row, ...] = (
    Row("AP", "ap", CUTOFF, tool_params=_BINARY),
    Row("nDCG", "ndcg", CUTOFF, parameters={"gains": "gains"},
        switches={"dcg=log2": "ndcg", "dcg=exp-log2": "ndcg_exp"},
        tool_params={"dcg": "log2", "gains": None, "judged_only": False}),
    Row("P", "p", CUTOFF, tool_params=_BINARY),
    Row("R", "r", CUTOFF, tool_params=_BINARY),
    Row("RR", "rr", CUTOFF, tool_params=_BINARY),
    Row("Rprec", "rp", tool_params=_BINARY),
    Row("Success", "success", CUTOFF, tool_params=_BINARY),
    Row("RBP", "rbp", CUTOFF, parameters={"p": "gamma"}, values={"gamma": "0.8"}, tool_params={"p": 0.8, "rel": None}),
    Row("ERR", "err", CUTOFF),
    Row("IPrec", "iprec", "recall", tool_params=_BINARY),
    Row("SetP", "p", values=_SET, switches={"relative=false": "p", "relative=true": "relative_p"},
        tool_params={"rel": 1, "relative": False, "judged_only": False}),
    Row("SetRelP", "relative_p", values=_SET, alias_of=("SetP", {"relative": True})),
    Row("SetR", "r", values=_SET, tool_params={"rel": 1}),
    Row("SetF", "f", parameters={"beta": "weight"}, values=_SET,
        tool_params={"rel": 1, "beta": 1.0, "judged_only": False}),
    Row("SetAP", "set_ap", tool_params=_BINARY),
    Row("NumQ", "num_q"),
    Row("NumRet", "num_ret", switches={"rel": "num_rel_ret"}, tool_params={"rel": None}),
    Row("NumRelRet", "num_rel_ret", alias_of=("NumRet", {"rel": 1})),
    Row("NumRel", "num_rel", tool_params={"rel": 1}),
    Row("Bpref", "bpref", tool_params={"rel": 1}),
    Row("BPref", "bpref", alias_of=("Bpref", {})),
    Row("infAP", "infap", tool_params={"rel": 1}),
    Row("Judged", "judged", CUTOFF),
    Row("Compat", "compat", parameters={"p": "p", "normalize": "normalize"},
        tool_params={"p": 0.95, "normalize": True}),
    Row("Accuracy", "accuracy", CUTOFF, tool_params={"rel": 1}),
    Row("ERR_IA", "err_ia", CUTOFF, tool_params=_BINARY),
    Row("nERR_IA", "nerr_ia", CUTOFF, tool_params=_BINARY),
    Row("alpha_DCG", "alpha_dcg", CUTOFF, parameters={"alpha": "alpha"},
        tool_params={"rel": 1, "alpha": 0.5, "judged_only": False}),
    Row("alpha_nDCG", "alpha_ndcg", CUTOFF, parameters={"alpha": "alpha"},
        tool_params={"rel": 1, "alpha": 0.5, "judged_only": False}),
    Row("NRBP", "nrbp", parameters={"alpha": "alpha", "beta": "beta"},
        tool_params={"rel": 1, "alpha": 0.5, "beta": 0.5}),
    Row("nNRBP", "nnrbp", parameters={"alpha": "alpha", "beta": "beta"},
        tool_params={"rel": 1, "alpha": 0.5, "beta": 0.5}),
    Row("AP_IA", "ap_ia", tool_params=_BINARY),
    Row("MAP_IA", "ap_ia", alias_of=("AP_IA", {})),
    Row("P_IA", "p_ia", CUTOFF, tool_params=_BINARY),
    Row("StRecall", "strec", CUTOFF, tool_params={"rel": 1}),
)
"""ir_measures' names; the first row of a family is the one :func:`spell` writes, but where a
later row says more (``SetRelP`` is ``SetP(relative=True)``, which ir_measures prints)."""

BY_NAME = {row.name.lower(): row for row in ROWS}
_NAME = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_]*)(?:\((?P<args>.*)\))?(?:@(?P<cutoff>[0-9][0-9.]*))?$", re.DOTALL)
_ARGUMENT = re.compile(r"""^\s*(?P<key>[A-Za-z_]+)\s*=\s*(?P<quote>['"]?)(?P<value>[^'"]*)(?P=quote)\s*$""")
_DICT_ENTRY = re.compile(r"^\s*(?P<level>[-+]?\d+)\s*:\s*(?P<gain>[^:]+?)\s*$")
_TRUE, _FALSE = ("true", "1"), ("false", "0")


def row_of(text: str) -> Row | None:
    """The row of an ir_measures name (with or without parameters and cut-off), None if it is none."""
    match = _NAME.match(text.strip())
    return BY_NAME.get(match.group("name").lower()) if match else None


def is_explicit(text: str) -> bool:
    """Whether ``text`` is written in ir_measures' own syntax (parentheses or ``@``)."""
    return "(" in text or "@" in text


def spelled_as_its_own(text: str) -> bool:
    """True when ``text`` is an ir_measures name written in its own syntax, the name spelled exactly
    as ir_measures spells it (``IPrec@0.0``, ``nDCG@10``; not ``ndcg@10``, nor ``Rprec`` without a
    parenthesis or ``@``): what ir_measures prints for it is then :func:`printed`, its values as typed."""
    match = _NAME.match(text.strip())
    row = BY_NAME.get(match.group("name").lower()) if match else None
    return row is not None and row.name == match.group("name") and is_explicit(text)


def takes_precedence(text: str) -> bool:
    """True when ``text`` is an ir_measures name, spelled exactly as ir_measures spells it, whose
    measure differs from the prefeval family of the same name read case-insensitively (module
    docstring): ``RBP``, ``RBP@10``, not ``rbp``."""
    match = _NAME.match(text.strip())
    if match is None:
        return False
    row = BY_NAME.get(match.group("name").lower())
    return row is not None and row.name == match.group("name") and bool(row.values) \
        and row.family == row.name.lower()


def read(text: str) -> Translation | None:
    """The prefeval measure an ir_measures name stands for; None if ``text`` is not one. A known name
    used in a way prefeval refuses is a :class:`UsageError` saying why."""
    text = text.strip()
    match = _NAME.match(text)
    row = BY_NAME.get(match.group("name").lower()) if match else None
    if row is None:
        return None
    family = row.family
    values = dict(row.values)
    parameters = {**COMMON, **row.parameters}
    arguments = match.group("args") or ""
    for argument in filter(str.strip, split_arguments(arguments)) if arguments.strip() else ():
        parsed = _ARGUMENT.match(argument)
        if parsed is None:
            raise UsageError(f"{text}: expected parameters as name=value, found {argument!r}")
        key, value = parsed.group("key"), parsed.group("value").strip()
        chosen = row.switches.get(f"{key}={value}".lower())
        if chosen is not None:
            family = chosen
            continue
        if key in row.switches:
            family = row.switches[key]
        elif any(switch.startswith(f"{key}=") for switch in row.switches):
            options = ", ".join(switch.partition("=")[2] for switch in row.switches if switch.startswith(f"{key}="))
            raise UsageError(
                f"{text}: prefeval has no counterpart of ir_measures' {key}={value} (supported: {options})")
        if key not in parameters:
            known = ", ".join(list(row.parameters) + list(COMMON))
            raise UsageError(
                f"{text}: prefeval's {row.family} has no counterpart of ir_measures' {key} (supported: {known})")
        ours = parameters[key]
        if ours == "judged_only":
            if not _flag(value, key, text):
                values.pop(ours, None)  # False: ir_measures' default, prefeval's too
                continue
            value = "1"
        elif ours == "gains":
            value = _gain_map_text(value, text)
        if key in row.convert:
            value = row.convert[key](value)
        values[ours] = value
    if match.group("cutoff") is not None:
        if row.cutoff is None:
            raise UsageError(f"{text}: ir_measures' {row.name} takes no cut-off")
        values[row.cutoff] = match.group("cutoff")
    return Translation(family, values, printed(text), row=row.name)


def printed(text: str) -> str:
    """What ir_measures prints for a name written in its syntax (the ``repr`` of its measure): an
    alias as the measure it stands for (``NumRelRet`` is ``NumRet(rel=1)``, ``SetRelP``
    ``SetP(relative=True)``), the parameters in the order given, each as the Python value it was
    written as (``beta=2`` and ``beta=2.0`` differ), those at ir_measures' defaults left out
    (``RBP(p=0.8)`` is ``RBP``), a gain map sorted, its grades of gain equal to the grade left out,
    and the cut-off as written (``@10``, ``@0.5``)."""
    match = _NAME.match(text.strip())
    row = BY_NAME[match.group("name").lower()]
    name, params = row.alias_of or (row.name, {})
    params = dict(params)
    arguments = match.group("args") or ""
    for argument in filter(str.strip, split_arguments(arguments)) if arguments.strip() else ():
        key, _, value = argument.partition("=")
        params[key.strip()] = _literal(value.strip())
    defaults = BY_NAME[name.lower()].tool_params
    shown = ",".join(f"{key}={_python_repr(value)}" for key, value in params.items()
                     if key not in defaults or value != defaults[key])
    cutoff = match.group("cutoff")
    return name + (f"({shown})" if shown else "") + (f"@{_literal(cutoff)}" if cutoff is not None else "")


def _literal(text: str):
    """The Python value ``text`` writes (as ir_measures reads its parameters), else the text itself."""
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _python_repr(value) -> str:
    """A parameter as ir_measures writes it: ``repr``, but a gain map ``{grade:gain,...}`` sorted,
    without the grades whose gain is the grade."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{grade}:{gain}" for grade, gain in sorted(value.items()) if grade != gain) + "}"
    return repr(value)


def split_arguments(text: str) -> list[str]:
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


class _Parametrised(Protocol):
    """What :func:`spell` reads of a measure (a :class:`~prefeval.measures.base.Measure`)."""

    family: str
    values: tuple

    def all_parameters(self) -> tuple: ...


_SPELLED_BY = {"ndcg_exp": ("nDCG", "dcg='exp-log2'"), "relative_p": ("SetP", "relative=True"),
               "num_rel_ret": ("NumRet", None)}
"""Families that ir_measures writes as another name with a parameter that selects them."""


def spell(measure: _Parametrised) -> str | None:
    """ir_measures' canonical name of a prefeval measure, None when ir_measures has none: the row
    of the measure's family that fits it (its fixed values are the measure's), its parameters where
    they differ from ir_measures' defaults (``RBP(p=0.5)`` for prefeval's ``rbp``, ``RBP@10`` for
    ``rbp@0.8,10``, ``P(rel=2)@10``, ``NumRet(rel=1)`` for ``num_rel_ret``), then ``@cutoff`` when the
    row has one and it is set."""
    params = measure.all_parameters()
    values = dict(zip((param.name for param in params), measure.values))
    by_name = {param.name: param for param in params}
    name, selector = _SPELLED_BY.get(measure.family, (None, None))
    family = measure.family if name is None else BY_NAME[name.lower()].family
    rows = [row for row in ROWS if row.family == family and (name is None or row.name == name)]
    for row in sorted(rows, key=lambda row: not _fixed(row)):  # a row that fixes values says more
        fixed = _fixed(row)
        if any(by_name[key].parse(text, "") != values[key] for key, text in fixed.items() if key in by_name):
            continue
        arguments = [selector] if selector is not None else []
        for theirs, ours in row.parameters.items():
            if ours not in by_name:
                continue
            default = by_name[ours].parse(row.values[ours], "") if ours in row.values else by_name[ours].default
            if values.get(ours) != default:
                arguments.append(f"{theirs}={_written(by_name[ours], values[ours], theirs)}")
        rel = values.get("rel")
        if measure.family == "num_rel_ret":
            rel = 1 if rel is None else rel  # NumRet(rel=r): the relevant documents retrieved
        if rel is not None and rel != row.tool_params.get("rel", None):
            arguments.append(f"rel={_number(rel)}")
        if values.get("judged_only"):
            arguments.append("judged_only=True")
        others = {key for key in values if key not in fixed and key not in row.parameters.values()
                  and key not in ("rel", "judged_only", row.cutoff)}
        if any(values[key] != by_name[key].default for key in others):
            return None  # a parameter ir_measures' name cannot say
        at = ""
        if row.cutoff == CUTOFF and values[CUTOFF] == 0:
            if by_name[CUTOFF].default != 0:
                return None  # prefeval's "no cut-off", where the name alone has one (Success is Success@10)
        elif row.cutoff is not None:
            at = f"@{_number(values[row.cutoff])}"
        return row.name + (f"({','.join(arguments)})" if arguments else "") + at
    return None


def _fixed(row: Row) -> dict[str, str]:
    """The values a row's name fixes (not the defaults of the parameters it takes)."""
    return {key: text for key, text in row.values.items() if key not in row.parameters.values()}


def _number(value) -> str:
    """A number as ir_measures writes a parameter: an integer without a decimal point."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _written(param, value, theirs: str) -> str:
    """A prefeval parameter's value as ir_measures writes its own: numbers without a needless ``.0``,
    a gain map as :func:`_python_repr` writes one."""
    if theirs == "gains":
        pairs = (pair.split(":") for pair in param.written(value).split(";"))
        return _python_repr({int(grade): _literal(_number(float(gain))) for grade, gain in pairs})
    if theirs == "normalize":
        return "True" if value else "False"
    return _number(value)
