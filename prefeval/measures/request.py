"""What ``-m`` asks for: the one reading of measure names, the same in every output format.

A ``-m`` value is a list of names (:func:`measure_groups`): separated by commas (prefeval's and
trec_eval's lists, ``ap,p@5,10``, ``P.5,10``) or by whitespace (ir_measures', ``nDCG@10 P@5``). Each
name is read (:func:`read_request`):

1. as prefeval's own (``family[@param[,param]][,keyword=value]``: ``ap@10``, ``rbp@0.8,100``,
   ``p@10,rel=2``), family names and aliases read case-insensitively; except a name that ir_measures
   spells exactly so and means otherwise (``RBP`` is ir_measures' p = 0.8);
2. else as a trec_eval or ir_measures name (:mod:`prefeval.measures.foreign`).

**A name without parameters that trec_eval measures at a list of parameters is that list**, whichever
tool's spelling it is written in: ``P`` (and ``p``: names are case-insensitive) is P at 5, 10, 15,
20, 30, 100, 200, 500 and 1000, as are ``recall`` (and ``r``, whose alias it is), ``map_cut``,
``ndcg_cut`` and ``relative_P``; ``success`` is 1, 5 and 10, ``unj`` 5, 10 and 20,
``iprec_at_recall`` the 11 recall levels and ``Rprec_mult`` 0.2, ..., 2.0 (trec_eval's defaults,
:mod:`prefeval.measures.foreign.trec_eval`). trec_eval's nicknames (``official``, ``set``,
``all_trec``) are their measures. Every other name without parameters is one measure at its defaults
(``ap`` is AP over the whole ranking, ``rbp`` prefeval's RBP with γ = 0.5).

A number after a comma continues the measure before it: another value of a trec_eval list
(``P.5,10``: P_5 and P_10), else the measure's next parameter while it takes more (``rbp@0.8,100``,
``utility.1,-1,0,0``), else the same family with that parameter (``p@5,10``: p@5 and p@10). A
``name=value`` after a comma continues it as a keyword parameter (``p@10,rel=2``); trec_eval's
pairs continue the name they follow (``ndcg.1=3.5,2=9``). Duplicates are dropped, the first kept.

Two of trec_eval's names are lines of its output, not measures (``runid``, ``relstring``): a
request keeps them for the trec_eval layout (:attr:`MeasureRequest.lines`); the other formats have
no place for them. A request also keeps the name each tool prints for a measure named in the
tool's own syntax (:meth:`MeasureRequest.printed`): trec_eval echoes parameters as typed
(``set_F.0.5`` is printed ``set_F_0.5``).

An unknown name is a :class:`~prefeval.errors.UsageError` that suggests the closest names that
parse (:func:`did_you_mean`) and lists the valid ones.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import NamedTuple

from prefeval.errors import UsageError
from prefeval.io.numbers import is_number
from prefeval.measures import foreign
from prefeval.measures.base import REGISTRY, Measure, families, family_syntax
from prefeval.measures.foreign import ir_measures, trec_eval
from prefeval.runtime.notes import note

_KEYWORD = re.compile(r"^\s*[A-Za-z_]+\s*=")
_NAME = re.compile(r"^(?P<family>[A-Za-z][A-Za-z_]*)(?:@(?P<params>.*))?$")
_HEAD = re.compile(r"^\s*(?P<head>[^@(.\s]*?)(?P<rest>(?:_[0-9].*|[@(.].*)?)\s*$", re.DOTALL)
SHOWN_FAMILIES = 13
"""How many families the error about an unknown measure names: those of the default list."""


class Requested(NamedTuple):
    """One item of a request: a measure, or a line of trec_eval's layout (``line``, with its
    ``parameters``: relstring's length); ``tool`` and ``printed``: the tool whose syntax named it and
    what that tool prints for it (None: the name is made from the values). ``row``: the tool's
    measure it was read as; ``naming``: which name of the request it comes from (the numbers after a
    name continue it), typed ``named``; ``given``: the parameters given to the tool's name (none:
    its defaults)."""

    measure: Measure | None
    tool: str | None = None
    printed: str | None = None
    line: str | None = None
    parameters: dict[str, str] = {}
    row: str | None = None
    naming: int = 0
    named: str = ""
    given: tuple[str, ...] = ()


class MeasureRequest(NamedTuple):
    """What ``-m`` asks for (module docstring), item by item in the order given."""

    items: list[Requested]

    @property
    def measures(self) -> list[Measure]:
        """The measures, each once, in the order first asked for."""
        return list(dict.fromkeys(item.measure for item in self.items if item.measure is not None))

    @property
    def lines(self) -> list[Requested]:
        """The lines of trec_eval's layout that are not measures, each once (the first kept)."""
        return list({item.line: item for item in reversed(self.items) if item.line is not None}.values())[::-1]

    def printed(self, tool: str) -> dict[str, str]:
        """What ``tool`` prints for each measure named in its own syntax, by measure name (the first
        time it was named)."""
        names: dict[str, str] = {}
        for item in self.items:
            if item.measure is not None and item.tool == tool and item.printed is not None:
                names.setdefault(item.measure.name, item.printed)
        return names


