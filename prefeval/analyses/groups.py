"""Values by user group: the means of every metric and preference over each group's users, as
running sums per group that the evaluation's :class:`~prefeval.engine.results.Block` s add to as
they stream past (memory: groups × runs per measure, whatever the number of users).

A user's group comes from ``--user-groups`` (:mod:`prefeval.io.side`); a user in no group counts in
the whole run's summary and in no group's. A group's value of a measure is the mean of its users'
values, which is the measure's summary on the group's users alone (the test filters them by hand).
The **worst-off group** of a run, for a metric, is the group of least mean (every per-user metric
of prefeval is better when larger), ties to the first group in name order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from prefeval.runtime.notes import note

if TYPE_CHECKING:  # only named in annotations: `aggregate` does not import the engine
    from prefeval.engine.results import Block


class GroupSums:
    """Sums and counts per group of the per-user values of every metric and preference.

    ``groups``: ``{user: group}``. :meth:`add` one block at a time; :meth:`means` gives, for each
    measure name, an array (G, R) (metrics, R runs) or (G, P) (preferences, P pairs), the groups in
    :attr:`names` order (sorted). A group without users in the run has mean 0 and count 0.
    """

    def __init__(self, groups: Mapping[str, str]):
        self.names = sorted(set(groups.values()))
        code = {name: index for index, name in enumerate(self.names)}
        self._group_of = {user: code[group] for user, group in groups.items()}
        self.sums: dict[tuple[str, str], np.ndarray] = {}
        self.counts = np.zeros(len(self.names), dtype=np.int64)

    def add(self, block: Block) -> None:
        codes = np.array([self._group_of.get(qid, -1) for qid in block.qids], dtype=np.int64)
        kept = codes >= 0
        codes = codes[kept]
        width = len(self.names)
        self.counts += np.bincount(codes, minlength=width)
        for kind, values_by_name in (("metrics", block.metrics), ("preferences", block.preferences)):
            for name, values in values_by_name.items():
                rows = values[:, kept]
                total = np.stack([np.bincount(codes, weights=row, minlength=width) for row in rows], axis=1) \
                    if len(rows) else np.zeros((width, 0))
                key = (kind, name)
                self.sums[key] = self.sums[key] + total if key in self.sums else total

    def means(self, kind: str = "metrics") -> dict[str, np.ndarray]:
        counts = self.counts[:, None]
        return {name: np.divide(total, counts, out=np.zeros_like(total), where=counts > 0)
                for (of_kind, name), total in self.sums.items() if of_kind == kind}

    def worst_off(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For each metric: (the worst-off group's index per run, its mean per run), among the
        groups that have users."""
        out = {}
        present = self.counts > 0
        for name, means in self.means("metrics").items():
            masked = np.where(present[:, None], means, np.inf)
            index = np.argmin(masked, axis=0)
            out[name] = (index, means[index, np.arange(means.shape[1])])
        return out


def read_user_groups(value) -> UserGroups:
    """The groups of ``--user-groups`` (a path or a DataFrame of user, group: :mod:`prefeval.io.side`;
    a user in two groups is an error at its line)."""
    from prefeval.io.side import USER_GROUPS, read_side

    return UserGroups(read_side(value, USER_GROUPS).mapping())


class UserGroups(NamedTuple):
    """Each user's group (``{user: group}``), for the analyses of eval lines by group (``aggregate``
    and ``significance --user-groups``); :attr:`names`, the groups in name order."""

    of_user: dict[str, str]

    @property
    def names(self) -> list[str]:
        return sorted(set(self.of_user.values()))

    def queries(self, qids: Sequence[str], queries: np.ndarray, source: str, sample: int) -> dict[str, np.ndarray]:
        """The queries (among ``queries``, indexes into ``qids``) of each group's users, for the groups
        that have some, in name order; a note says how many of ``queries`` are in no group (of the
        eval lines ``source``, sample ``sample``)."""
        codes = {name: number for number, name in enumerate(self.names)}
        group = np.array([codes.get(self.of_user.get(qids[q]), -1) for q in queries], dtype=np.int64)
        outside = int((group < 0).sum())
        if outside:
            note(f"{source}: {outside:,} of {len(queries):,} users of sample {sample} are in no group of "
                 "--user-groups; they count in no group's values")
        return {name: queries[group == number] for name, number in codes.items() if (group == number).any()}
