"""Checks that every registered measure family passes, on random small RankTables (after scikit-learn's
``test_common``): a measure is tested by being registered.

Each family is taken with its defaults and with each parameter set in turn to a few values of its
range. Metrics: values (R, Q), finite, within the family's ``bounds`` (>= 0; fractions in [0, 1]),
the same on the same input, 0 for a run that retrieves no relevant document, and (being additive) the
sum of shares that broadcast over leading axes. Preferences: values (P, Q) in ``bounds`` ([-1, 1]),
antisymmetric, 0 for a run against itself, never favouring a run that retrieves no relevant document,
the same on the same input. Every family: a citation, a place in the listing order, and names that
read back (its prefeval name, and its trec_eval name where it has one).

The measures of the items listed (:mod:`prefeval.measures.items`) are checked on collections whose
runs list items of a small random catalogue, with training interactions, features and provider groups
(:func:`item_collections`), through what the ranking of every run computes for them
(:func:`prefeval.ranking.items.run_items`); the measures of the whole run give one value per run,
bounded, the same however the queries are split.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import NamedTuple

import judged as judged_strategies
import numpy as np
import pytest
from conftest import table_from_positions
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval.errors import UsageError
from prefeval.io.fields import TextColumn, text_keys
from prefeval.io.judgments import PREFERENCES
from prefeval.io.side import SideTable
from prefeval.measures import DEFAULT_EVAL_MEASURES, FAMILY_ORDER, METRIC, PREFERENCE_MEASURES, foreign, parse_measure
from prefeval.measures.base import REGISTRY, AdditiveMetric, Measure, Metric, Param, families, register
from prefeval.measures.foreign import trec_eval
from prefeval.measures.items import RunMeasure, is_item_measure, item_request
from prefeval.measures.judgments import JudgmentMetric
from prefeval.measures.preferences import Comparison
from prefeval.measures.request import layout_name, read_as, read_request
from prefeval.ranking.items import ItemContext, TableItems, run_items
from prefeval.ranking.positions import Selection, binary_positions, graded_positions

TOLERANCE = 1e-12
SAMPLE_VALUES = {int: (0, 1, 3, 10, 10**9), float: (0.0, 0.15, 0.5, 0.9, 2.0, 1e200, math.inf)}
"""Parameter values to try, by parameter type; each family keeps those its ranges accept (the
largest cut-off, and extreme numbers where a range takes them: F's β of 1e200 and inf)."""

FAMILIES = families()


def sample_values(param: Param) -> list:
    """The values of :data:`SAMPLE_VALUES` that ``param`` accepts."""
    accepted = []
    for value in SAMPLE_VALUES.get(param.type, ()) if param.parser is None else ():
        try:
            accepted.append(param.parse(str(value), "test"))
        except UsageError:
            continue
    return accepted


def instances(family: type[Measure]) -> list[Measure]:
    """The family with its defaults, and with each parameter set to each of its sample values (the
    parameters before it at their defaults): ``rbp``, ``rbp@0.15``, ..., ``rbp@0.5,3``, ..."""
    found = [family()]
    for place, param in enumerate(p for p in family.parameters if not p.keyword):
        defaults = [str(earlier.default) for earlier in family.parameters[:place]]
        found += [family(*defaults, str(value)) for value in sample_values(param)]
    return list(dict.fromkeys(found))


INSTANCES = [measure for family in FAMILIES for measure in instances(family)]


def run_instances(family: type[Measure]) -> list[Measure]:
    """A measure of the whole run as :func:`instances` takes it, and each with the rank discount."""
    plain = instances(family)
    discounted = [family(*measure.name.partition("@")[2].split(",")[:1], "discount=1") if "@" in measure.name
                  else family("discount=1") for measure in plain
                  if any(param.name == "discount" for param in family.parameters)]
    return list(dict.fromkeys(plain + discounted))



def family_id(family: type[Measure]) -> str:
    return family.family


@st.composite
def collections(draw, num_runs: int = 3):
    """Random RankTables: 1 to 4 queries of 1 to 6 relevant documents of grades 1 to 3; for each of
    ``num_runs`` runs, the ranks of those documents (distinct, 1 to 12, or inf: not retrieved), and 0 to
    3 non-relevant documents retrieved below the deepest relevant one."""
    num_queries = draw(st.integers(1, 4))
    lengths = [draw(st.integers(1, 6)) for _ in range(num_queries)]
    grades = [[draw(st.sampled_from([1.0, 2.0, 3.0])) for _ in range(m)] for m in lengths]
    runs = []
    for _ in range(num_runs):
        run = []
        for m in lengths:
            ranks = draw(st.lists(st.integers(1, 12), min_size=m, max_size=m, unique=True))
            retrieved = draw(st.lists(st.booleans(), min_size=m, max_size=m))
            run.append([float(r) if keep else math.inf for r, keep in zip(ranks, retrieved)])
        runs.append(run)
    table = table_from_positions(runs, grades)
    # other judged documents: 0 to 3 per query, grade 0 (judged non-relevant) or -1 (in the pool,
    # not judged), each run ranking them at distinct ranks 13 to 16 (below every relevant one) or not
    other_counts = [draw(st.integers(0, 3)) for _ in range(num_queries)]
    other_grades = [draw(st.sampled_from([0.0, -1.0])) for _ in range(sum(other_counts))]
    other_ranks = []
    for _ in range(num_runs):
        row = []
        for count in other_counts:
            ranks = draw(st.lists(st.integers(13, 16), min_size=count, max_size=count, unique=True))
            retrieved = draw(st.lists(st.booleans(), min_size=count, max_size=count))
            row += [float(r) if keep else math.inf for r, keep in zip(ranks, retrieved)]
        other_ranks.append(row)
    other_ranks = np.array(other_ranks, dtype=np.float64).reshape(num_runs, sum(other_counts))
    qrels = table.qrels._replace(
        other_offsets=np.concatenate(([0], np.cumsum(other_counts))).astype(np.int64),
        other_docids=TextColumn.of_texts([f"n{f}" for f in range(sum(other_counts))]),
        other_grades=np.array(other_grades, dtype=np.float64))
    deepest = np.zeros((num_runs, num_queries), dtype=np.int64)
    query_of_other = qrels.query_of_other
    for run in range(num_runs):
        finite = np.isfinite(other_ranks[run])
        np.maximum.at(deepest[run], query_of_other[finite], other_ranks[run][finite].astype(np.int64))
    size = num_runs * num_queries
    tails = np.array(draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))).reshape(num_runs, num_queries)
    num_retrieved = np.maximum(table.num_retrieved, deepest) + tails
    return dataclasses.replace(table, qrels=qrels, other_ranks=other_ranks, num_retrieved=num_retrieved,
                               in_run=num_retrieved > 0)


