"""trec_eval's measures as trec_eval 10.0 reads, expands, orders and names them, for ``--format trec_eval``.

In the trec_eval layout, ``-m`` takes trec_eval's names, as trec_eval does: a nickname (``official``,
``set``, ``all_trec``), or a measure with optional parameters after a dot (``P``, ``P.5,10``,
``iprec_at_recall.0.25``, ``set_F.0.5``, ``rbp.p=0.8``, ``ndcg.1=3.5,2=9``, ``utility.1,-1,0,0``).
A measure without parameters takes trec_eval's defaults: ``P``, ``recall``, ``map_cut``, ``ndcg_cut``
and ``relative_P`` are measured at 5, 10, 15, 20, 30, 100, 200, 500 and 1000; ``success`` at 1, 5
and 10; ``unj`` at 5, 10 and 20; ``iprec_at_recall`` at the 11 recall levels 0.0, 0.1, ..., 1.0;
``Rprec_mult`` at 0.2, 0.4, ..., 2.0. Every item is printed under trec_eval's name: a list measure as
``P_5`` (cut-offs as integers, recall levels and multiples with two decimals, ``%3.2f``), a measure
given parameters as its name, ``_`` and the parameters as written (``set_F_0.5``, ``ndcg_1=3.5,2=9``).

Items come in trec_eval's order (its table of measures), whatever the order of ``-m``; a measure
named twice keeps its last parameters. ``rbp`` here is trec_eval's (p = 0.9, graded gains):
prefeval's ``trec_rbp``; prefeval's own ``rbp`` is the reference's (γ = 0.5, binary).

Two items are not measures: ``runid`` (the run's tag, summary only) and ``relstring`` (the judgments
of the first ten documents, per query only); the layout writes them (:mod:`prefeval.report.trec_eval`).
``gm_map``, ``gm_bpref`` and ``num_q`` are printed on the summary only, as trec_eval prints them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from prefeval.errors import UsageError

RUNID, RELSTRING = "runid", "relstring"
"""The two items of the layout that are not measures."""

TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(level / 10 for level in range(11))
R_MULTIPLES = tuple(level / 5 for level in range(1, 11))


class TrecEvalItem(NamedTuple):
    """One line kind of the layout: its printed ``name``, and the prefeval measure it is (its name),
    None for ``runid`` and ``relstring``; printed per query and on the summary, or not."""

    name: str
    measure: str | None
    per_query: bool = True
    in_summary: bool = True


class _Entry(NamedTuple):
    """How one trec_eval measure expands: into one prefeval measure per value of a list (``spell``
    a value into a prefeval name, ``show`` it in the printed name), or into one measure (``spell``
    the parameter text, or None without one)."""

    name: str
    spell: Callable[[str | None], str] | None
    values: tuple = ()
    show: Callable[[str], str] = str
    per_query: bool = True
    in_summary: bool = True


def _fixed(prefeval: str) -> Callable[[str | None], str]:
    def spell(params: str | None) -> str:
        if params is not None:
            raise UsageError(f"trec_eval's measure for prefeval {prefeval} takes no parameters")
        return prefeval
    return spell


def _gains(prefeval: str, prefix: str = "") -> Callable[[str | None], str]:
    """trec_eval's gain pairs ``1=3.5,2=9`` as prefeval's ``gains=1:3.5;2:9`` (and ``p=0.8`` for rbp)."""
    def spell(params: str | None) -> str:
        if params is None:
            return prefeval
        positional, gains = [], []
        for pair in params.split(","):
            key, equals, value = pair.partition("=")
            if not equals:
                raise UsageError(f"{prefeval}: trec_eval's parameters are name=value pairs, not {pair!r}")
            if key == "p" and prefix:
                positional.append(value)
            else:
                gains.append(f"{key}:{value}")
        texts = positional + ([f"gains={';'.join(gains)}"] if gains else [])
        return prefeval + "@" + ",".join(texts)
    return spell


def _with(prefeval: str, fixed: str = "") -> Callable[[str | None], str]:
    """Parameters written after ``@`` as given (``utility.1,-1,0,0`` → ``utility@1,-1,0,0``)."""
    def spell(params: str | None) -> str:
        given = [text for text in (fixed, params) if text]
        return prefeval + ("@" + ",".join(given) if given else "")
    return spell


def _set_f(params: str | None) -> str:
    """trec_eval's ``set_F.x`` weighs with x where prefeval's F_β weighs with β²: ``f@0,√x``."""
    if params is None:
        return "f@0"
    try:
        weight = float(params)
    except ValueError:
        raise UsageError(f"set_F.{params}: the parameter is a number") from None
    if not weight >= 0:
        raise UsageError(f"set_F.{params}: the parameter is a number >= 0")
    return f"f@0,{math.sqrt(weight)!r}"


def _two_decimals(text: str) -> str:
    return f"{float(text):3.2f}"


_ENTRIES: tuple[_Entry, ...] = (
    _Entry(RUNID, None, per_query=False),
    _Entry("num_q", _fixed("num_q"), per_query=False),
    _Entry("num_ret", _fixed("num_ret")),
    _Entry("num_rel", _fixed("num_rel")),
    _Entry("num_rel_ret", _fixed("num_rel_ret")),
    _Entry("map", _fixed("ap")),
    _Entry("gm_map", _fixed("gm_ap"), per_query=False),
    _Entry("Rprec", _fixed("rp")),
    _Entry("bpref", _fixed("bpref")),
    _Entry("recip_rank", _fixed("rr")),
    _Entry("iprec_at_recall", "iprec@{},0.5".format, RECALL_LEVELS, _two_decimals),
    _Entry("P", "p@{}".format, TREC_CUTOFFS),
    _Entry(RELSTRING, None, in_summary=False),
    _Entry("recall", "r@{}".format, TREC_CUTOFFS),
    _Entry("infAP", _fixed("infap")),
    _Entry("gm_bpref", _fixed("gm_bpref"), per_query=False),
    _Entry("Rprec_mult", "rp_mult@{}".format, R_MULTIPLES, _two_decimals),
    _Entry("utility", _with("utility")),
    _Entry("11pt_avg", _fixed("iprec_avg@11,0.5")),
    _Entry("binG", _fixed("binary_gain_shortfall")),
    _Entry("G", _gains("gain_shortfall")),
    _Entry("ndcg", _gains("ndcg")),
    _Entry("ndcg_rel", _gains("ndcg_rel")),
    _Entry("Rndcg", _gains("rndcg")),
    _Entry("ndcg_cut", "ndcg@{}".format, TREC_CUTOFFS),
    _Entry("map_cut", "ap@{}".format, TREC_CUTOFFS),
    _Entry("relative_P", "relative_p@{}".format, TREC_CUTOFFS),
    _Entry("success", "success@{}".format, (1, 5, 10)),
    _Entry("set_P", _fixed("p@0")),
    _Entry("set_relative_P", _fixed("relative_p@0")),
    _Entry("set_recall", _fixed("r@0")),
    _Entry("set_map", _fixed("set_ap")),
    _Entry("set_F", _set_f),
    _Entry("num_nonrel_judged_ret", _fixed("num_nonrel_judged_ret")),
    _Entry("rbp", _gains("trec_rbp", prefix="p")),
    _Entry("rbp_resid", _gains("trec_rbp_resid", prefix="p")),
    _Entry("unj", "unj@{}".format, (5, 10, 20)),
)
_BY_NAME = {entry.name: entry for entry in _ENTRIES}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": tuple(entry.name for entry in _ENTRIES),
}
"""trec_eval's nicknames for lists of measures (``all_trec`` is every measure above)."""


