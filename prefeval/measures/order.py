"""The order in which prefeval lists its measure families (``prefeval measures``, the valid names in
an error), written out rather than left to the order in which modules happen to be imported.

It is the order of MEASURES.md: the six preferences in the order of the default measure list, then
the families of the metrics of that list, then the other metrics (the wider literature), then those
that make prefeval a drop-in for trec_eval and ir_measures, then those that read the judgments per
subtopic (the intent-aware metrics of ndeval, and the preferences over intents), then those that read
the items of recommendation lists (:mod:`prefeval.measures.items`). It holds
family names only, so that :mod:`prefeval.measures.base` can read it without importing a measure.
Every registered family must be named here exactly once (``tests/test_common.py`` checks it); one
that is not is listed last.
"""

from __future__ import annotations

FAMILY_ORDER: tuple[str, ...] = (
    # the preferences, in the default list's order
    "rpp", "invrpp", "dcgrpp", "lexirecall", "lexiprecision", "rrlexiprecision",
    # the families of the default list's metrics, in its order
    "ap", "rbp", "rr", "ndcg", "rp", "p", "r",
    # the other metrics: where the relevant documents are, then gains discounted by rank
    "f", "success", "auc", "dcg", "ndcg_exp", "cg", "pfound",
    # trec_eval's and ir_measures' other measures: counts and AP's variants, interpolated precision and
    # sets, the judged and unjudged documents, gains
    "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "gm_ap", "yaap",
    "iprec", "iprec_avg", "prauc", "recall_at_precision", "rp_mult", "relative_p", "set_ap", "utility",
    "bpref", "gm_bpref", "infap", "unj", "judged", "compat", "accuracy",
    "ndcg_rel", "rndcg", "gain_shortfall", "binary_gain_shortfall", "ideal_dcg", "trec_rbp", "trec_rbp_resid", "err",
    # measures of other judgments than grades: preference judgments (trec_eval's prefs_*, in its
    # order), then judgment groups (its _avgjg)
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    "ap_avgjg", "p_avgjg", "rp_mult_avgjg",
    # the intent-aware measures of ndeval (judgments per subtopic), in the order of its columns
    "err_ia", "nerr_ia", "alpha_dcg", "alpha_ndcg", "nrbp", "nnrbp", "ap_ia", "p_ia", "strec",
    # the preferences over intents: the six per subtopic, then the worst-off intent
    "rpp_ia", "invrpp_ia", "dcgrpp_ia", "lexirecall_ia", "lexiprecision_ia", "rrlexiprecision_ia", "worst_intent",
    # the measures of the items of recommendation lists (side inputs, prefeval.measures.items):
    # popularity and novelty, diversity, coverage, exposure, then the worst-off provider first
    "arp", "aplt", "epc", "efd", "poprank", "ild", "ild_jaccard", "catcov", "ucov",
    "icov", "gini", "entropy", "expshare", "disparity", "provider",
)

OWN_FAMILIES: tuple[str, ...] = FAMILY_ORDER[:FAMILY_ORDER.index("num_q")]
"""prefeval's own families and those of the wider literature, before the ones that make prefeval a
drop-in for trec_eval and ir_measures: what ``eval -m``'s help lists."""
