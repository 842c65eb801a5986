"""Beyond-accuracy measures of recommendation lists: popularity and novelty, diversity, coverage,
exposure, and the worst-off-provider-first preference.

They read what the runs' items are, not whether they are relevant: the side inputs of a recommender
evaluation (``eval --train --items --item-features --item-groups``, :mod:`prefeval.io.side`), turned
into per-list values and exposure counts where each run is ranked (:mod:`prefeval.ranking.items`, so
that every engine computes them, in bounded memory when streamed). The formulas are those of
:mod:`prefeval.analyses.beyond_accuracy` and :mod:`prefeval.measures.provider`; ``k`` is the cut-off
(the whole list when not given: ``arp`` against ``arp@10``).

Three kinds:

- **per-list metrics** (:class:`ItemListMetric`), a value per user (query) like any metric, then the
  mean over users: ARP, APLT, EPC, EFD, mean popularity rank (``--train``), intra-list diversity and
  category coverage (``--item-features``); and user coverage, which needs no side input. A user
  without a list has 0 for each (as for every metric: the summary counts every user of the qrels).
- **measures of the whole run** (:class:`RunMeasure`): catalogue coverage, the Gini index and the
  Shannon entropy of the items' exposure, each item group's exposure share and the disparity between
  groups. They are functions of the exposure of every catalogue item (``--items``, or the training
  data's items), summed over every user, so they have no per-user value: they appear on the summary
  lines only (not on per-query lines, pair lines, nor in ``aggregate`` and ``significance``, which
  read per-query values), of the whole run and of each user group's lists (``--user-groups``),
  not of a subsample.
- **a preference**, ``provider``: the worst-off provider group first (:mod:`prefeval.measures.provider`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from prefeval.analyses import beyond_accuracy
from prefeval.errors import UsageError
from prefeval.measures import provider
from prefeval.measures.base import Metric, Param, Preference, register
from prefeval.ranking.positions import Positions

if TYPE_CHECKING:
    from prefeval.ranking.items import ItemRequest

CUTOFF = Param("k", int, None, low=1, meaning="cut-off: only the first k items of each list (all when not given)")
DISCOUNT = Param("discount", int, 0, low=0, high=1, keyword=True,
                 meaning="1: an item at rank r counts 1/log2(1 + r), the attention of DCG")
VARGAS_CASTELLS = "Vargas and Castells, RecSys 2011, doi:10.1145/2043932.2043955"
ABDOLLAHPOURI = "Abdollahpouri, Burke and Mobasher, FLAIRS 2019"


class ItemListMetric(Metric):
    """A per-list measure of :mod:`prefeval.ranking.items` (:data:`~prefeval.ranking.items.LIST_VALUES`):
    its per-user values are computed where each run is ranked, and read here."""

    parameters = (CUTOFF,)
    value: ClassVar[str | None] = None
    """Which per-list value (:data:`~prefeval.ranking.items.LIST_VALUES`): the family's name unless set."""

    @classmethod
    def all_parameters(cls) -> tuple[Param, ...]:
        return cls.parameters  # neither rel= nor judged_only=: relevance plays no part

    @property
    def cutoff(self) -> int | None:
        return self.param("k")

    @property
    def list_value(self) -> str:
        return self.value or self.family

    def compute(self, positions: Positions) -> np.ndarray:
        return positions.items.values[(self.list_value, self.cutoff)]


class PopularityMetric(ItemListMetric):
    """A per-list measure of the items' popularity in the training data (``--train``)."""

    reads_items = "train"


class FeatureMetric(ItemListMetric):
    """A per-list measure of the items' features (``--item-features``)."""

    reads_items = "item-features"


@register
class AverageRecommendationPopularity(PopularityMetric):
    """ARP@k = mean_u (1/|L_u|) Σ_{i ∈ L_u} φ(i): the mean number of training interactions φ(i) of
    the items of a list (popularity bias: higher is more popular)."""

    family = "arp"
    better = -1  # less popularity bias
    summary = "average recommendation popularity: mean training interactions of the listed items"
    cite = ABDOLLAHPOURI
    bounds = (0.0, np.inf)