def trec_eval_items(specs: Sequence[str], num_docs: int | None = None) -> list[TrecEvalItem]:
    """The layout's items for ``-m`` values written as trec_eval writes them (module docstring),
    in trec_eval's order; no value gives ``official``, trec_eval's default. ``num_docs`` is
    trec_eval's ``-N`` (the collection's size, which ``utility`` reads)."""
    params: dict[str, str | None] = {}
    for spec in specs or ("official",):
        for text in spec.split():
            name, dot, given = text.partition(".")
            if name in NICKNAMES and not dot:
                for member in NICKNAMES[name]:
                    params.setdefault(member, None)
                continue
            if name not in _BY_NAME:
                raise UsageError(f"unknown trec_eval measure {name!r}; trec_eval's measures: "
                                 f"{', '.join(_BY_NAME)} (and the nicknames {', '.join(NICKNAMES)})")
            if dot and not given:
                raise UsageError(f"trec_eval measure {text!r}: parameters expected after '.'")
            params[name] = given if dot else None
    items: list[TrecEvalItem] = []
    for entry in _ENTRIES:
        if entry.name not in params:
            continue
        given = params[entry.name]
        if entry.spell is None:
            items.append(TrecEvalItem(entry.name, None, entry.per_query, entry.in_summary))
        elif entry.values:
            values = given.split(",") if given is not None else [str(value) for value in entry.values]
            items += [TrecEvalItem(f"{entry.name}_{entry.show(value)}", entry.spell(value), entry.per_query,
                                   entry.in_summary) for value in values]
        else:
            measure = entry.spell(given)
            if entry.name == "utility" and num_docs is not None:
                defaults = "1,-1,0,0"
                measure = f"utility@{given or defaults},{num_docs}"
            printed = entry.name + (f"_{given}" if given is not None else "")
            items.append(TrecEvalItem(printed, measure, entry.per_query, entry.in_summary))
    return items