CATALOGUE = 16
"""Items of the catalogue of :func:`item_collections` (more than any list's length)."""


def _side(keys, values, source: str) -> SideTable:
    return SideTable.of_texts(keys, values, np.arange(len(keys)) + 2, source)


class ItemCase(NamedTuple):
    """A collection whose runs list items (:func:`item_cases`): the table, the item context, what the
    ranking computes (the request) and each run's listed rows (queries, item keys, ranks)."""

    table: object
    context: ItemContext
    request: object
    rows: list


def item_part(case: ItemCase, queries: slice):
    """The stacked exposure counts of the queries ``queries`` of every run alone."""
    parts = []
    for queries_of, keys, ranks in case.rows:
        kept = (queries_of >= (queries.start or 0)) & (queries_of < (queries.stop or case.table.num_queries))
        parts.append(run_items(case.request, queries_of[kept], keys[kept], ranks[kept], case.table.num_queries))
    return TableItems.of(parts).counts


@st.composite
def item_cases(draw, measures: list[Measure], num_runs: int = 3) -> ItemCase:
    """:func:`collections` whose runs list items: each run's list for a query is ``num_retrieved``
    distinct items of a catalogue of :data:`CATALOGUE` (ranked 1, 2, ...), with random training
    interactions (some items never trained on), features (some items without) and provider groups
    (some items in none); the table carries what ``measures`` read."""
    table = draw(collections(num_runs))
    names = np.array([f"i{item}" for item in range(CATALOGUE)], dtype=object)
    trained = draw(st.lists(st.integers(0, CATALOGUE - 1), min_size=1, max_size=30))
    users = draw(st.lists(st.integers(0, 5), min_size=len(trained), max_size=len(trained)))
    featured = draw(st.lists(st.tuples(st.integers(0, CATALOGUE - 1), st.integers(0, 4)), max_size=30))
    grouped = draw(st.lists(st.integers(-1, 2), min_size=CATALOGUE, max_size=CATALOGUE))
    context = ItemContext.of(
        items=_side(names, names, "items"),
        train=_side([f"u{user}" for user in users], names[trained], "train"),
        item_features=_side([names[item] for item, _ in featured], [f"f{f}" for _, f in featured], "features"),
        item_groups=_side([names[i] for i, g in enumerate(grouped) if g >= 0] or [names[0]],
                          [f"p{g}" for g in grouped if g >= 0] or ["p0"], "groups"))
    request = item_request(measures, context)
    if request is None:  # ucov: it reads the lists' lengths alone
        return ItemCase(table, context, None, [])
    runs, rows = [], []
    for run in range(num_runs):
        queries, items, ranks = [], [], []
        for query, length in enumerate(table.num_retrieved[run]):
            order = draw(st.permutations(range(CATALOGUE)))[:length]
            queries += [query] * len(order)
            items += order
            ranks += range(1, len(order) + 1)
        rows.append((np.array(queries, dtype=np.int64), text_keys(names[items].tolist()),
                     np.array(ranks, dtype=np.float64)))
        runs.append(run_items(request, *rows[-1], table.num_queries))
    return ItemCase(dataclasses.replace(table, items=TableItems.of(runs)), context, request, rows)