@register
class LongTailShare(PopularityMetric):
    """APLT@k = mean_u |L_u ∩ tail| / |L_u|: the share of a list's items in the long tail, the tail
    being every training item outside the head (the fewest most popular items whose interactions
    reach 20% of all: ``eval --head-share``)."""

    family = "aplt"
    summary = "average percentage of long-tail items in a list"
    cite = ABDOLLAHPOURI


@register
class ExpectedPopularityComplement(PopularityMetric):
    """EPC@k = mean_u (1/|L_u|) Σ_{i ∈ L_u} (1 − pop(i)/|U_train|), pop(i) the training users of i:
    novelty as the chance that a user has not seen an item (no rank discount, no relevance)."""

    family = "epc"
    summary = "expected popularity complement: novelty, the share of training users who did not see an item"
    cite = VARGAS_CASTELLS


@register
class ExpectedFreeDiscovery(PopularityMetric):
    """EFD@k = mean_u (1/|L_u|) Σ_{i ∈ L_u} −log2(max(pop(i), 1)/|U_train|): novelty as
    self-information (an item nobody trained on counts as seen once)."""

    family = "efd"
    summary = "expected free discovery: novelty as the self-information of an item's popularity"
    cite = VARGAS_CASTELLS
    bounds = (0.0, np.inf)


@register
class MeanPopularityRank(PopularityMetric):
    """poprank@k = mean_u (1/|L_u|) Σ_{i ∈ L_u} rank of φ(i) among the catalogue (1: the most popular,
    tied items sharing the mean of their ranks): lower is more popular."""

    family = "poprank"
    summary = "mean popularity rank of the listed items (1: the most popular)"
    cite = "Vargas and Castells, RecSys 2011 (popularity ranks); Abdollahpouri et al., UMAP 2021"
    bounds = (0.0, np.inf)


@register
class IntraListDiversity(FeatureMetric):
    """ILD@k = mean over a list's unordered pairs of items of 1 − cos(F_i, F_j), F_i the item's set
    of features (``--item-features``): 0 for a list of fewer than two items."""

    family = "ild"
    value = "ild_cosine"
    summary = "intra-list diversity: mean cosine distance between the feature sets of a list's items"
    cite = "Smyth and McClave, ICCBR 2001; Ziegler, McNee, Konstan and Lausen, WWW 2005, doi:10.1145/1060745.1060754"


@register
class IntraListDiversityJaccard(IntraListDiversity):
    """ILD@k with the Jaccard distance 1 − |F_i ∩ F_j| / |F_i ∪ F_j| between feature sets."""

    family = "ild_jaccard"
    value = "ild_jaccard"
    summary = "intra-list diversity: mean Jaccard distance between the feature sets of a list's items"


@register
class CategoryCoverage(FeatureMetric):
    """catcov@k = |∪_{i ∈ L_u} F_i| / m: the share of the m categories (features) that a list covers."""

    family = "catcov"
    summary = "category coverage: share of all categories that a list's items cover"
    cite = "Vargas, Baltrunas, Karatzoglou and Castells, RecSys 2014, doi:10.1145/2645710.2645743"


@register
class UserCoverage(Metric):
    """ucov = 1 when the run gives the user a list (a retrieved item), else 0; its mean is the share
    of the users with a recommendation."""

    family = "ucov"
    summary = "user coverage: share of the users given a list"
    cite = "Herlocker, Konstan, Terveen and Riedl, TOIS 2004, doi:10.1145/963770.963772"
    counts = False

    @classmethod
    def all_parameters(cls) -> tuple[Param, ...]:
        return cls.parameters

    def compute(self, positions: Positions) -> np.ndarray:
        return (positions.num_retrieved > 0).astype(np.float64)


