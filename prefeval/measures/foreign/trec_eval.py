"""trec_eval 10.0's measures: one table (:data:`ROWS`), read (:func:`read`) and written (:func:`spell`).

A row is one of trec_eval's measures, in the order trec_eval lists them (``measures.c``, the order in
which it prints them whatever the order of ``-m``), with the prefeval family it is, its parameter and
what the name stands for:

* a measure with one parameter after a dot: ``map_cut.10`` is ``ap@10``, ``iprec_at_recall.0.5`` is
  ``iprec@0.5,0.5`` (trec_eval 10 rounds a recall level to ``lround(r R)`` documents: prefeval's
  ``round_from`` 0.5), ``Rprec_mult.0.2`` is ``rp_mult@0.2``, ``set_F.0.5`` is ``f@0,weight=0.5`` (trec_eval's
  parameter is β², prefeval's ``weight``), ``utility.1,-1,0,0`` sets the coefficients; the parameter may also
  follow an underscore as trec_eval prints it (``map_cut_10``, ``P_10``); a cut-off is the integer its
  number starts with, as trec_eval's ``atol`` reads it (``ndcg_cut.23.4`` is ``ndcg_cut_23``);
* ``11pt_avg.0.2,0.5,0.8``: its recall levels, one list (:attr:`Row.joined`): ``iprec_avg@0.2;0.5;0.8,0.5``;
* **a name without its parameter is trec_eval's default list** (:attr:`Row.defaults`), in every
  output format: ``P``, ``recall``, ``map_cut``, ``ndcg_cut`` and ``relative_P`` are measured at 5,
  10, 15, 20, 30, 100, 200, 500 and 1000; ``success`` at 1, 5 and 10; ``unj`` at 5, 10 and 20;
  ``iprec_at_recall`` at the 11 recall levels 0.0, 0.1, ..., 1.0; ``Rprec_mult`` at 0.2, 0.4, ...,
  2.0. Names are read case-insensitively, so prefeval's ``p`` is ``P`` too; ``r`` (the family whose
  alias is ``recall``) is ``recall``, and so on: :func:`default_list`;
* ``name.a=b,...`` pairs: a grade's gain (``ndcg.1=3.5,2=9`` is ``ndcg@gains=1:3.5;2:9``) and rbp's
  persistence (``rbp.p=0.95``).

``rbp`` here is trec_eval's (p = 0.9, graded gains), prefeval's ``trec_rbp``; the name ``rbp``
alone is prefeval's own RBP (γ = 0.5, binary; in the default measure list), and trec_eval's is named
``rbp.p=0.9``, through a nickname (``all_trec``), or on trec_eval's command line
(:func:`read_as_written`). Two rows are lines of trec_eval's output that are
not measures (:data:`LAYOUT`): ``runid`` (the run's tag, summary only) and ``relstring`` (the
judgments of the first ten documents, per query only). ``gm_map``, ``gm_bpref`` and ``num_q`` are
printed on the summary only, as trec_eval prints them. ``dcg``, ``ideal_dcg`` and ``yaap`` are
trec_eval 10.0's too, but not in its ``all_trec`` (:attr:`Row.all_trec`).

Names are read case-insensitively, and in their printed form too, wherever prefeval reads a name;
:func:`read_as_written` reads one as trec_eval's own command line does (``prefeval trec_eval``).

Each measure is printed under the name trec_eval prints (:func:`spell`): a list measure as ``P_5``
(cut-offs as integers, recall levels and multiples with two decimals, ``%3.2f``), a measure given its
parameter as the name, ``_`` and the parameter as it was typed (``set_F_0.5``, ``ndcg_1=3.5,2=9``:
:attr:`~prefeval.measures.foreign.rows.Translation.printed`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import NamedTuple, Protocol

from prefeval.errors import UsageError
from prefeval.io.numbers import is_number
from prefeval.measures.foreign.rows import CUTOFF, Translation

TOOL = "trec_eval"
RUNID, RELSTRING = "runid", "relstring"
LAYOUT = (RUNID, RELSTRING)
"""The lines of trec_eval's output that are not measures."""
LEVELS = "#"
"""In :attr:`Row.pairs`: the integer names of trec_eval's ``name.L=G`` pairs (a gain map)."""

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(level / 10 for level in range(11))
R_MULTIPLES = tuple(level / 5 for level in range(1, 11))
RELSTRING_LENGTH = 10
"""trec_eval's ``relstring`` shows the judgments of the first ten documents, unless given a length."""