NO_REQUEST = MeasureRequest([])
"""No ``-m``: a request of nothing (a writer given it names the evaluation's measures)."""


def covering(request: MeasureRequest, measures: Iterable[Measure]) -> MeasureRequest:
    """``request``, or the request of ``measures`` (by their names) when it names nothing: what a
    writer names the measures of an evaluation made from measure objects (the Python API)."""
    return request if request.items else read_request([measure.name for measure in measures])


def read_request(texts: Iterable[str], num_docs: int | None = None, tool: str | None = None) -> MeasureRequest:
    """Read ``-m`` values (module docstring). ``num_docs`` (trec_eval's ``-N``, the size of the
    collection) is the parameter N of every ``utility`` that does not set it. ``tool``: read each
    value as that tool reads its own ``-m`` rather than by the one reading (``trec_eval``: one name
    per value, spelled as trec_eval spells it, ``rbp`` trec_eval's:
    :func:`~prefeval.measures.foreign.trec_eval.read_as_written`)."""
    items: list[Requested] = []
    namings = itertools.count()
    for text in texts if tool is not None else ():
        naming = next(namings)
        items += [_requested(translation, tool, text)._replace(naming=naming, named=text)
                  for translation in foreign.TOOLS[tool].read_as_written(text)]
    for group in (group for text in texts if tool is None for group in measure_groups(text)):
        previous: tuple[type[Measure], list[str], str | None, Requested] | None = None
        for token in group:
            if items and items[-1].measure is not None and _KEYWORD.match(token) and "(" not in token \
                    and foreign.read(token) is None:
                last = items[-1]  # name=value continues the measure before it (p@10,rel=2)
                spelled = last.measure.name.split("@", 1)[1].split(",") if "@" in last.measure.name else []
                items[-1] = last._replace(measure=type(last.measure)(*spelled, token.strip()), printed=None)
                previous = None
                continue
            if previous is not None and is_number(token.strip()):
                continued, replaces = _continued(previous, token)
                if replaces:
                    items[-1] = continued
                else:
                    items.append(continued)
                listed = previous[2]
                previous = (type(items[-1].measure), _params_of(items[-1].measure), listed, items[-1])
                continue
            naming = next(namings)
            read = [item._replace(naming=naming, named=token.strip()) for item in _read_token(token)]
            items += read
            last = read[-1]
            previous = (type(last.measure), _params_of(last.measure), _listed(token, last), last) \
                if last.measure is not None and ("@" in last.measure.name or _listed(token, last)) else None
    if num_docs is not None:
        items = [item._replace(measure=_with_collection_size(item.measure, num_docs))
                 if item.measure is not None and item.measure.family == "utility" else item for item in items]
    return MeasureRequest(_settled(items))