def strategy_for(family: type[Measure]):
    """The random collections a family is checked on (for a measure of the items listed, the tables of
    :func:`item_cases` for its instances)."""
    return item_cases(instances(family)).map(lambda case: case.table) if is_item_measure(family) else collections()


def positions_of(table, graded: bool = False):
    """The positions of every query of ``table``, with what the item measures read of them."""
    positions = (graded_positions if graded else binary_positions)(table, Selection.everything(table),
                                                                    **({} if graded else {"others": True}))
    return positions._replace(items=table.items.queries) if table.items is not None else positions


def without_relevant(table, run: int):
    """``table`` where run ``run`` retrieves no relevant document (it may retrieve non-relevant ones)."""
    ranks = table.ranks.copy()
    ranks[run] = math.inf
    return dataclasses.replace(table, ranks=ranks)


def metric_values(measure: Metric, table) -> np.ndarray:
    return measure.compute(positions_of(table))


def preference_values(measure, table, first, second) -> np.ndarray:
    """Values of ``measure`` for the pairs (first[p], second[p]), as ``prefeval eval`` computes them."""
    positions = positions_of(table, graded=measure.per_grade_level)
    first, second = np.asarray(first), np.asarray(second)
    return measure.compare(Comparison(positions, positions.ranks[first], positions.ranks[second], first, second))


def assert_within_bounds(values: np.ndarray, measure: Measure) -> None:
    low, high = measure.bounds
    assert np.all(np.isfinite(values)), measure.name
    assert np.all(values >= low - TOLERANCE), (measure.name, values.min())
    assert np.all(values <= high + TOLERANCE), (measure.name, values.max())


# --- metrics ----------------------------------------------------------------------------------------

FIRST, SECOND = np.array([0, 0, 1]), np.array([1, 2, 2])
"""The pairs of runs of a collection's three runs."""
METRIC_FAMILIES = [family for family in FAMILIES if family.kind == METRIC
                   and not issubclass(family, (JudgmentMetric, RunMeasure))]
"""The metrics of grades (qrels) and of the items listed: computed from position vectors."""
RUN_FAMILIES = [family for family in FAMILIES if issubclass(family, RunMeasure)]
"""The measures of the whole run (:mod:`prefeval.measures.items`): a value per run, from its exposure counts."""
JUDGMENT_FAMILIES = [family for family in FAMILIES if issubclass(family, JudgmentMetric)]
"""The metrics of other judgments (preferences, judgment groups): computed from runs ranked against
them (:mod:`prefeval.measures.judgments`), and checked on random collections of their own below."""
PREFERENCE_FAMILIES = [family for family in FAMILIES if family.kind != METRIC]