def _integer(value: float) -> str:
    return str(int(value))


def _two_decimals(value: float) -> str:
    return f"{value:3.2f}"


class Row(NamedTuple):
    """One of trec_eval's measures (module docstring).

    ``family``: the prefeval family (None for a line of :data:`LAYOUT`). ``parameter``: the prefeval
    parameter that the text after the dot sets (None: the measure takes none); ``defaults``: the values
    of that parameter a bare name stands for (a list; empty: the bare name is one measure). ``fixed``:
    the parameter values (texts, by prefeval name) the name stands for (``set_P`` is ``p@0``).
    ``pairs``: the names of ``name.a=b`` parameters, by trec_eval name (:data:`LEVELS`: a gain
    map). ``printed``: how a value of a list is printed in its name (``P_5``, ``iprec_at_recall_0.50``).
    ``per_query`` and ``in_summary``: whether
    trec_eval prints the measure on per-query lines and on the summary. ``following``: the parameters
    that numbers after the first set, in order (utility's coefficients ``utility.1,-1,0,0``);
    ``unnamed``: parameters set by an option of trec_eval, not by the name (utility's collection size,
    ``-N``). ``joined``: the values after the dot, separated by commas, are one list, the parameter's
    values separated by ``;`` (11pt_avg's recall levels: ``11pt_avg.0.2,0.5,0.8`` is
    ``iprec_avg@0.2;0.5;0.8,0.5``). ``all_trec``: whether the nickname ``all_trec`` names it
    (trec_eval 10.0's ``measures.c`` leaves out ``dcg``, ``ideal_dcg`` and ``yaap``, and the measures
    of preference judgments and of judgment groups, which read other judgments than a qrels:
    ``all_prefs``, ``prefs`` and ``qrels_jg`` name those)."""

    name: str
    family: str | None
    parameter: str | None = None
    defaults: tuple = ()
    fixed: dict[str, str] = {}
    pairs: dict[str, str] = {}
    printed: Callable[[float], str] = _integer
    per_query: bool = True
    in_summary: bool = True
    following: tuple[str, ...] = ()
    unnamed: tuple[str, ...] = ()
    joined: bool = False
    all_trec: bool = True

    def shown(self) -> str:
        """How the name is written, with placeholders: ``map_cut[.k,...]``, ``ndcg[.L=G,...]``."""
        if self.parameter is not None:
            return f"{self.name}[.{self.parameter}{',...' if self.defaults or self.joined else ''}]"
        if self.pairs:
            return f"{self.name}[.{','.join('L=G' if key == LEVELS else f'{key}=...' for key in self.pairs)}]"
        return self.name

    def example(self) -> str:
        """The name written out with an example parameter, as a user types it: ``map_cut.10``,
        ``iprec_at_recall.0.5``, ``ndcg.1=3``, ``rbp.p=0.7``, ``set_F.0.5``."""
        if self.parameter is not None:
            return f"{self.name}.{_EXAMPLES.get(self.parameter, '10')}"
        if self.pairs:
            return f"{self.name}." + ",".join("1=3" if key == LEVELS else f"{key}=0.7" for key in self.pairs)
        return self.name


_EXAMPLES = {CUTOFF: "10", "recall": "0.5", "f": "0.2", "a": "1,-1,0,0", "beta": "0.5", "length": "20",
             "levels": "0.2,0.5,0.8"}
_GAINS = {LEVELS: "gains"}
_SET = {CUTOFF: "0"}
_TREC_EVAL_10_ROUNDING = {"round_from": "0.5"}

