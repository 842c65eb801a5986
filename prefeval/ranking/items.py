"""The item context of a recommender evaluation: what the beyond-accuracy measures know of the
items, built once from the side inputs (:mod:`prefeval.io.side`) and used on every block of a run.

- the **catalogue**: a :class:`~prefeval.io.codes.KeyIndex` of item keys (:func:`text_keys`, the keys
  docids are matched by), from ``--items``, else the items of ``--train``, else the items of the runs;
- the **popularity** of each catalogue item in the training data (:class:`Popularity`);
- the **features**: an items × features 0/1 matrix (scipy CSR) from ``--item-features``;
- the **item groups**: a group code per catalogue item (−1: in no group) from ``--item-groups``.

:meth:`ItemContext.reduce` maps a block of retrieved rows (user code, item key, rank; within the
cut-off) to catalogue indexes and reduces it to per-user values of the per-list measures and to
running exposure sums per item (:class:`Exposure`), so that a run is summarised in memory
proportional to its items, not its users. A retrieved item outside the catalogue is an error naming
one (:meth:`indexes`): the catalogue must hold every item of the runs.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from prefeval.analyses.beyond_accuracy import (
    Exposure,
    Popularity,
    category_coverage,
    intra_list_diversity,
    item_features_matrix,
    per_user_popularity,
)
from prefeval.errors import InputError
from prefeval.io.codes import KeyIndex
from prefeval.io.fields import text_keys
from prefeval.io.side import SideTable

POPULARITY_MEASURES = ("arp", "aplt", "epc", "efd", "mean_popularity_rank")
"""The per-list measures read from the training data's popularity."""
FEATURE_MEASURES = ("ild_cosine", "ild_jaccard", "category_coverage")
"""The per-list measures read from the item features."""


class ItemContext(NamedTuple):
    """What the beyond-accuracy measures know of the items (see the module's docstring).
    ``popularity``, ``features`` and ``groups`` are None where their side input was not given."""

    items: np.ndarray
    index: KeyIndex
    source: str
    popularity: Popularity | None
    features: object | None
    groups: np.ndarray | None
    group_names: np.ndarray | None

    @classmethod
    def of(cls, run_items, items: SideTable | None = None, train: SideTable | None = None,
           item_features: SideTable | None = None, item_groups: SideTable | None = None,
           head_share: float = 0.2) -> ItemContext:
        """From the side tables; ``run_items`` (texts) are the runs' items, the catalogue when
        neither ``items`` nor ``train`` is given. Training rows and features of items outside the
        catalogue are left out."""
        if items is not None:
            names, source = np.unique(items.keys), items.source
        elif train is not None:
            names, source = np.unique(train.values), train.source
        else:
            names, source = np.unique(np.asarray(list(run_items), dtype=object)), "the runs"
        index = KeyIndex(text_keys(names.tolist()))
        n = len(names)
        popularity = features = groups = group_names = None
        if train is not None:
            at = index.positions(text_keys(train.values.tolist()))
            kept = at >= 0
            _, user_codes = np.unique(train.keys[kept], return_inverse=True)
            popularity = Popularity.of(user_codes, at[kept], n, head_share=head_share)
        if item_features is not None:
            at = index.positions(text_keys(item_features.keys.tolist()))
            kept = at >= 0
            _, feature_codes = np.unique(item_features.values, return_inverse=True)
            num_features = int(feature_codes.max()) + 1 if len(feature_codes) else 0
            features = item_features_matrix(at[kept], feature_codes[kept], n, num_features)
        if item_groups is not None:
            at = index.positions(text_keys(item_groups.keys.tolist()))
            kept = at >= 0
            group_names, codes = np.unique(item_groups.values, return_inverse=True)
            groups = np.full(n, -1, dtype=np.int64)
            groups[at[kept]] = codes[kept]
        return cls(names, index, source, popularity, features, groups, group_names)

    def indexes(self, item_keys: np.ndarray, item_texts=None) -> np.ndarray:
        """The catalogue index of each item key; an item outside the catalogue is an
        :class:`InputError` naming one (its text, from ``item_texts`` where given)."""
        at = self.index.positions(item_keys)
        missing = np.flatnonzero(at < 0)
        if len(missing):
            row = int(missing[0])
            example = f" (e.g. {item_texts[row]!r})" if item_texts is not None else ""
            lacking = len(np.unique(item_keys[missing]))
            raise InputError(self.source, f"the catalogue ({len(self.items)} items) lacks {lacking} recommended "
                                          f"items{example}; it must hold every item of the runs")
        return at

    def reduce(self, users: np.ndarray, items: np.ndarray, ranks: np.ndarray, num_users: int,
               exposure: Exposure | None = None, discounted: Exposure | None = None) -> dict:
        """The per-list measures of a block: ``{name: values (num_users,)}`` for those the context's
        inputs allow (:data:`POPULARITY_MEASURES`, :data:`FEATURE_MEASURES`), from the users' codes
        0..num_users−1, the catalogue indexes of their items and their ranks (rows within the
        cut-off). ``exposure`` and ``discounted`` (running sums) are added the block's lists."""
        values: dict[str, np.ndarray] = {}
        if self.popularity is not None:
            values.update(per_user_popularity(users, items, self.popularity, num_users))
        if self.features is not None:
            for similarity in ("cosine", "jaccard"):
                values[f"ild_{similarity}"] = intra_list_diversity(users, items, self.features, num_users, similarity)
            values["category_coverage"] = category_coverage(users, items, self.features, num_users)
        with_list = int(np.count_nonzero(np.bincount(users, minlength=num_users)))
        for running in (exposure, discounted):
            if running is not None:
                running.add(items, ranks, users=num_users, users_with_list=with_list)
        return values