def _settled(items: list[Requested]) -> list[Requested]:
    """The items, under trec_eval's rules for its names (as trec_eval reads ``-m``): the parameters
    given to one name must be ones trec_eval takes (:func:`~prefeval.measures.foreign.trec_eval.check_given`);
    a measure takes its parameters from the first name that gives it some, in place of its defaults
    (``-m all_trec -m relstring.20``: relstring of 20 documents; ``-m P -m P.5``: P_5 alone), and a
    later name giving it others is left out, with a note (``-m P.5 -m P.10``: P_5, as trec_eval)."""
    trec_eval_items = [item for item in items if item.tool == trec_eval.TOOL and item.row is not None]
    namings: dict[int, list[Requested]] = {}
    for item in trec_eval_items:
        namings.setdefault(item.naming, []).append(item)
    first: dict[str, int] = {}
    for naming, named in namings.items():
        given = tuple(text for item in named for text in item.given)
        if given:
            trec_eval.check_given(named[0].row, given, named[-1].named)
            first.setdefault(named[0].row, naming)
    kept = []
    for item in items:
        chosen = first.get(item.row) if item.tool == trec_eval.TOOL else None
        if chosen is None or item.naming == chosen:
            kept.append(item)
        elif item.given and item is namings[item.naming][-1]:
            earlier, later = namings[chosen][-1].named, item.named
            note(f"{later}: trec_eval's {item.row} takes its parameters from where they are first given "
                 f"({earlier}), as trec_eval does; {later} is left out (a prefeval name, such as "
                 f"{item.measure.name if item.measure is not None else item.row}, adds it)")
    return list({(item.measure, item.line, item.printed): item for item in reversed(kept)}.values())[::-1] \
        if len(kept) != len(items) else kept


def _read_token(token: str) -> list[Requested]:
    """The items one name stands for."""
    text = token.strip()
    match = _NAME.match(text)
    family = REGISTRY.get(match.group("family").lower()) if match else None
    if family is not None and not ir_measures.takes_precedence(text):
        if match.group("params") is None:
            listed = trec_eval.default_list(family.family, (family.family, *family.aliases))
            if listed is not None:
                return [_requested(translation, trec_eval.TOOL, text) for translation in listed]
        if ir_measures.spelled_as_its_own(text):  # IPrec@0.0: ir_measures prints it as typed
            return [Requested(_parse_spelled(text, text), ir_measures.TOOL, ir_measures.printed(text))]
        return [Requested(_parse_spelled(text, text))]
    found = foreign.read(text)
    if found is None:
        raise _unknown(text)
    tool, translations = found
    return [_requested(translation, tool, text) for translation in translations]


def _requested(translation: foreign.Translation, tool: str, text: str) -> Requested:
    if translation.family is None:  # a line of trec_eval's layout
        return Requested(None, tool, translation.printed, _line_name(translation.printed), dict(translation.values),
                         translation.row, given=translation.given)
    family = REGISTRY.get(translation.family)
    if family is None:
        raise _unknown(text)
    measure = _parse_spelled(text, translation.spelling(family, text))
    return Requested(measure, tool, translation.printed, row=translation.row, given=translation.given)


def _line_name(printed: str) -> str:
    return next(line for line in trec_eval.LAYOUT if printed == line or printed.startswith(line + "_"))


def _listed(token: str, item: Requested) -> str | None:
    """The text a number after ``token`` continues as another value of a trec_eval list (``P.``
    for ``P.5``), None when the number continues the measure's parameters."""
    name, dot, given = token.strip().partition(".")
    row = trec_eval.BY_NAME.get(name.lower())
    if item.tool == trec_eval.TOOL and row is not None and row.defaults and dot and given:
        return f"{name}."
    return None