ROWS: tuple[Row, ...] = (
    Row(RUNID, None, per_query=False),
    Row("num_q", "num_q", per_query=False),
    Row("num_ret", "num_ret"),
    Row("num_rel", "num_rel"),
    Row("num_rel_ret", "num_rel_ret"),
    Row("map", "ap"),
    Row("gm_map", "gm_ap", per_query=False),
    Row("Rprec", "rp"),
    Row("bpref", "bpref"),
    Row("recip_rank", "rr"),
    Row("iprec_at_recall", "iprec", "recall", RECALL_LEVELS, _TREC_EVAL_10_ROUNDING, printed=_two_decimals),
    Row("P", "p", CUTOFF, TREC_CUTOFFS),
    Row(RELSTRING, None, "length", in_summary=False),
    Row("recall", "r", CUTOFF, TREC_CUTOFFS),
    Row("infAP", "infap"),
    Row("gm_bpref", "gm_bpref", per_query=False),
    Row("Rprec_mult", "rp_mult", "f", R_MULTIPLES, printed=_two_decimals),
    Row("utility", "utility", "a", following=("b", "c", "d"), unnamed=("N",)),
    Row("11pt_avg", "iprec_avg", "levels", fixed={"levels": "11", **_TREC_EVAL_10_ROUNDING}, joined=True),
    Row("binG", "binary_gain_shortfall"),
    Row("G", "gain_shortfall", pairs=_GAINS),
    Row("dcg", "dcg", pairs=_GAINS, all_trec=False),
    Row("ideal_dcg", "ideal_dcg", pairs=_GAINS, all_trec=False),
    Row("ndcg", "ndcg", pairs=_GAINS),
    Row("ndcg_rel", "ndcg_rel", pairs=_GAINS),
    Row("Rndcg", "rndcg", pairs=_GAINS),
    Row("ndcg_cut", "ndcg", CUTOFF, TREC_CUTOFFS),
    Row("map_cut", "ap", CUTOFF, TREC_CUTOFFS),
    Row("relative_P", "relative_p", CUTOFF, TREC_CUTOFFS),
    Row("success", "success", CUTOFF, (1, 5, 10)),
    Row("set_P", "p", fixed=_SET),
    Row("set_relative_P", "relative_p", fixed=_SET),
    Row("set_recall", "r", fixed=_SET),
    Row("set_map", "set_ap"),
    Row("set_F", "f", "weight", fixed=_SET),
    Row("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    Row("prefs_num_prefs_poss", "prefs_num_prefs_poss", all_trec=False),
    Row("prefs_num_prefs_ful", "prefs_num_prefs_ful", all_trec=False),
    Row("prefs_num_prefs_ful_ret", "prefs_num_prefs_ful_ret", all_trec=False),
    Row("prefs_simp", "prefs_simp", all_trec=False),
    Row("prefs_pair", "prefs_pair", all_trec=False),
    Row("prefs_avgjg", "prefs_avgjg", all_trec=False),
    Row("prefs_avgjg_Rnonrel", "prefs_avgjg_rnonrel", all_trec=False),
    Row("prefs_simp_ret", "prefs_simp_ret", all_trec=False),
    Row("prefs_pair_ret", "prefs_pair_ret", all_trec=False),
    Row("prefs_avgjg_ret", "prefs_avgjg_ret", all_trec=False),
    Row("prefs_avgjg_Rnonrel_ret", "prefs_avgjg_rnonrel_ret", all_trec=False),
    Row("prefs_simp_imp", "prefs_simp_imp", all_trec=False),
    Row("prefs_pair_imp", "prefs_pair_imp", all_trec=False),
    Row("prefs_avgjg_imp", "prefs_avgjg_imp", all_trec=False),
    Row("map_avgjg", "ap_avgjg", all_trec=False),
    Row("P_avgjg", "p_avgjg", CUTOFF, TREC_CUTOFFS, all_trec=False),
    Row("Rprec_mult_avgjg", "rp_mult_avgjg", "f", R_MULTIPLES, printed=_two_decimals, all_trec=False),
    Row("yaap", "yaap", all_trec=False),
    Row("rbp", "trec_rbp", pairs={"p": "p", **_GAINS}),
    Row("rbp_resid", "trec_rbp_resid", pairs={"p": "p"}),
    Row("unj", "unj", CUTOFF, (5, 10, 20)),
)
"""trec_eval's measures, in its order (module docstring)."""

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": tuple(row.name for row in ROWS if row.all_trec),
    "all_prefs": ("runid", "num_q", *(row.name for row in ROWS if row.name.startswith("prefs_"))),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
"""trec_eval's nicknames for lists of measures (``all_trec`` is every row it names:
:attr:`Row.all_trec`; the others as trec_eval 10.0's ``measures.c`` lists them)."""

BY_NAME = {row.name.lower(): row for row in ROWS}
"""Every row by its name, lower-cased (prefeval reads names case-insensitively)."""
PLACE = {row.name: place for place, row in enumerate(ROWS)}
"""Each row's place in trec_eval's order."""
_BY_FAMILY = {family: [row for row in ROWS if row.family == family]
              for family in dict.fromkeys(row.family for row in ROWS if row.family is not None)}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_]*$")
