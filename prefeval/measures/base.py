"""What a measure is, and the one registry of them (names are read by :mod:`prefeval.measures.request`).

A measure is a small declarative class: a family name (``p``), aliases, typed parameters written after
``@`` and separated by commas (``p@10``, ``rbp@0.8,100``), a kind (metric or preference), a one-line
summary, a citation, the range of its values, and a docstring with its formula; and one vectorised
method. Adding a measure means adding one class, decorated with :func:`register`, in one place (and its
name in :data:`~prefeval.measures.order.FAMILY_ORDER`, which says where ``prefeval measures`` lists it).
Every registered family is then checked by ``tests/test_common.py``.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np

from prefeval.errors import UsageError
from prefeval.io.keys import METRIC, PREFERENCE
from prefeval.io.numbers import INTEGER, NUMBER, is_number
from prefeval.measures.aggregators import MEAN, Aggregator
from prefeval.measures.foreign import trec_eval
from prefeval.measures.order import FAMILY_ORDER
from prefeval.ranking.positions import Positions


class Param(NamedTuple):
    """A parameter written after ``@``: its name, type, default and accepted range (inclusive)."""

    name: str
    type: type
    default: float
    low: float = -np.inf
    high: float = np.inf
    low_open: bool = False
    high_open: bool = False
    meaning: str = ""
    keyword: bool = False
    """Given only as ``name=value`` after the positional parameters (``ndcg@10,gains=1:3.5;2:9``,
    ``p@10,rel=2``); its default is typically None, "not set"."""
    parser: Callable[[str, str], Any] | None = None
    """For a parameter that is not a number: (text, measure name) -> value, raising UsageError."""
    text: Callable[[Any], str] | None = None
    """For a parameter that is not a number: value -> its canonical text in the measure's name."""

    def parse(self, text: str, measure: str) -> Any:
        """The value written ``text``: an integer in ASCII digits, or a number as C's ``strtod``
        reads one (:mod:`prefeval.io.numbers`; not Python's ``1_000`` or other scripts' digits),
        within the range; NaN never is. A parameter with a :attr:`parser` reads its own syntax."""
        if self.parser is not None:
            return self.parser(text.strip(), measure)
        written = text.strip()
        if not is_number(written, INTEGER if self.type is int else NUMBER):
            kind = "an integer" if self.type is int else "a number"
            raise UsageError(f"{measure}: {self.name} must be {kind}, not {_shortened(text)!r}")
        value = self.type(written)
        too_low = value < self.low or (self.low_open and value == self.low)
        too_high = value > self.high or (self.high_open and value == self.high)
        if too_low or too_high or value != value:
            raise UsageError(f"{measure}: {self.name} must be in {self.describe_range()}, not {_shortened(written)}")
        return value

    def written(self, value: Any) -> str:
        """The canonical text of ``value``."""
        return self.text(value) if self.text is not None else _number_text(value)

    def describe_range(self) -> str:
        if self.parser is not None:
            return "see the measure's description"
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"{left}{_number_text(self.low)}, {_number_text(self.high)}{right}"


RELEVANCE_LEVEL = Param(
    "rel", float, None, low=0.0, low_open=True, keyword=True,
    meaning="this measure's relevance level: a document counts when its grade is >= rel (as -l, for this measure)")
"""``rel=L`` on a binary metric (ir_measures' parameter): its own relevance level."""

JUDGED_ONLY = Param(
    "judged_only", int, None, low=0, high=1, keyword=True,
    meaning="1: rank only the judged documents, the unjudged ones removed (as -J, for this measure)")
"""``judged_only=1`` on a metric (ir_measures' parameter): unjudged documents removed before ranking."""