class RunMeasure(Metric):
    """A measure of the whole run, from the exposure of each catalogue item (module docstring):
    :meth:`of_run` gives one value per run (or, :attr:`per_group`, one per run and item group)."""

    parameters = (CUTOFF,)
    reads_items: ClassVar[str | None] = "items"
    per_group: ClassVar[bool] = False

    @classmethod
    def all_parameters(cls) -> tuple[Param, ...]:
        return cls.parameters

    @property
    def cutoff(self) -> int | None:
        return self.param("k")

    @property
    def discounted(self) -> bool:
        return any(p is DISCOUNT for p in self.parameters) and bool(self.param("discount"))

    def compute(self, positions: Positions) -> np.ndarray:
        raise TypeError(f"{self.name} is a measure of the whole run: it has no per-user values")

    def exposure(self, counts, size: int) -> np.ndarray:
        """(R, n): each run's exposure of each catalogue item, from the
        :class:`~prefeval.ranking.items.ExposureCounts` of the whole run."""
        k = self.cutoff
        if self.discounted:
            return np.stack([run.discounted(size) for run in counts.by_rank[k]]) if counts.by_rank[k] else \
                np.zeros((0, size))
        return counts.exposures[k][:, :size].astype(np.float64)

    def of_run(self, counts, context) -> dict[str, np.ndarray]:
        """``{key: (R,)}``: the values of each run (``context``: the
        :class:`~prefeval.ranking.items.ItemContext`)."""
        return {self.name: self.of_exposure(self.exposure(counts, context.size), context)}

    def of_exposure(self, exposure: np.ndarray, context) -> np.ndarray:
        raise TypeError(f"{self.name} computes its values in of_run")


@register
class CatalogueCoverage(RunMeasure):
    """icov@k = |∪_u L_u ∩ catalogue| / n: the share of the catalogue recommended to someone."""

    family = "icov"
    summary = "catalogue coverage: share of the catalogue's items in some list (whole run)"
    cite = "Ge, Delgado-Battenfeld and Jannach, RecSys 2010, doi:10.1145/1864708.1864761"

    def of_exposure(self, exposure: np.ndarray, context) -> np.ndarray:
        return beyond_accuracy.catalogue_coverage(exposure)


@register
class ExposureGini(RunMeasure):
    """Gini@k of the items' exposure over the whole catalogue (0: every item equally exposed, 1: one
    item takes all; unexposed items count at 0); exposure is the number of lists that hold an item,
    or with ``discount=1`` the sum of 1/log2(1 + rank) over them."""

    family = "gini"
    better = -1
    parameters = (CUTOFF, DISCOUNT)
    summary = "Gini index of the items' exposure (whole run; 0: equal exposure)"
    cite = "Vargas and Castells, RecSys 2011; Microsoft Recommenders' gini"

    def of_exposure(self, exposure: np.ndarray, context) -> np.ndarray:
        return beyond_accuracy.gini(exposure)


@register
class ExposureEntropy(RunMeasure):
    """entropy@k = −Σ_i p_i log2 p_i, p_i the item's share of the exposure (``discount=1`` as for
    gini), in [0, log2 n]: higher is more evenly spread."""

    family = "entropy"
    parameters = (CUTOFF, DISCOUNT)
    summary = "Shannon entropy (bits) of the items' exposure (whole run)"
    cite = "Shannon 1948; Microsoft Recommenders' distributional_coverage"
    bounds = (0.0, np.inf)

    def of_exposure(self, exposure: np.ndarray, context) -> np.ndarray:
        return beyond_accuracy.entropy(exposure)


@register
class GroupExposureShare(RunMeasure):
    """expshare@k: each item group's share of the run's exposure (``--item-groups``; exposure as
    gini's, ``discount=1`` as the provider preference's), a key per group:
    ``expshare@10:GROUP``, groups in name order. Items in no group count in the total only."""

    family = "expshare"
    better = 0
    parameters = (CUTOFF, DISCOUNT)
    summary = "each item group's share of the run's exposure (a key per group; whole run)"
    cite = "Singh and Joachims, KDD 2018, doi:10.1145/3219819.3220088"
    reads_items = "item-groups"
    per_group = True

    def of_run(self, counts, context) -> dict[str, np.ndarray]:
        shares = _shares(self.exposure(counts, context.size), context)
        return {f"{self.name}:{name}": shares[:, g] for g, name in enumerate(context.group_names.tolist())}