@pytest.mark.parametrize("family", METRIC_FAMILIES, ids=family_id)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_metric_values_are_shaped_bounded_and_deterministic(family, data):
    table = data.draw(strategy_for(family))
    positions = positions_of(table)
    for measure in instances(family):
        values = measure.compute(positions)
        assert values.shape == (table.num_runs, table.num_queries), measure.name
        assert_within_bounds(values, measure)
        np.testing.assert_array_equal(measure.compute(positions), values, err_msg=measure.name)
        np.testing.assert_array_equal(metric_values(measure, table), values, err_msg=measure.name)


OF_QRELS = {"ideal_dcg"}
"""The metrics whose value is the qrels', whatever the run (the ideal DCG, nDCG's normaliser)."""
OF_RELEVANT_ONLY = [family for family in METRIC_FAMILIES
                    if not (family.reads_judged or family.counts or family.bounds[0] < 0 or family.family in OF_QRELS
                            or is_item_measure(family))]
"""The metrics that look at the relevant documents only (not at the judged non-relevant or unjudged
ones, not counts of what was retrieved, not the qrels alone, not the items listed): 0 for a run that
retrieves no relevant document."""


@pytest.mark.parametrize("family", OF_RELEVANT_ONLY, ids=family_id)
@settings(max_examples=25, deadline=None)
@given(table=collections())
def test_metric_of_a_run_without_relevant_documents_is_zero(family, table):
    empty = without_relevant(table, 0)
    for measure in instances(family):
        np.testing.assert_array_equal(metric_values(measure, empty)[0], 0.0, err_msg=measure.name)


ADDITIVE_FAMILIES = [family for family in METRIC_FAMILIES if issubclass(family, AdditiveMetric)]


@pytest.mark.parametrize("family", ADDITIVE_FAMILIES, ids=family_id)
@settings(max_examples=25, deadline=None)
@given(table=collections())
def test_additive_metric_is_the_sum_of_shares_over_leading_axes(family, table):
    positions = binary_positions(table, Selection.everything(table), others=True)
    for measure in instances(family):
        values = measure.compute(positions)
        stacked = measure.shares(positions, np.stack([positions.ranks, positions.ranks]))
        np.testing.assert_allclose(positions.segment_sum(stacked), np.stack([values, values]), atol=TOLERANCE,
                                   err_msg=measure.name)


@pytest.mark.parametrize("family", METRIC_FAMILIES, ids=family_id)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_differences_are_those_of_the_values(family, data):
    """What a metric writes on pair lines: metric(first) − metric(second), exact where it can be."""
    table = data.draw(strategy_for(family))
    positions = positions_of(table)
    for measure in instances(family):
        values = measure.compute(positions)
        differences = measure.differences(positions, FIRST, SECOND)
        np.testing.assert_allclose(differences, values[FIRST] - values[SECOND], atol=TOLERANCE, err_msg=measure.name)
        np.testing.assert_array_equal(measure.differences(positions, FIRST, FIRST), 0.0, err_msg=measure.name)


# --- preferences ------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", PREFERENCE_FAMILIES, ids=family_id)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_preference_is_antisymmetric_zero_on_self_bounded_and_deterministic(family, data):
    table = data.draw(strategy_for(family))
    for measure in instances(family):
        forward = preference_values(measure, table, FIRST, SECOND)
        assert forward.shape == (len(FIRST), table.num_queries), measure.name
        assert_within_bounds(forward, measure)
        backward = preference_values(measure, table, SECOND, FIRST)
        np.testing.assert_allclose(forward, -backward, atol=TOLERANCE, err_msg=measure.name)
        np.testing.assert_array_equal(preference_values(measure, table, FIRST, FIRST), 0, err_msg=measure.name)
        np.testing.assert_array_equal(preference_values(measure, table, FIRST, SECOND), forward, err_msg=measure.name)