def _continued(previous: tuple, token: str) -> tuple[Requested, bool]:
    """The item a number after a comma stands for (module docstring), and whether it replaces the
    item before it (the number is that measure's next parameter) rather than following it."""
    family, params, listed, item = previous
    if listed is not None:
        [continued] = _read_token(listed + token.strip())
        return continued._replace(naming=item.naming, named=f"{item.named},{token.strip()}"), False
    positional = [p for p in family.parameters if not p.keyword]
    if len(params) < len(positional):
        params = params + [token.strip()]
        printed = f"{item.printed},{token.strip()}" if item.printed is not None else None
        return item._replace(measure=family(*params), printed=printed, given=item.given + (token.strip(),),
                             named=f"{item.named},{token.strip()}"), True
    params = [token.strip()] if len(positional) == 1 else params[:-1] + [token.strip()]
    return Requested(family(*params), naming=item.naming, named=f"{item.named},{token.strip()}"), False


def _params_of(measure: Measure) -> list[str]:
    """The positional parameters written in a measure's name."""
    if "@" not in measure.name:
        return []
    return [text for text in measure.name.split("@", 1)[1].split(",") if "=" not in text]


def _with_collection_size(measure: Measure, num_docs: int) -> Measure:
    """``utility`` with N = ``num_docs`` where it is not set."""
    if measure.param("N"):
        return measure
    params = measure.all_parameters()
    texts = [param.written(value) for param, value in zip(params, measure.values) if not param.keyword]
    texts[[param.name for param in params].index("N")] = str(num_docs)
    return type(measure)(*texts)


def read_as(tool: str, text: str) -> list[Measure]:
    """The measures ``text`` stands for as ``tool`` reads it, by its table alone (trec_eval's ``rbp`` is
    its own, prefeval's ``trec_rbp``): what a tool's printed name means to the tool."""
    module = foreign.TOOLS[tool]
    found = module.read(text)
    if found is None:
        raise UsageError(f"{text}: not a name of {tool}")
    translations = found if isinstance(found, list) else [found]
    return [item.measure for item in (_requested(translation, tool, text) for translation in translations)
            if item.measure is not None]


def parse_measures(texts: Iterable[str]) -> list[Measure]:
    """The measures ``-m`` values ask for (:func:`read_request`), each once, in order."""
    return read_request(texts).measures


def parse_measure(text: str) -> Measure:
    """The one measure a name such as ``p@10``, ``rbp@0.8,100``, ``sgnLP``, ``map_cut.10`` or
    ``RBP(p=0.8)`` stands for; a :class:`UsageError` for an unknown name (listing the valid ones) or
    one that stands for several measures (``P``: trec_eval's list of cut-offs)."""
    try:  # one name, commas and all (compat@0.95,True), before a list (P.5,10)
        read = _read_token(text)
        if len(read) == 1 and read[0].measure is not None:
            return read[0].measure
    except UsageError:
        pass
    request = read_request([text])
    measures = request.measures
    if len(measures) != 1 or len(request.items) != 1:
        shown = ", ".join(item.printed or item.measure.name for item in request.items[:3])
        more = ", ..." if len(request.items) > 3 else ""
        raise UsageError(f"{text.strip()} stands for {len(request.items)} measures ({shown}{more}): name one")
    return measures[0]


def standard_spelling(text: str) -> str:
    """prefeval's spelling of a measure name: ``map_cut.10`` -> ``ap@10``, ``RBP(p=0.8)@10`` ->
    ``rbp@0.8,10``; a prefeval name (or an unknown one) comes back as it is."""
    try:
        return parse_measure(text).name
    except UsageError:
        return text.strip()


def _parse_spelled(text: str, spelled: str) -> Measure:
    match = _NAME.match(spelled)
    family = REGISTRY.get(match.group("family").lower()) if match else None
    if family is None:
        raise _unknown(text)
    params = match.group("params")
    if params is not None and not params:
        raise UsageError(f"{text}: parameters expected after '@'")
    return family(*([] if params is None else params.split(",")))