class Measure(ABC):
    """Base of all measures; see the module docstring. Instances are immutable and hashable by name."""

    family: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    kind: ClassVar[str]
    parameters: ClassVar[tuple[Param, ...]] = ()
    summary: ClassVar[str] = ""
    cite: ClassVar[str]
    """Where the measure comes from, in short: authors, venue and year, and a DOI where there is one
    (``"Diaz and Ferraro, SIGIR 2022, doi:10.1145/3477495.3532033"``). Required: :func:`register`
    refuses a family without one."""
    bounds: ClassVar[tuple[float, float]]
    """The closed range every value lies in, for any input."""
    reads_grades: ClassVar[bool] = False
    """True when the measure reads the grades themselves (as gains, or as the grade levels of graded
    RPP): it sees every document of positive grade, whatever the relevance level. False: binary
    relevance, where a document counts when its grade reaches the relevance level (default: > 0)."""
    reads_judged: ClassVar[bool] = False
    """True when the measure needs the judged documents that are not relevant and the unjudged ones
    (bpref, infAP, Judged@k, ...): its positions carry :attr:`~prefeval.ranking.positions.Positions.others`."""
    reads_intents: ClassVar[bool] = False
    """True when the measure reads the judgments per subtopic of a query (the intent-aware measures,
    :mod:`prefeval.measures.diversity`, and the preferences over intents): its positions carry
    :attr:`~prefeval.ranking.positions.Positions.intents` when the qrels have subtopics."""
    better: ClassVar[int] = 1
    """Which way a value is better: 1 when larger (every measure of relevance), −1 when smaller (a
    popularity bias, an inequality of exposure), 0 when neither (a group's share of exposure): what a
    run's worst-off user group is, for a metric (:func:`prefeval.analyses.groups.worst_off`)."""
    reads_items: ClassVar[str | None] = None
    """The side input of a recommender evaluation that the measure reads (``train``, ``items``,
    ``item-features``, ``item-groups``: :mod:`prefeval.measures.items`), None for none: its values are
    made where each run is ranked (:mod:`prefeval.ranking.items`)."""
    aggregator: ClassVar[Aggregator] = MEAN
    """How the summary line aggregates the per-query values (:mod:`prefeval.measures.aggregators`):
    the mean (the default), the sum (counts such as num_ret, as trec_eval sums them) or the geometric
    mean (trec_eval's gm_map and gm_bpref: exp(mean(log(max(v, 1e-5)))))."""
    complete_summary_from_qrels: ClassVar[bool] = False
    """True for trec_eval's ``num_rel``, whose summary under the ``qrels_num_rel`` convention
    (trec_eval's ``-c``, :mod:`prefeval.ranking.conventions`) adds up, per query, its documents of
    grade > 0 rather than the per-query values (which count grade >= the relevance level)."""
    counts: ClassVar[bool] = False
    """True when the values are counts of documents or queries (integers; trec_eval prints them so)."""

    @classmethod
    def all_parameters(cls) -> tuple[Param, ...]:
        """The family's parameters, then the modifiers every metric takes as keywords:
        ``judged_only`` and, on a binary metric, ``rel``."""
        if cls.kind != METRIC:
            return cls.parameters
        return cls.parameters + ((JUDGED_ONLY,) if cls.reads_grades else (RELEVANCE_LEVEL, JUDGED_ONLY))

    def __init__(self, *texts: str):
        params = self.all_parameters()
        positional = [p for p in params if not p.keyword]
        plain = [text for text in texts if "=" not in text]
        named = [text for text in texts if "=" in text]
        if plain and named and texts.index(named[0]) < texts.index(plain[-1]):
            raise UsageError(f"{self.family}: a parameter name=value comes after the positional parameters")
        if len(plain) > len(positional):
            raise UsageError(
                f"{self.family} takes at most {len(positional)} parameter(s) "
                f"({', '.join(p.name for p in positional) or 'none'}), got {len(plain)}"
            )
        values = {param.name: param.parse(text, self.family) for param, text in zip(positional, plain)}
        by_name = {p.name: p for p in params}
        for text in named:
            key, _, written = text.partition("=")
            key = key.strip()
            if key not in by_name:
                raise UsageError(f"{self.family} has no parameter {key!r} (parameters: {', '.join(by_name)})")
            if key in values:
                raise UsageError(f"{self.family}: parameter {key} given twice")
            values[key] = by_name[key].parse(written, self.family)
        self.values: tuple = tuple(values.get(p.name, p.default) for p in params)
        written = max(len(plain), 1 if positional and _bare_name_is_a_list(type(self)) else 0)
        texts_given = [p.written(self.values[params.index(p)]) for p in positional[:written]]
        texts_given += [f"{p.name}={p.written(values[p.name])}" for p in params
                        if p.keyword and p.name in values and values[p.name] is not None]
        self.name: str = self.family + ("@" + ",".join(texts_given) if texts_given else "")

    def param(self, name: str):
        """The value of parameter ``name`` (given or default)."""
        for param, value in zip(self.all_parameters(), self.values):
            if param.name == name:
                return value
        raise KeyError(name)

    @property
    def relevance_level(self) -> float | None:
        """This measure's own relevance level (``rel=``), or None: the evaluation's."""
        return self.param("rel") if any(p is RELEVANCE_LEVEL for p in self.all_parameters()) else None

    @property
    def judged_only(self) -> bool:
        """True when this measure ranks only the judged documents (``judged_only=1``)."""
        return any(p is JUDGED_ONLY for p in self.all_parameters()) and bool(self.param("judged_only"))

    @property
    def is_metric(self) -> bool:
        return self.kind == METRIC

    def __repr__(self) -> str:
        return f"<measure {self.name}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Measure) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class Metric(Measure):
    """A per-run, per-query score computed from binary position vectors (and grades); by default a
    fraction in [0, 1]."""

    kind = METRIC
    bounds = (0.0, 1.0)

    @abstractmethod
    def compute(self, positions: Positions) -> np.ndarray:
        """Values for all runs and queries: (R, Q), from one-segment-per-query positions."""

    def differences(self, positions: Positions, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """metric(first[p]) − metric(second[p]) for P pairs of runs and all queries, (P, Q): what a
        metric is on pair lines."""
        values = self.compute(positions)
        return values[first] - values[second]


class AdditiveMetric(Metric):
    """A metric that adds up one share per relevant document: value = Σ_i share_i(x_i).

    The share of the i-th relevant document may depend on its rank x_i, its index i, its grade and
    on the query and run (m, the ideal grades, the number retrieved or ranked, the grades of the
    documents ranked above it), but not on the ranks of the other relevant documents. Most metrics
    of prefeval are of this kind (not those that look at the other relevant documents, such as
    infAP or interpolated precision). It is what makes expectations over random ranks exact finite sums:
    E[value] = Σ_i Σ_x P(x_i = x) · share_i(x) (:mod:`prefeval.analyses.sampled_metrics`).
    """

    def compute(self, positions: Positions) -> np.ndarray:
        return positions.segment_sum(self.shares(positions, positions.ranks))

    @abstractmethod
    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        """Each relevant document's share of the metric when it sits at rank ``ranks``.

        ``ranks`` is shaped like ``positions.ranks`` (R × N), possibly with leading axes (…, R, N)
        that broadcast; an ``inf`` rank (not retrieved) has share 0. Everything else (index,
        grades, segments, counts) is read from ``positions``.
        """


class RatioMetric(AdditiveMetric):
    """An additive metric whose shares are terms over one denominator per run and query:

        value = (Σ_i term_i(x_i)) / D,   share_i = term_i(x_i) / D,

    and 0 where D is 0. :meth:`compute` sums the terms and divides once, so that a count is counted
    exactly and its ratio is the nearest float to the true one: P@10 of 3 hits is 3/10 = 0.3,
    where adding up 1/10 three times gives 0.30000000000000004, and a perfect AP or nDCG is exactly
    1. :meth:`shares` divides each term, for the analyses that need one share per document.
    """

    def compute(self, positions: Positions) -> np.ndarray:
        return _ratio(positions.segment_sum(self.terms(positions, positions.ranks)), self.denominator(positions))

    def shares(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        denominator = self.denominator(positions)
        return _ratio(self.terms(positions, ranks),
                      positions.per_element(denominator) if np.ndim(denominator) else denominator)

    def differences(self, positions: Positions, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Where every run has the same denominator (P@k for k > 0, R@k, RP, AP, nDCG), the
        difference of the sums divided once: P@10 of 7 hits against 1 is 6/10 = 0.6, where 0.7 − 0.1
        is 0.6000000000000001. Otherwise (a denominator per run) the difference of the values."""
        denominator = self.denominator(positions)
        if np.ndim(denominator) > 1:
            return super().differences(positions, first, second)
        totals = positions.segment_sum(self.terms(positions, positions.ranks))
        return _ratio(totals[first] - totals[second], denominator)

    @abstractmethod
    def terms(self, positions: Positions, ranks: np.ndarray) -> np.ndarray:
        """Each relevant document's term at rank ``ranks`` (shaped as in :meth:`shares`; 0 for an
        ``inf`` rank): an integer count where the metric counts documents."""

    @abstractmethod
    def denominator(self, positions: Positions) -> float | np.ndarray:
        """D: a number, or one per query (Q,) or per run and query (R, Q)."""


def _ratio(numerator: np.ndarray, denominator) -> np.ndarray:
    """numerator / denominator, broadcast, 0 where the denominator is 0 (never a warning)."""
    shape = np.broadcast_shapes(np.shape(numerator), np.shape(denominator))
    return np.divide(numerator, denominator, out=np.zeros(shape), where=np.asarray(denominator) > 0)


class Preference(Measure):
    """A pairwise comparison of two runs on a query; > 0 means the first run is preferred."""

    kind = PREFERENCE
    bounds = (-1.0, 1.0)
    value_type: ClassVar[type] = np.float64
    """The type of its per-query values (the signs of the lexicographic preferences are int8,
    written ``1``, ``0``, ``-1``): a tie on a query without a relevant document has it too."""
    per_grade_level: ClassVar[bool] = False
    """True when the preference is the m_g-weighted average of its values at every grade level g of
    the query: it is given graded positions, a segment per query and grade level (implies
    :attr:`reads_grades`). False: one segment per query, binary relevance."""

    @abstractmethod
    def compare(self, comparison) -> np.ndarray:
        """Values for P pairs and all queries: (P, Q), from a
        :class:`~prefeval.measures.preferences.Comparison` (the ranks ``x`` and ``y``, (P, N), of the
        first and second run of each pair on the segments of its ``positions``)."""


REGISTRY: dict[str, type[Measure]] = {}
"""Every measure family, by lower-cased family name and alias."""


def register(cls: type[Measure]) -> type[Measure]:
    """Class decorator: make a measure family known under its name and aliases. A family must say
    where it comes from (:attr:`Measure.cite`)."""
    if not getattr(cls, "cite", "").strip():
        raise ValueError(f"measure {cls.family} has no citation (its cite attribute)")
    for name in (cls.family, *cls.aliases):
        key = name.lower()
        if key in REGISTRY and REGISTRY[key] is not cls:
            raise ValueError(f"measure name {name} registered twice")
        REGISTRY[key] = cls
    return cls


def families() -> list[type[Measure]]:
    """The registered measure families, each once, in :data:`~prefeval.measures.order.FAMILY_ORDER`;
    a family that it does not name comes last, in registration order."""
    listed = {name: place for place, name in enumerate(FAMILY_ORDER)}
    return sorted(dict.fromkeys(REGISTRY.values()), key=lambda family: listed.get(family.family, len(listed)))


@functools.cache
def _bare_name_is_a_list(family: type[Measure]) -> bool:
    """Whether the family's name alone stands for trec_eval's list of its cut-offs (``p`` is P_5,
    ..., P_1000: :mod:`prefeval.measures.request`), so that a measure of it always names its first
    parameter (``p@10``, never ``p``)."""
    return trec_eval.default_list(family.family, (family.family, *family.aliases)) is not None


def family_syntax(family: type[Measure]) -> str:
    """How a family is written, its optional parameters in brackets: ``rp``, ``ap[@k]``,
    ``rbp[@gamma,k]``, ``ndcg[@k][,gains=...]`` (the keyword parameters every metric takes, ``rel=``
    and ``judged_only=``, are not listed)."""
    signature = ",".join(param.name for param in family.parameters if not param.keyword)
    keywords = "".join(f"[,{param.name}=...]" for param in family.parameters if param.keyword)
    return family.family + (f"[@{signature}]" if signature else "") + keywords


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _number_text(value: float) -> str:
    if value in (np.inf, -np.inf):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return repr(float(value))