@pytest.mark.parametrize("family", [family for family in PREFERENCE_FAMILIES if not is_item_measure(family)],
                         ids=family_id)
@settings(max_examples=40, deadline=None)
@given(table=collections())
def test_preference_never_favours_a_run_without_relevant_documents(family, table):
    empty = without_relevant(table, 0)
    for measure in instances(family):
        assert np.all(preference_values(measure, empty, [0, 0], [1, 2]) <= 0), measure.name


# --- measures of the whole run -----------------------------------------------------------------------


@pytest.mark.parametrize("family", RUN_FAMILIES, ids=family_id)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), cut=st.integers(0, 4))
def test_run_measures_are_bounded_and_the_same_however_the_queries_are_split(family, data, cut):
    """A value per run (per run and group for expshare), finite, within bounds; the exposure counts
    of two parts of the queries add up to the whole's exactly, so the values are the same bits."""
    case = data.draw(item_cases(run_instances(family)))
    table, context = case.table, case.context
    counts = table.items.counts
    for measure in run_instances(family):
        values = measure.of_run(counts, context)
        for key, value in values.items():
            assert key.startswith(measure.name) and value.shape == (table.num_runs,), key
            assert_within_bounds(value, measure)
        cut = min(cut, table.num_queries)
        halves = [item_part(case, slice(0, cut)), item_part(case, slice(cut, None))]
        split = measure.of_run(halves[0] + halves[1], context)
        assert {key: value.tolist() for key, value in split.items()} == \
            {key: value.tolist() for key, value in values.items()}, measure.name


# --- metrics of other judgments ---------------------------------------------------------------------

def judged_collections(family: type[Measure]):
    """Random collections judged as ``family`` reads judgments (tests/judged.py)."""
    return judged_strategies.preference_collections() if family.judgments == PREFERENCES \
        else judged_strategies.group_collections()


@pytest.mark.parametrize("family", JUDGMENT_FAMILIES, ids=family_id)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_judgment_metric_values_are_shaped_bounded_and_deterministic(family, data):
    """As for the metrics of grades: values (R, Q), finite, within bounds, the same on the same input
    (and counts whole numbers), with and without a rank cut-off."""
    table = data.draw(judged_collections(family))
    topk = data.draw(st.sampled_from([None, 1, 3]))
    for measure in instances(family):
        values = measure.compute(judged_strategies.judged(table, topk))
        assert values.shape == (table.num_runs, table.num_queries), measure.name
        assert_within_bounds(values, measure)
        np.testing.assert_array_equal(measure.compute(judged_strategies.judged(table, topk)), values,
                                      err_msg=measure.name)
        if measure.counts:
            np.testing.assert_array_equal(values, np.round(values), err_msg=measure.name)


RUN_INDEPENDENT = ("prefs_num_prefs_poss",)
"""Counts of the judgments themselves, which do not depend on what a run retrieved."""


@pytest.mark.parametrize("family", [family for family in JUDGMENT_FAMILIES if family.family not in RUN_INDEPENDENT],
                         ids=family_id)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_judgment_metric_of_a_run_without_judged_documents_is_zero(family, data):
    """A run that retrieves none of the judged documents fulfils no preference and finds no relevant
    document: 0 on every query."""
    table = data.draw(judged_collections(family))
    empty = without_relevant(table, 0)
    for measure in instances(family):
        np.testing.assert_array_equal(measure.compute(judged_strategies.judged(empty))[0], 0.0, err_msg=measure.name)


# --- names, citations, order ------------------------------------------------------------------------

def assert_read_back(measure: Measure, back: Measure, tool: str, printed: str) -> None:
    """``back``, read from ``printed`` (``tool``'s name of ``measure``), is ``measure``, but for what
    the tool's name does not say: the parameters it sets by options (utility's N, trec_eval's -N),
    and the relevance level of ``NumRet(rel=1)``, ir_measures' name of num_rel_ret (grade >= 1: grade
    > 0 on integer grades)."""
    assert type(back) is type(measure), printed
    differing = {param.name for param, ours, theirs in zip(measure.all_parameters(), measure.values, back.values)
                 if ours != theirs}
    if measure.family == "num_rel_ret" and differing == {"rel"} and back.param("rel") == 1:
        differing = set()
    row = trec_eval.row_of_printed(printed) if tool == trec_eval.TOOL else None
    assert differing <= set(row.unnamed if row is not None else ()), printed