_PAIR_START = re.compile(r"^\s*(?:-?\d+|p)\s*=")
"""The start of a trec_eval pair: a grade (``2=9``) or rbp's persistence (``p=0.95``)."""


def read(text: str) -> list[Translation] | None:
    """The prefeval measures (and lines of :data:`LAYOUT`, family None) a trec_eval name stands for,
    in order: a nickname's measures, a list for a bare list name or a list of values
    (``P.5,10``), one otherwise; None when ``text`` is not a trec_eval name. The parameters may follow
    a dot, as trec_eval reads them, or an underscore, as it prints them (``P_10``, ``set_F_0.5``,
    ``utility_1,-1,0,0``, ``rbp_p=0.8``). A trec_eval name used as trec_eval refuses it is a
    :class:`UsageError`."""
    text = text.strip()
    split = _split(text)
    if split is None:
        return None
    row, given = split
    if row is None:
        return [translation for member in NICKNAMES[given] for translation in read(member)]
    if given is None:
        return [_bare(row, value) for value in row.defaults] if row.defaults else [_bare(row)]
    if not given:
        raise UsageError(f"{text}: trec_eval's {row.name} expects parameters after '.'")
    if _PAIR_START.match(given) or (row.pairs and "=" in given):
        return [_with_pairs(row, given, text)]
    if row.parameter is None:
        raise UsageError(f"{text}: trec_eval's {row.name} takes no parameter")
    if row.defaults:
        return [_with_parameter(row, value, f"{row.name}.{value}") for value in given.split(",")]
    return [_with_parameter(row, given, text)]


def read_as_written(text: str) -> list[Translation]:
    """The measures (and lines) one ``-m`` value stands for as trec_eval itself reads it
    (``trec_eval.c``'s ``mark_measure``): the text before the first dot is one of its measures or
    nicknames spelled exactly (:func:`check_written`), the parameters come after the dot. A value is
    thus one name: ``rbp`` is trec_eval's rbp (not prefeval's), and ``map,P.10`` is no name. A name
    trec_eval reads but whose parameters it refuses is a :class:`UsageError` with the reason
    (:func:`read`)."""
    check_written(text)
    return read(text)


def check_written(text: str) -> None:
    """A :class:`UsageError` ("illegal measure", trec_eval's words) unless ``text`` is one name of
    trec_eval as written on its command line: a measure or nickname spelled exactly (trec_eval compares
    names with ``strcmp``: ``MAP`` and ``P_10`` are not its names), parameters after a dot and only
    for a measure ("improper measure in parameter" when none follow the dot)."""
    name, dot, given = text.partition(".")
    if not ((name in NICKNAMES and not dot) or name in PLACE):
        raise UsageError(f"illegal measure {text!r}: no measure or nickname of trec_eval is spelled so "
                         "(`prefeval measures` lists trec_eval's names)")
    if dot and not given:
        raise UsageError(f"illegal measure {text!r}: improper measure in parameter (parameters follow the dot)")


