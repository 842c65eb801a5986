"""The item context of a recommender evaluation: what the beyond-accuracy measures know of the
items, built once from the side inputs (:mod:`prefeval.io.side`) and used on every block of a run.

- the **catalogue**: a :class:`~prefeval.io.codes.KeyIndex` of item keys
  (:func:`~prefeval.io.fields.byte_keys`, the keys docids are matched by), from ``--items``, else the
  items of ``--train``, else the items of the runs;
- the **popularity** of each catalogue item in the training data (:class:`Popularity`);
- the **features**: each item's feature set, as bits
  (:class:`~prefeval.analyses.beyond_accuracy.FeatureSets`), from ``--item-features``;
- the **item groups**: a group code per catalogue item (−1: in no group) from ``--item-groups``.

**The catalogue** is ``--items`` when given; else the items of ``--train``, ``--item-features`` and
``--item-groups`` together. With ``--items``, and whenever a measure of the whole run is asked for
(coverage, Gini, entropy, group shares: they count every catalogue item, exposed or not), the
catalogue must hold every recommended item: one outside it is an error naming its run's file and
line (``strict``). Otherwise an item outside it is an item nobody trained on, without features and
in no group (one extra slot, index ``n``), and a note counts them.

What the ranking of a run makes of it (:func:`run_items`, called where a run is ranked,
:func:`prefeval.ranking.ranktable.rank_relevant`, for every engine): per query, the value of each
per-list measure at each cut-off asked for (:class:`QueryItems`) and each provider group's
exposure; and the run's exposure counts per item (:class:`ExposureCounts`), integers, so that they
add up exactly in any order (chunks, partitions, workers) and every engine writes the same bytes.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.analyses.beyond_accuracy import (
    FeatureSets,
    ListLayout,
    Popularity,
    list_feature_values,
    per_user_popularity,
)
from prefeval.errors import UsageError
from prefeval.io.codes import KeyIndex, factorize
from prefeval.io.fields import TextColumn
from prefeval.io.side import SideTable, sorted_codes
from prefeval.measures.provider import group_exposure

if TYPE_CHECKING:
    from prefeval.analyses.groups import UserGroupIndex


class ItemContext(NamedTuple):
    """What the beyond-accuracy measures know of the items (see the module's docstring): the
    catalogue's ``items`` (texts, sorted) and their ``index`` (by key); per catalogue item plus the
    extra slot of the items outside it, ``popularity``, ``features`` and ``groups`` (None where their
    side input was not given); ``strict``: an item outside the catalogue is an error."""

    items: np.ndarray
    index: KeyIndex
    source: str
    popularity: Popularity | None
    features: FeatureSets | None
    groups: np.ndarray | None
    group_names: np.ndarray | None
    strict: bool = True

    @property
    def size(self) -> int:
        """n, the number of catalogue items."""
        return len(self.items)

    @property
    def num_groups(self) -> int:
        return 0 if self.group_names is None else len(self.group_names)

    @classmethod
    def of(cls, items: SideTable | None = None, train: SideTable | None = None,
           item_features: SideTable | None = None, item_groups: SideTable | None = None,
           head_share: float = 0.2, strict: bool | None = None) -> ItemContext:
        """From the side tables (module docstring); ``strict`` defaults to whether ``items`` is given.
        Training rows and features of items outside the catalogue are left out."""
        given = [table for table in (train, item_features, item_groups) if table is not None]
        if items is not None:
            keys, names, _ = sorted_codes(items.keys)
            source = items.source
        elif given:
            keys, names, _ = sorted_codes(TextColumn.joined([table.values if table is train else table.keys
                                                              for table in given]))
            source = " and ".join(table.source for table in given)
        else:
            raise UsageError("the item measures need --items, --train, --item-features or --item-groups")
        index = KeyIndex(keys)
        n = len(names)
        popularity = features = groups = group_names = None
        if train is not None:
            at = index.positions(train.values.keys)
            kept = at >= 0
            user_codes = factorize(train.keys.keys)[0][kept]
            popularity = Popularity.of(user_codes, at[kept], n, head_share=head_share).with_unknown()
        if item_features is not None:
            at = index.positions(item_features.keys.keys)
            kept = at >= 0
            _, _, feature_codes = sorted_codes(item_features.values)
            num_features = int(feature_codes.max()) + 1 if len(feature_codes) else 0
            features = FeatureSets.of(at[kept], feature_codes[kept], n + 1, num_features)
        if item_groups is not None:
            at = index.positions(item_groups.keys.keys)
            kept = at >= 0
            _, group_names, codes = sorted_codes(item_groups.values)
            groups = np.full(n + 1, -1, dtype=np.int64)
            groups[at[kept]] = codes[kept]
        return cls(names, index, source, popularity, features, groups, group_names,
                   items is not None if strict is None else strict)

    def indexes(self, item_keys: np.ndarray) -> np.ndarray:
        """The catalogue index of each item key, :attr:`size` (the extra slot) for one outside it."""
        at = self.index.positions(item_keys)
        at[at < 0] = self.size  # in place: a run's ten million rows would take another 80 MB to fill
        return at


LIST_VALUES = ("arp", "aplt", "epc", "efd", "poprank", "ild_cosine", "ild_jaccard", "catcov")
"""The per-list values a run's ranking computes (:func:`list_values`)."""
NEEDS = {"arp": "train", "aplt": "train", "epc": "train", "efd": "train", "poprank": "train",
         "ild_cosine": "item-features", "ild_jaccard": "item-features", "catcov": "item-features"}
"""The side input each per-list value reads."""


class ItemRequest(NamedTuple):
    """What the ranking of every run computes for the item measures asked for: the per-list values
    ``lists`` ((value, cut-off) pairs, :data:`LIST_VALUES`; cut-off None: the whole list), the cut-offs
    of the run's exposure counts ``exposures`` (per item) and ``by_rank`` (per item and rank, for a
    rank discount), and ``providers``, the cut-offs of each user's provider-group exposure."""

    context: ItemContext
    lists: tuple[tuple[str, int | None], ...] = ()
    exposures: tuple[int | None, ...] = ()
    by_rank: tuple[int | None, ...] = ()
    providers: tuple[int | None, ...] = ()
    user_groups: UserGroupIndex | None = None
    """The users' groups (``eval --user-groups``) when a measure of the whole run is asked for: its
    exposure counts are also kept per group of users (:attr:`ExposureCounts.groups`)."""
    group_names: tuple[str, ...] = ()
    """The user groups, in name order (their codes)."""

    def query_groups(self, qids) -> np.ndarray | None:
        """The code of each query's user group (−1: in none), None without user groups."""
        return None if self.user_groups is None else self.user_groups.codes(qids)


_DENSE_PAIRS = 1 << 20
""":meth:`RankCounts.of` counts every possible (item, rank) pair when there are at most this many."""


class RankCounts(NamedTuple):
    """How many lists hold each item at each rank, sparse: the distinct (item, rank) pairs that occur,
    as ``keys`` (item << 32 | rank − 1, sorted) and their ``counts``; as many as the run's distinct
    pairs, whatever the cut-off."""

    keys: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, items: np.ndarray, ranks: np.ndarray) -> RankCounts:
        """The counts of the pairs (``items``, ``ranks``): by a count of every possible pair when
        there are at most :data:`_DENSE_PAIRS` or eight times as many as rows (a catalogue of 100,000
        items and lists of 10: no sort of the rows), else by sorting the pairs."""
        items, ranks = items.astype(np.int64), ranks.astype(np.int64)
        longest = int(ranks.max()) if len(ranks) else 0
        cells = (int(items.max()) + 1) * longest if len(items) else 0
        if cells <= max(8 * len(items), _DENSE_PAIRS):
            return cls._of_table(np.bincount(items * longest + (ranks - 1), minlength=cells), longest)
        keys, counts = np.unique((items << 32) | (ranks - 1), return_counts=True)
        return cls(keys, counts.astype(np.int64))

    def __add__(self, other: RankCounts) -> RankCounts:
        """The counts of both: the smaller's pairs looked up among the larger's (sorted), their counts
        added there and the new pairs inserted in order, so that adding a chunk's few pairs to a
        run's many costs a copy of the many, not a sort (a streamed run adds one per chunk)."""
        large, small = (self, other) if len(self.keys) >= len(other.keys) else (other, self)
        at = np.searchsorted(large.keys, small.keys)
        found = at < len(large.keys)
        found[found] = large.keys[at[found]] == small.keys[found]
        counts = large.counts.copy()
        counts[at[found]] += small.counts[found]  # the keys of each are distinct: no place twice
        new = ~found
        return RankCounts(np.insert(large.keys, at[new], small.keys[new]),
                          np.insert(counts, at[new], small.counts[new]))

    @classmethod
    def summed(cls, parts: list[RankCounts]) -> RankCounts:
        """The counts of all ``parts`` (a run's slices, or its counts so far and a chunk's): added up
        in a table of every possible (item, rank) pair when there are at most :data:`_DENSE_PAIRS` or
        eight times as many as the parts' pairs, else part by part (:meth:`__add__`)."""
        filled = [part for part in parts if len(part.keys)]
        if len(filled) <= 1:
            return filled[0] if filled else parts[0]
        longest = max(int((part.keys & 0xFFFFFFFF).max()) for part in filled) + 1
        cells = (max(int(part.keys[-1] >> 32) for part in filled) + 1) * longest  # keys sorted: item first
        if cells > max(8 * sum(len(part.keys) for part in filled), _DENSE_PAIRS):
            return functools.reduce(operator.add, filled)
        counts = np.zeros(cells, dtype=np.int64)
        for part in filled:
            counts[(part.keys >> 32) * longest + (part.keys & 0xFFFFFFFF)] += part.counts  # distinct keys
        return cls._of_table(counts, longest)

    @classmethod
    def _of_table(cls, counts: np.ndarray, longest: int) -> RankCounts:
        """The counts of a table of every (item, rank) pair, cell item · ``longest`` + rank − 1. Its
        nonzero cells are found among booleans (``counts != 0``): numpy finds them there about ten
        times as fast as among the int64 counts (a million cells, most of them nonzero)."""
        cell = np.flatnonzero(counts != 0)
        return cls(((cell // longest) << 32) | (cell % longest), counts[cell])

    def discounted(self, size: int) -> np.ndarray:
        """Each of the ``size`` first items' exposure Σ_lists 1/log2(1 + rank), added in key order
        (item, then rank: the same whatever the order the counts were added in)."""
        items, ranks = self.keys >> 32, (self.keys & 0xFFFFFFFF) + 1
        weights = self.counts / np.log2(1.0 + ranks)
        return np.bincount(items, weights=weights, minlength=size)[:size]


class ExposureCounts(NamedTuple):
    """A run's (or, stacked, every run's) exposure counts, added up over queries: per cut-off, how many
    lists hold each item within it (``exposures[k]``, (…, n + 1)) and at each rank (``by_rank[k]``,
    a :class:`RankCounts` per run); ``outside``, the rows of items outside the catalogue, and
    ``example``, one of them (for the note); ``trained``, the rows of items with a training interaction
    (a run whose count is 0 is noted: :func:`notes_on_items`); ``groups``, the same counts of each
    group of users' lists alone (in :attr:`ItemRequest.group_names` order; none without user groups).
    Integers: they add up exactly."""

    exposures: dict
    by_rank: dict
    outside: np.ndarray
    trained: np.ndarray
    example: str | None = None
    groups: tuple = ()

    def __add__(self, other: ExposureCounts) -> ExposureCounts:
        return ExposureCounts.summed([self, other])

    @classmethod
    def of(cls, request: ItemRequest, items: np.ndarray, ranks: np.ndarray, within: dict, outside: int = 0,
           trained: int = 0, example: str | None = None) -> ExposureCounts:
        """A run's counts of the rows ``items`` (catalogue indexes) at ``ranks``; ``within[k]``: the rows
        within cut-off k."""
        n = request.context.size
        return cls({k: np.bincount(items[within[k]], minlength=n + 1) for k in request.exposures},
                   {k: [RankCounts.of(items[within[k]], ranks[within[k]])] for k in request.by_rank},
                   np.int64(outside), np.int64(trained), example)

    @classmethod
    def summed(cls, parts: list[ExposureCounts]) -> ExposureCounts:
        """The counts of all ``parts`` (a run's slices or chunks, in order) added up; the first
        example of an item outside the catalogue is kept."""
        first = parts[0]
        return cls({k: functools.reduce(operator.add, [part.exposures[k] for part in parts]) for k in first.exposures},
                   {k: [RankCounts.summed(list(run)) for run in zip(*(part.by_rank[k] for part in parts))]
                    for k in first.by_rank},
                   sum(part.outside for part in parts), sum(part.trained for part in parts),
                   next((part.example for part in parts if part.example is not None), None),
                   tuple(cls.summed([part.groups[g] for part in parts]) for g in range(len(first.groups))))

    @classmethod
    def stacked(cls, runs: list[ExposureCounts]) -> ExposureCounts:
        """Runs' counts, a leading axis per run."""
        first = runs[0]
        return cls({k: np.stack([run.exposures[k] for run in runs]) for k in first.exposures},
                   {k: [part for run in runs for part in run.by_rank[k]] for k in first.by_rank},
                   np.array([run.outside for run in runs]), np.array([run.trained for run in runs]),
                   next((run.example for run in runs if run.example is not None), None),
                   tuple(cls.stacked([run.groups[g] for run in runs]) for g in range(len(first.groups))))


class QueryItems(NamedTuple):
    """Per query, what the item measures read: ``values[(value, k)]`` (…, Q) and
    ``providers[k]`` (…, Q, G), a leading axis per run once stacked."""

    values: dict
    providers: dict

    def columns(self, queries) -> QueryItems:
        """Those of the queries ``queries`` (an index or a slice of the last query axis): views when
        the index is a range of consecutive queries (every query, in the usual case), else copies."""
        queries = _as_range(queries)
        return QueryItems({key: v[..., queries] for key, v in self.values.items()},
                          {k: v[..., queries, :] for k, v in self.providers.items()})

    @classmethod
    def stacked(cls, runs: list[Sequence[QueryItems]]) -> QueryItems:
        """The runs' values, a leading axis per run, each run's pieces (:attr:`RunItems.queries`: slices
        of its queries, in order) laid end to end: each array made and written once."""
        first = runs[0][0]
        return cls({key: _stacked([[piece.values[key] for piece in run] for run in runs], -1) for key in first.values},
                   {k: _stacked([[piece.providers[k] for piece in run] for run in runs], -2) for k in first.providers})


def _stacked(runs: list[list[np.ndarray]], axis: int) -> np.ndarray:
    """Each run's arrays concatenated along ``axis``, the runs stacked along a new first axis."""
    shape = list(runs[0][0].shape)
    shape[axis] = sum(part.shape[axis] for part in runs[0])
    out = np.empty((len(runs), *shape), dtype=np.result_type(*(part for run in runs for part in run)))
    for row, parts in zip(out, runs):
        np.concatenate(parts, axis=axis, out=row)
    return out


def _as_range(index):
    """``index`` as a slice when it is an array of consecutive increasing integers, else itself."""
    if isinstance(index, np.ndarray) and index.dtype.kind in "iu" and len(index) \
            and index[-1] - index[0] == len(index) - 1 and (np.diff(index) == 1).all():
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


class RunItems(NamedTuple):
    """What a run's ranking (one chunk of its queries) gives the item measures: ``queries``, the
    per-query values of consecutive slices of its queries, in order (laid end to end only when the
    runs are stacked, :meth:`QueryItems.stacked`: joined by the run's reader first, they were a copy
    more of the run's values, 80 MB of memory touched for the first time for a million users' provider
    exposures)."""

    queries: tuple[QueryItems, ...]
    counts: ExposureCounts


class TableItems(NamedTuple):
    """The runs' :class:`RunItems` stacked (a leading axis per run): a RankTable's."""

    queries: QueryItems
    counts: ExposureCounts

    @classmethod
    def of(cls, runs: list[RunItems]) -> TableItems | None:
        if not runs or runs[0] is None:
            return None
        return cls(QueryItems.stacked([run.queries for run in runs]),
                   ExposureCounts.stacked([run.counts for run in runs]))


def run_items(request: ItemRequest, queries: np.ndarray, item_keys: np.ndarray, ranks: np.ndarray,
              num_queries: int, outside_error=None, item_text=None, query_groups: np.ndarray | None = None
              ) -> RunItems:
    """A run's :class:`RunItems`: ``queries`` (0..num_queries−1), ``item_keys`` and ``ranks`` (1-based,
    within ``-k`` already), one entry per retrieved row. ``outside_error(row)``: the error to raise for a
    row whose item is outside a strict catalogue; ``item_text(row)``: that item's text (for the note);
    ``query_groups``: each query's user group (:meth:`ItemRequest.query_groups`).

    Computed over slices of about :data:`ITEM_ROWS` rows, whole queries each (when the rows are in
    query order): each slice's items are found in the catalogue (:meth:`ItemContext.indexes`) and its
    values computed; the slices' per-query values are kept in order (:attr:`RunItems.queries`) and
    their counts added up (integers: the same whatever the slices). The slices are in row order, so
    the first row outside the catalogue is the first one of the first slice that has one."""
    context = request.context
    runs, outside, example = [], 0, None
    for rows, first, stop in _query_slices(queries, num_queries):
        items = context.indexes(item_keys[rows])
        beyond = items == context.size
        if beyond.any():
            if not outside:
                row = (rows.start or 0) + int(np.flatnonzero(beyond)[0])
                if context.strict:
                    raise outside_error(row)
                example = item_text(row) if item_text is not None else None
            outside += int(np.count_nonzero(beyond))
        runs.append(_items_of_slice(request, queries[rows] - first if first else queries[rows], items, ranks[rows],
                                    stop - first, query_groups[first:stop] if query_groups is not None else None))
    counts = runs[0].counts if len(runs) == 1 else ExposureCounts.summed([run.counts for run in runs])
    return RunItems(tuple(piece for run in runs for piece in run.queries),
                    counts._replace(outside=np.int64(outside), example=example))


ITEM_ROWS = 1 << 20
"""A run's rows are given to the item measures about this many at a time, whole users' lists (1 Mi
rows: the temporary arrays of a slice, 8 MiB each, below glibc's threshold for mapping a block
(:data:`~prefeval.runtime.memory.MMAP_THRESHOLD`), come from the heap and go back to it, where those
of a run of ten million rows, 80 MB each, were mapped afresh for every step of the computation and
every page of them zeroed by the system when first written: a run's item values took 2.7 s of CPU,
1.2 to 1.3 s in slices, 1.3 to 1.5 s in slices of 256 Ki rows, whose counts per rank are tables of
every (item, rank) pair, made once per slice). The items are found in the catalogue slice by slice
too: the catalogue index of every row of a run at once was 80 MB more, a third of a second of system
time in a reader on a machine where memory touched for the first time costs about 2 ms per MB."""


def _query_slices(queries: np.ndarray, num_queries: int) -> list[tuple[slice, int, int]]:
    """(rows, first query, stop query) of consecutive slices of the rows, about :data:`ITEM_ROWS` rows
    and whole queries each, which together cover the queries 0..num_queries−1 (a query without rows
    falls in one of them); one slice of every row when the rows are not in query order."""
    if len(queries) <= ITEM_ROWS or (queries[1:] < queries[:-1]).any():
        return [(slice(None), 0, num_queries)]
    firsts = np.unique(queries[ITEM_ROWS::ITEM_ROWS])  # each slice starts at the first row of such a query
    firsts = firsts[firsts > 0]
    starts = np.searchsorted(queries, firsts).tolist()
    bounds = [0, *firsts.tolist(), num_queries]
    rows = [0, *starts, len(queries)]
    return [(slice(rows[at], rows[at + 1]), bounds[at], bounds[at + 1]) for at in range(len(bounds) - 1)]


def _items_of_slice(request: ItemRequest, queries: np.ndarray, items: np.ndarray, ranks: np.ndarray, num_queries: int,
                    query_groups: np.ndarray | None) -> RunItems:
    """:func:`run_items` of one slice of whole queries (numbered from 0 in it), given its rows' catalogue
    indexes ``items``, without the items outside the catalogue (counted over the whole run)."""
    context = request.context
    trained = int(np.count_nonzero(context.popularity.interactions[items] > 0)) if context.popularity is not None \
        else 0
    cutoffs = {k for _, k in request.lists} | set(request.exposures) | set(request.by_rank) | set(request.providers)
    within = {k: _within(ranks, k) for k in cutoffs}
    values = {}
    for k in {k for _, k in request.lists}:
        names = [name for name, cut in request.lists if cut == k]
        kept = within[k]
        values.update({(name, k): value for name, value in
                       list_values(context, queries[kept], items[kept], num_queries, names).items()})
    providers = {k: group_exposure(queries[within[k]], context.groups[items[within[k]]], ranks[within[k]],
                                   num_queries, context.num_groups) for k in request.providers}
    counts = ExposureCounts.of(request, items, ranks, within, trained=trained)
    if query_groups is not None and (request.exposures or request.by_rank):
        group_of_row = query_groups[queries]
        parts = []
        for group in range(len(request.group_names)):
            rows = group_of_row == group
            ranked = ranks[rows]
            parts.append(ExposureCounts.of(request, items[rows], ranked, {k: _within(ranked, k) for k in within}))
        counts = counts._replace(groups=tuple(parts))
    return RunItems((QueryItems(values, providers),), counts)


def _within(ranks: np.ndarray, k: int | None) -> np.ndarray | slice:
    """The rows of ``ranks`` within cut-off ``k`` (None: no cut-off), as a mask, or as the slice of all
    rows when they all are (a view, not a copy, of the rows taken)."""
    if k is None:
        return slice(None)
    kept = ranks <= k
    return slice(None) if kept.all() else kept


def list_values(context: ItemContext, users: np.ndarray, items: np.ndarray, num_users: int,
                names: list[str]) -> dict[str, np.ndarray]:
    """The per-list values ``names`` (:data:`LIST_VALUES`) of every user 0..num_users−1, from the
    users' codes and the catalogue indexes of their items (rows within the cut-off); 0 for a user
    without a list (:mod:`prefeval.analyses.beyond_accuracy`)."""
    values: dict[str, np.ndarray] = {}
    layout = ListLayout.of(users, items, num_users)
    if any(NEEDS[name] == "train" for name in names):
        values.update(per_user_popularity(users, items, context.popularity, num_users, layout))
    described = [name for name in names if NEEDS[name] == "item-features"]
    if described:
        values.update(list_feature_values(users, items, context.features, num_users, described, layout))
    values["poprank"] = values.pop("mean_popularity_rank", None)
    return {name: values[name] for name in names}


def note_items(context: ItemContext, counts: ExposureCounts | None, run_ids) -> None:
    """The notes on how the runs' items fit the side inputs: the items outside a catalogue that is not
    strict (module docstring), and each run none of whose items the training data holds (its
    popularity and novelty are those of items nobody trained on)."""
    from prefeval.runtime.notes import note

    if counts is None:
        return
    outside = int(np.sum(counts.outside))
    if outside:
        missing = [what for what, given in (("nobody trained on them", context.popularity),
                                            ("they have no features", context.features),
                                            ("they are in no item group", context.groups)) if given is not None]
        note(f"{outside:,} entries of the runs' lists (e.g. {counts.example!r}) are items not in {context.source}: "
             f"{', '.join(missing)}")
    if context.popularity is not None:
        for run_id, trained in zip(run_ids, np.atleast_1d(counts.trained)):
            if not trained:
                note(f"run {run_id}: {context.source} holds none of its items: its popularity and novelty are "
                     "those of items nobody trained on")