@pytest.mark.parametrize("measure", INSTANCES, ids=lambda measure: measure.name)
@pytest.mark.parametrize("tool", list(foreign.TOOLS))
def test_names_read_back(measure, tool):
    """prefeval's name reads back as the measure; each tool's name of it (when it has one) reads back,
    by that tool's table, as the same measure, and is written the same again; a format of the tool
    prints that name, or prefeval's where the tool has none (never a name the tool gives another
    measure)."""
    assert parse_measure(measure.name) == measure
    printed = foreign.spell(measure, tool)
    shown = layout_name(measure, tool)
    if printed is not None:
        [back] = read_as(tool, printed)
        assert_read_back(measure, back, tool, printed)
        assert foreign.spell(back, tool) == printed
        assert shown == printed
    else:
        again = parse_measure(shown)
        assert (type(again), again.values) == (type(measure), measure.values), shown
        assert shown.lower() not in {row.name.lower() for row in foreign.TOOLS[tool].ROWS}


@pytest.mark.parametrize("tool", list(foreign.TOOLS))
def test_every_row_of_every_foreign_table_round_trips(tool):
    """Every row of every tool's table: its example reads as measures of its family, each of which the
    tool writes under a name that reads back as the same measure."""
    for row in foreign.TOOLS[tool].ROWS:
        if row.family is None:
            continue
        measures = read_as(tool, row.example())
        assert measures, row.example()
        for measure in measures:
            printed = foreign.spell(measure, tool)
            if printed is None:  # a parameter the tool echoes as typed (set_F's β²): the request keeps it
                printed = read_request([row.example()]).printed(tool)[measure.name]
            [back] = read_as(tool, printed)
            assert_read_back(measure, back, tool, printed)


def test_every_trec_eval_name_is_written_for_some_measure():
    printed = {foreign.spell(measure, trec_eval.TOOL) for measure in INSTANCES} - {None}
    for row in trec_eval.ROWS:
        if row.family is not None:
            # a parameter after "_"; trec_eval's own parameter pairs (rbp_p=0.9) likewise
            pattern = re.escape(row.name) + (r"(_[0-9.,-]+)?" if row.parameter else r"(_p=[0-9.]+)?")
            assert any(re.fullmatch(pattern, name) for name in printed), row.name


@pytest.mark.parametrize("family", FAMILIES, ids=family_id)
def test_every_family_is_described_and_cited(family):
    assert isinstance(family.cite, str) and family.cite.strip(), family.family
    assert family.summary and family.__doc__, family.family
    assert len(family.bounds) == 2 and family.bounds[0] < family.bounds[1], family.family


def test_register_refuses_a_family_without_a_citation():
    class Uncited(Metric):
        family = "uncited"

        def compute(self, positions):
            return np.zeros(positions.num_retrieved.shape)

    with pytest.raises(ValueError, match="uncited has no citation"):
        register(Uncited)
    assert "uncited" not in REGISTRY


def test_family_order_names_every_registered_family_once():
    assert len(set(FAMILY_ORDER)) == len(FAMILY_ORDER)
    assert [family.family for family in families()] == list(FAMILY_ORDER)


def test_family_order_is_the_preferences_then_the_default_metrics_then_the_others():
    default_families = tuple(dict.fromkeys(parse_measure(name).family for name in DEFAULT_EVAL_MEASURES))
    assert FAMILY_ORDER[: len(PREFERENCE_MEASURES)] == PREFERENCE_MEASURES
    assert FAMILY_ORDER[: len(default_families)] == default_families
    # the other preferences are those over intents, listed last with the measures that read subtopics,
    # and the worst-off provider first, with the measures of the items listed
    assert all(REGISTRY[name].kind == METRIC or REGISTRY[name].reads_intents or is_item_measure(REGISTRY[name])
               for name in FAMILY_ORDER[len(PREFERENCE_MEASURES):])