def _split(text: str) -> tuple[Row | None, str | None] | None:
    """(the row, the parameters' text or None) of a trec_eval name; (None, the nickname) for a
    nickname; None for what is not a trec_eval name."""
    name, dot, given = text.partition(".")
    if _NAME.match(name) and name.lower() in BY_NAME:
        return BY_NAME[name.lower()], (given if dot else None)
    if not dot and text.lower() in NICKNAMES:
        return None, text.lower()
    lowered = text.lower()
    printed = [row for row in ROWS if lowered.startswith(row.name.lower() + "_") and (row.parameter or row.pairs)]
    for row in sorted(printed, key=lambda row: -len(row.name)):
        rest = text[len(row.name) + 1:]
        if rest[:1].isdigit() or rest[:1] in ".-" or (row.pairs and _PAIR_START.match(rest)):
            return row, rest
    return None


def row_of_printed(printed: str) -> Row | None:
    """The row of a name as trec_eval prints it (``P_5``, ``map_cut_10``, ``set_F_0.5``,
    ``relstring_20``): the longest row name it is, or starts with followed by ``_``."""
    found = [row for row in ROWS if printed == row.name or printed.startswith(row.name + "_")]
    return max(found, key=lambda row: len(row.name)) if found else None


def default_list(family: str, names: tuple[str, ...]) -> list[Translation] | None:
    """trec_eval's default list for a bare prefeval family name (or alias) in ``names`` that trec_eval
    has as a list row (``p`` is ``P``, ``r``, whose alias is ``recall``, is ``recall``); None when
    none is."""
    for row in _BY_FAMILY.get(family, ()):
        if row.defaults and row.name.lower() in {name.lower() for name in names}:
            return [_bare(row, value) for value in row.defaults]
    return None


_ATOL = re.compile(r"\s*([+-]?[0-9]+)")


def _atol(text: str) -> int:
    """A cut-off as trec_eval reads it, with C's ``atol``: the integer the text starts with (23 of
    ``23.4``, 1 of ``1e2``), 0 when it starts with none (``.5``, which trec_eval then refuses)."""
    match = _ATOL.match(text)
    return int(match.group(1)) if match else 0


def _bare(row: Row, value: float | None = None) -> Translation:
    """The measure of a row named without parameters (``value``: one of its defaults)."""
    if value is None:
        return Translation(row.family, dict(row.fixed), row.name, row=row.name)
    written = _integer(value) if row.printed is _integer else repr(value)
    return Translation(row.family, {**row.fixed, row.parameter: written}, f"{row.name}_{row.printed(value)}",
                       listed=row.parameter, row=row.name)


def _with_parameter(row: Row, given: str, text: str) -> Translation:
    """The measure of ``row.given``: a list value, or parameters echoed in the printed name."""
    if row.family is None:  # relstring's length
        return Translation(None, {row.parameter: given}, f"{row.name}_{given}", row=row.name, given=(given,))
    texts = given.split(",")
    if row.joined:
        try:
            joined = ";".join(repr(float(value)) for value in texts)  # each a value, never a count (11pt_avg.1)
        except ValueError:
            raise UsageError(f"{text}: trec_eval's {row.name} takes numbers") from None
        return Translation(row.family, {**row.fixed, row.parameter: joined}, f"{row.name}_{given}", row=row.name,
                           given=tuple(texts))
    if len(texts) > 1 + len(row.following):
        raise UsageError(f"{text}: trec_eval's {row.name} takes {1 + len(row.following)} parameter(s)")
    values = {**row.fixed, row.parameter: texts[0], **dict(zip(row.following, texts[1:]))}
    if row.defaults and row.printed is _integer:  # a cut-off, read as trec_eval reads it
        if not is_number(given.strip()):
            raise UsageError(f"{text}: trec_eval's {row.name} takes numbers")
        shown = values[row.parameter] = str(_atol(given))
        return Translation(row.family, values, f"{row.name}_{shown}", listed=row.parameter, row=row.name,
                           given=(given,))
    if row.defaults:
        try:
            shown = row.printed(float(given))
        except ValueError:
            raise UsageError(f"{text}: trec_eval's {row.name} takes numbers") from None
        return Translation(row.family, values, f"{row.name}_{shown}", listed=row.parameter, row=row.name,
                           given=(given,))
    return Translation(row.family, values, f"{row.name}_{given}", row=row.name, given=tuple(texts))


