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

from collections.abc import Mapping

import numpy as np

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