def _unknown(text: str) -> UsageError:
    suggestions = did_you_mean(text) if not _SUGGESTING else []
    listed = ", ".join(suggestions[:-1]) + " or " + suggestions[-1] if len(suggestions) > 1 else "".join(suggestions)
    hint = f"did you mean {listed}? " if suggestions else ""
    shown = [family_syntax(family) for family in families()][:SHOWN_FAMILIES]
    return UsageError(
        f"unknown measure {text!r}; {hint}valid measures include {', '.join(shown)}; `prefeval measures` lists "
        f"all {len(families())}, with their trec_eval and ir_measures names"
    )


def did_you_mean(text: str, count: int = 3) -> list[str]:
    """Names close to an unknown one that parse (``ndgc@10`` → ``ndcg@10``): the name's family part is
    matched (difflib's similarity) against every family name, alias, and trec_eval or ir_measures
    name, and what follows it (parameters, a cut-off) is kept; a candidate is offered only when it
    reads as a measure (``map@10`` is not trec_eval's syntax, so it suggests ``ap@10``)."""
    import difflib  # only a mistyped name comes here

    match = _HEAD.match(text)
    head, rest = (match.group("head"), match.group("rest")) if match else (text, "")
    names: dict[str, str] = {}  # prefeval's own spelling first, where two tools share a name
    for name in [f.family for f in families()] + [a for f in families() for a in f.aliases] + foreign.tool_names():
        names.setdefault(name.lower(), name)
    close = difflib.get_close_matches(head.lower(), list(names), n=len(names), cutoff=0.75)
    return [candidate for candidate in (names[name] + rest for name in close) if _parses(candidate)][:count]


_SUGGESTING: list[bool] = []
"""Not empty while :func:`did_you_mean` tries its candidates (which then fail without suggestions)."""


def _parses(text: str) -> bool:
    _SUGGESTING.append(True)
    try:
        read_request([text])
    except UsageError:
        return False
    finally:
        _SUGGESTING.pop()
    return True


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
        if joined and trec_eval.continues_pairs(token) and trec_eval.is_pairs(joined[-1]):
            joined[-1] += "," + token.strip()
        else:
            joined.append(token)
    return joined


def split_measure_list(text: str) -> list[str]:
    """The names of a ``-m`` value, in order (:func:`measure_groups`, flattened)."""
    return [token for group in measure_groups(text) for token in group]


def layout_name(measure: Measure, tool: str, printed: dict[str, str] | None = None) -> str:
    """The name a tool's layout prints for ``measure``: what the tool printed for it as it was named
    (``printed``, by measure name), else the tool's name of it, else prefeval's, written with its
    parameters where the tool names another measure so (prefeval's ``rbp`` is ``rbp@0.5`` beside
    trec_eval's ``rbp``)."""
    if printed and measure.name in printed:
        return printed[measure.name]
    spelled = foreign.spell(measure, tool)
    if spelled is not None:
        return spelled
    if measure.name.lower() in {row.name.lower() for row in foreign.TOOLS[tool].ROWS}:
        return _written_in_full(measure)
    return measure.name


def _written_in_full(measure: Measure) -> str:
    """prefeval's name with its first positional parameter written out (``rbp@0.5``)."""
    positional = [(param, value) for param, value in zip(measure.all_parameters(), measure.values)
                  if not param.keyword]
    return f"{measure.family}@{positional[0][0].written(positional[0][1])}" if positional else measure.name


def request_names(request: MeasureRequest, tool: str) -> dict[str, str]:
    """Every measure of a request by prefeval name, as ``tool``'s layout prints it (:func:`layout_name`)."""
    printed = request.printed(tool)
    return {measure.name: layout_name(measure, tool, printed) for measure in request.measures}


__all__ = ["NO_REQUEST", "MeasureRequest", "Requested", "covering", "did_you_mean", "layout_name", "measure_groups",
           "parse_measure", "parse_measures", "read_as", "read_request", "request_names", "split_measure_list",
           "standard_spelling"]