def _with_pairs(row: Row, pairs: str, text: str) -> Translation:
    """trec_eval's ``name.a=b,c=d``: integer names are a gain map (``L:G``), others parameters."""
    if not row.pairs:
        raise UsageError(f"{text}: trec_eval's {row.name} has no name=value parameters")
    values = dict(row.fixed)
    gains: list[str] = []
    for pair in pairs.split(","):
        key, equals, value = (part.strip() for part in pair.partition("="))
        if not equals:
            raise UsageError(f"{text}: trec_eval's parameters are name=value pairs, not {pair!r}")
        if re.fullmatch(r"-?\d+", key) and LEVELS in row.pairs:
            gains.append(f"{key}:{value}")
        elif key in row.pairs and key != LEVELS:
            values[row.pairs[key]] = value
        else:
            known = ", ".join("L (a grade)" if name == LEVELS else name for name in row.pairs)
            raise UsageError(f"{text}: trec_eval's {row.name} has no parameter {key!r} (parameters: {known})")
    if gains:
        values[row.pairs[LEVELS]] = ";".join(gains)
    return Translation(row.family, values, f"{row.name}_{pairs}", row=row.name, given=(pairs,))


def check_given(row_name: str, given: tuple[str, ...], text: str) -> None:
    """A :class:`UsageError` for the parameters ``given`` to one naming of a measure (``text``) that
    trec_eval refuses, with trec_eval's reason: a cut-off that is not a positive integer ("Negative
    cutoff detected": trec_eval reads it with ``atol``, so ``P.0`` and ``P.0.5``), a value listed twice
    ("duplicate cutoffs detected", ``map_cut.5,5``, ``iprec_at_recall.0.5,0.50``), utility without
    its four coefficients ("improper number of coefficients", ``utility.1,2``)."""
    row = BY_NAME[row_name.lower()]
    if not given or row.pairs and _PAIR_START.match(given[0]):
        return
    if row.defaults:
        try:
            values = [_atol(value) if row.printed is _integer else float(value) for value in given]
        except ValueError:
            values = [0.0]
        if row.printed is _integer and min(values) <= 0:
            raise UsageError(f"{text}: trec_eval refuses it: Negative cutoff detected (cut-offs are integers >= 1)")
        if len(set(values)) < len(values):
            raise UsageError(f"{text}: trec_eval refuses it: duplicate cutoffs detected")
    if row.following and len(given) != 1 + len(row.following):
        raise UsageError(f"{text}: trec_eval refuses it: improper number of coefficients "
                         f"({row.name} takes {1 + len(row.following)})")


def is_pairs(token: str) -> bool:
    """Whether ``token`` is a trec_eval name whose parameters are one list that the texts after a
    comma continue: ``a=b`` pairs (``ndcg.1=3``, continued in ``ndcg.1=3,2=9``) or the values of a
    :attr:`Row.joined` list (``11pt_avg.0.2``, continued in ``11pt_avg.0.2,0.5,0.8``)."""
    split = _split(token.strip())
    if split is None or split[0] is None or not split[1]:
        return False
    row, given = split
    return (bool(row.pairs) and bool(_PAIR_START.match(given))) or row.joined


def continues_pairs(token: str) -> bool:
    """Whether ``token`` (after a comma) may continue the list of a name of :func:`is_pairs`: one more
    ``a=b`` pair, or a number."""
    return bool(_PAIR_START.match(token)) or is_number(token.strip())


class _Parametrised(Protocol):
    """What :func:`spell` reads of a measure (a :class:`~prefeval.measures.base.Measure`)."""

    family: str
    values: tuple

    def all_parameters(self) -> tuple: ...


