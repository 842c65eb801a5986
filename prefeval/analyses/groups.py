"""Values by user group (``eval --user-groups``): every metric and preference summarised over each
group's users alone, as the blocks of the evaluation stream past.

A user's group comes from ``--user-groups`` (:mod:`prefeval.io.side`); a user in no group counts in
the whole run's summary and in no group's (the command line notes how many). Each group has its own
:class:`~prefeval.engine.results.RunningSummary`, to which each block gives the columns of the
group's users (:meth:`~prefeval.engine.results.Block.columns`), in query order: a group's summary is
therefore the summary of the evaluation of the group's users alone, bit for bit (the same values added
in the same order: the test filters the files by hand), with every aggregator, convention, statistic
and tie policy of the plain one. Memory: a running summary per group (groups × runs per measure).

A partition evaluated by a worker (``--engine dask``) keeps its groups' columns (:attr:`partial`: a
partition's worth of values) and the client replays them in partition order (:meth:`merge`), so the
sums are added as in one process.

``aggregate`` and ``significance --user-groups`` read per-query lines: :meth:`UserGroupIndex.queries`
gives the queries of each group's users.

The **worst-off group** of a run, for a metric, is the group whose summary of the metric is least
(most, for a metric that is better when smaller, such as ARP and the Gini index of exposure:
:attr:`~prefeval.measures.base.Measure.better`; none for one that is neither, such as a group's share
of exposure), ties to the first group in name order, among the groups that have users
(:func:`worst_off`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from prefeval.runtime.notes import note

if TYPE_CHECKING:  # only named in annotations: `aggregate` does not import the engine
    from prefeval.engine.results import Block, RunningSummary, Summary


class UserGroupIndex:
    """The users' groups of ``eval --user-groups``, found by the users' keys (:mod:`prefeval.io.fields`):
    the groups' :attr:`names`, in name order, and :meth:`codes`, each user's group as its number
    among them (−1: in none). Made from the table as read (:func:`~prefeval.io.side.read_side`), no
    text made per user: a dict ``{user: group}`` of a million users took 1.3 s to make from the file
    and 0.9 s more to turn into codes, where the keys take 0.4 s in all."""

    __slots__ = ("names", "_users", "_groups")

    def __init__(self, users: np.ndarray, groups: np.ndarray, names: list[str]):
        from prefeval.io.codes import KeyIndex

        self.names, self._users, self._groups = names, KeyIndex(users), groups

    @classmethod
    def of(cls, value) -> UserGroupIndex:
        """From a path or a DataFrame of (user, group) (:mod:`prefeval.io.side`: a user in two groups
        is an error at its line), or from a dict ``{user: group}``."""
        from prefeval.io.fields import TextColumn
        from prefeval.io.side import USER_GROUPS, read_side, sorted_codes

        if isinstance(value, Mapping):
            users, groups = TextColumn.of_texts(list(value)), TextColumn.of_texts(list(value.values()))
        else:
            table = read_side(value, USER_GROUPS)
            users, groups = table.keys, table.values
        _, names, codes = sorted_codes(groups)
        return cls(users.keys, codes, [str(name) for name in names])

    def codes(self, users: Sequence[str]) -> np.ndarray:
        """The group of each user of ``users`` (their ids), −1 for a user in no group."""
        from prefeval.io.fields import text_keys

        at = self._users.positions(text_keys(users))
        return np.where(at >= 0, self._groups[at], -1)

    def queries(self, qids: Sequence[str], queries: np.ndarray, source: str, sample: int) -> dict[str, np.ndarray]:
        """The queries (among ``queries``, indexes into ``qids``) of each group's users, for the groups
        that have some, in name order; a note says how many of ``queries`` are in no group (of the
        eval lines ``source``, sample ``sample``)."""
        group = self.codes([qids[q] for q in queries])
        outside = int((group < 0).sum())
        if outside:
            note(f"{source}: {outside:,} of {len(queries):,} users of sample {sample} are in no group of "
                 "--user-groups; they count in no group's values")
        return {name: queries[group == number] for number, name in enumerate(self.names) if (group == number).any()}


class GroupSummaries:
    """A running summary per group of users (module docstring).

    ``groups``: the users' groups; ``running``: makes an empty running summary (the evaluation's
    :meth:`~prefeval.engine.evaluation.Evaluation.running_summary` for the sample). :meth:`add` the
    blocks in query order; :meth:`summaries` gives each group's :class:`Summary`, groups in name order.
    """

    def __init__(self, groups: UserGroupIndex, running: Callable[[], RunningSummary], partial: bool = False):
        self.names = groups.names
        self._groups = groups
        self._running = running
        self.partial = partial
        self.running: dict[int, RunningSummary] = {}
        self.blocks: list[tuple[int, Block]] = []
        """Of a partial: (group, the block of its users), in query order, replayed by :meth:`merge`."""
        self.ungrouped = 0
        """How many queries (users) were in no group."""

    def add(self, block: Block) -> None:
        codes = self._groups.codes(block.qids)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(-1, len(self.names) + 1))
        self.ungrouped += int(bounds[1] - bounds[0])
        for group in range(len(self.names)):
            index = order[bounds[group + 1]:bounds[group + 2]]
            if len(index):
                self._add(group, block.columns(index))

    def _add(self, group: int, block: Block) -> None:
        if self.partial:
            self.blocks.append((group, block))
            return
        if group not in self.running:
            self.running[group] = self._running()
        self.running[group].add(block)

    def merge(self, partial: GroupSummaries) -> None:
        """Add a partial's blocks (partitions merged in query order), as :meth:`add` would have."""
        for group, block in partial.blocks:
            self._add(group, block)
        self.ungrouped += partial.ungrouped

    def summaries(self, pair_names: list[str], extras_of_pairs) -> dict[str, Summary]:
        """``{group: its Summary}`` for every group with users, in name order, made as the
        evaluation makes its own (:meth:`RunningSummary.summary` of the same arguments)."""
        return {self.names[group]: self.running[group].summary(pair_names, extras_of_pairs)
                for group in sorted(self.running)}


def worst_off(groups: Mapping[str, Summary]) -> dict[str, tuple[list[str], np.ndarray]]:
    """For each metric of the group summaries ``groups`` (groups with users, in name order): (the
    worst-off group of each run, its value per run); ties to the first group in name order."""
    names = list(groups)
    if not names:
        return {}
    out = {}
    for metric in next(iter(groups.values())).metrics:
        direction = better(metric)
        if not direction:
            continue
        values = np.stack([groups[name].metrics[metric] for name in names])  # (G, R)
        index = np.argmin(values, axis=0) if direction > 0 else np.argmax(values, axis=0)
        out[metric] = ([names[i] for i in index.tolist()], values[index, np.arange(values.shape[1])])
    return out



def better(metric: str) -> int:
    """:attr:`~prefeval.measures.base.Measure.better` of the family a summary key names
    (``arp@10``, ``expshare@10:GROUP``), 1 for a key no family names."""
    from prefeval.measures.base import REGISTRY

    family = REGISTRY.get(metric.split("@")[0].split(",")[0].split(":")[0].lower())
    return family.better if family is not None else 1


def read_user_groups(value) -> UserGroupIndex:
    """The groups of ``--user-groups`` (a path or a DataFrame of user, group: :mod:`prefeval.io.side`;
    a user in two groups is an error at its line), for the analyses of eval lines by group
    (``aggregate`` and ``significance --user-groups``: :meth:`UserGroupIndex.queries`)."""
    return UserGroupIndex.of(value)