@register
class GroupExposureDisparity(RunMeasure):
    """disparity@k = max_g share_g − min_g share_g over the item groups' exposure shares (as
    expshare's): 0 when every group is equally exposed, 1 when one group takes all."""

    family = "disparity"
    better = -1
    parameters = (CUTOFF, DISCOUNT)
    summary = "exposure disparity: largest minus smallest item group share of exposure (whole run)"
    cite = "Diaz, Mitra, Ekstrand, Biega and Carterette, CIKM 2020, doi:10.1145/3340531.3411962"
    reads_items = "item-groups"

    def of_run(self, counts, context) -> dict[str, np.ndarray]:
        return {self.name: beyond_accuracy.disparity(_shares(self.exposure(counts, context.size), context))}


def _shares(exposure: np.ndarray, context) -> np.ndarray:
    """(R, G): each item group's share of each run's exposure (R, n)
    (:func:`~prefeval.analyses.beyond_accuracy.group_shares`)."""
    return beyond_accuracy.group_shares(exposure, context.groups[:context.size], context.num_groups)


@register
class WorstOffProviderFirst(Preference):
    """provider@k: the worst-off provider group first (:mod:`prefeval.measures.provider`). Per user,
    each item group's exposure Σ 1/log2(1 + rank) over the list's items of the group (within k), sorted
    ascending, compared lexicographically between the two runs: +1 when the first run gives the
    worst-off group more (then the second worst-off, ...), −1 when less, 0 when every group's exposure
    ties. Every group of ``--item-groups`` counts, so a group missing from a list is its worst-off."""

    family = "provider"
    parameters = (CUTOFF,)
    value_type = np.int8
    reads_items: ClassVar[str | None] = "item-groups"
    summary = "worst-off provider group first: leximin comparison of the groups' exposure in a list"
    cite = provider.CITE

    @property
    def cutoff(self) -> int | None:
        return self.param("k")

    def compare(self, comparison) -> np.ndarray:
        exposure = comparison.positions.items.providers[self.cutoff]
        ordered = provider.worst_off_first(exposure)
        return provider.compare_sorted(ordered[comparison.first], ordered[comparison.second])


SIDE_INPUTS = {"train": "popularity", "item-features": "features", "item-groups": "groups"}
"""The side input each kind of item measure reads, and the part of the item context it fills."""
READ = {"train": "the training interactions", "items": "the whole catalogue", "item-features": "the items' features",
        "item-groups": "the item groups"}
"""What each side input is, as a message says it."""


def item_request(measures, context) -> ItemRequest | None:
    """What every run's ranking must compute for ``measures`` (:class:`~prefeval.ranking.items.ItemRequest`),
    None when no measure reads the items."""
    from prefeval.ranking.items import ItemRequest

    lists = {(m.list_value, m.cutoff) for m in measures if isinstance(m, ItemListMetric)}
    run_level = [m for m in measures if isinstance(m, RunMeasure)]
    providers = {m.cutoff for m in measures if isinstance(m, WorstOffProviderFirst)}
    if not (lists or run_level or providers):
        return None
    return ItemRequest(context, tuple(sorted(lists, key=_by_cutoff)),
                       tuple(sorted({m.cutoff for m in run_level if not m.discounted}, key=_cutoff_key)),
                       tuple(sorted({m.cutoff for m in run_level if m.discounted}, key=_cutoff_key)),
                       tuple(sorted(providers, key=_cutoff_key)))


def _cutoff_key(k: int | None) -> int:
    return -1 if k is None else k


def _by_cutoff(pair: tuple[str, int | None]) -> tuple[str, int]:
    return pair[0], _cutoff_key(pair[1])


def check_item_inputs(measures, context) -> None:
    """A :class:`UsageError` for a measure whose side input is missing (``context``: the
    :class:`~prefeval.ranking.items.ItemContext`, None without side inputs)."""
    for measure in measures:
        needed = measure.reads_items
        if needed is None:
            continue
        missing = context is None or (needed in SIDE_INPUTS and getattr(context, SIDE_INPUTS[needed]) is None)
        if missing:
            raise UsageError(f"{measure.name} reads {READ[needed]}: give --{needed} FILE")
        if isinstance(measure, RunMeasure) and not context.strict:
            raise UsageError(f"{measure.name} counts every item of the catalogue: give it with --items FILE "
                             "(or --train FILE, whose items are then the catalogue)")


def is_item_measure(family: type) -> bool:
    """Whether ``family`` is one of this module's: a measure of the items listed, not of relevance."""
    return family.__module__ == __name__