def spell(measure: _Parametrised) -> str | None:
    """trec_eval's name of a prefeval measure, as trec_eval prints it; None when trec_eval has none
    (preferences, prefeval's ``rbp``, ``rr@10``, ``success@0``, ``iprec@0.5`` with prefeval's
    rounding, a measure with ``rel=`` or ``judged_only=``).

    The name is that of the first row of the measure's family that fits it: a row with a parameter
    fits a measure whose other parameters are the row's (``ap@10`` → ``map_cut_10``, ``p@10`` →
    ``P_10``, ``iprec@0.5,0.5`` → ``iprec_at_recall_0.50``, ``rp_mult@0.2`` → ``Rprec_mult_0.20``: a
    level or factor with two decimals, as trec_eval prints it, when that reads back); a row without
    one fits a measure whose parameters are all the row's (``ap`` → ``map``, ``p@0`` → ``set_P``);
    a row with pairs writes them (``ndcg@gains=1:3;2:9`` → ``ndcg_1=3,2=9``, ``trec_rbp@0.8`` →
    ``rbp_p=0.8``). :func:`read` reads the name back as the same values.
    """
    params = measure.all_parameters()
    values = dict(zip((param.name for param in params), measure.values))
    if any(values[param.name] is not None for param in params if param.keyword and param.name not in _NAMED):
        return None  # rel= or judged_only=, which trec_eval's names do not say
    for row in _BY_FAMILY.get(measure.family, ()):
        implied = {param.name: values[param.name] if param.name in row.unnamed else
                   _value(param, row.fixed.get(param.name)) for param in params}
        if row.pairs:
            spelled = _pairs_spelling(row, params, values, implied)
            if spelled is not None:
                return spelled
            continue
        if values == implied and not row.defaults:
            return row.name
        if row.parameter is None or row.parameter not in values:
            continue
        if row.following:  # every parameter the name takes, written out
            shown = (row.parameter, *row.following)
            if {**implied, **{name: values[name] for name in shown}} == values:
                by_name = {param.name: param for param in params}
                return f"{row.name}_" + ",".join(by_name[name].written(values[name]) for name in shown)
            continue
        value = values[row.parameter]
        if {**implied, row.parameter: value} != values:
            continue
        written = next(param for param in params if param.name == row.parameter).written(value)
        if row.joined:  # a list of values, as trec_eval takes it after the dot (11pt_avg_0.2,0.5,0.8)
            if ";" in written or not isinstance(value, int):
                return f"{row.name}_{written.replace(';', ',')}"
            continue
        if not row.defaults:  # one parameter, as prefeval writes it (set_F_0.5)
            return f"{row.name}_{written}"
        if _listable(row, value):
            return f"{row.name}_{row.printed(value)}"
    return None


_NAMED = {row.parameter for row in ROWS if row.parameter} | {name for row in ROWS for name in row.pairs.values()}
"""The prefeval parameters a trec_eval name can set (as its parameter, or in its pairs)."""


def _value(param, text: str | None):
    """A parameter's value: the text given (read as the parameter reads it), else its default."""
    return param.default if text is None else param.parse(text, "")


def _listable(row: Row, value) -> bool:
    """Whether ``value`` is written in a list row's name so that it reads back: a positive, finite cut-off,
    or a level whose two decimals are exact."""
    if value is None or not math.isfinite(value) or (row.parameter == CUTOFF and value <= 0):
        return False
    return float(row.printed(value)) == value if row.printed is _two_decimals else True


def _pairs_spelling(row: Row, params: tuple, values: dict, implied: dict) -> str | None:
    """``name`` or ``name_a=b,...`` for a row of pairs, when the measure's other parameters are the row's."""
    by_name = {param.name: param for param in params}
    named = set(row.pairs.values())
    if {key: value for key, value in values.items() if key not in named} != \
            {key: value for key, value in implied.items() if key not in named}:
        return None
    written = []
    for key, ours in row.pairs.items():
        value = values.get(ours)
        if key == LEVELS:
            if value is not None:
                written += [pair.replace(":", "=") for pair in by_name[ours].written(value).split(";")]
        elif value != by_name[ours].default:
            written.append(f"{key}={by_name[ours].written(value)}")
    return row.name + ("_" + ",".join(written) if written else "")
