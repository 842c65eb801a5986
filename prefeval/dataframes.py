"""The Python API: evaluations as pandas DataFrames.

>>> import prefeval
>>> metrics = prefeval.evaluate("qrels.txt", ["runA", "runB"], ["ap", "ndcg@10"])
>>> prefs = prefeval.compare("qrels.txt", ["runA", "runB"], ["rpp", "lexiprecision"])
>>> orderings = list(prefeval.aggregate(prefs))

``qrels`` and the runs may be file paths (text, or Parquet and Arrow files and directories of them),
pandas DataFrames or pyarrow Tables (their columns named as TREC tools, ir_measures, PyTerrier or
recommender toolkits name them: ``query_id``/``qid``/``user_id``, ``doc_id``/``docno``/``item_id``,
``relevance``/``label``/``rating`` or ``score``/``prediction``; :mod:`prefeval.io.columns`) or dicts
``{qid: {docid: value}}``; ``runs`` is a list or a dict ``{run name: run}`` (:mod:`prefeval.io.inputs`).
``qrels_columns`` and ``run_columns`` name the columns of the qrels' table and of every run's that is
a table (``{"qid": "user", "docid": "item", "grade": "rating"}``, or ``"qid=user,docid=item,..."``),
as ``--qrels-columns`` and ``--run-columns`` do. Measures may be named as prefeval, trec_eval or
ir_measures name them (``ap``, ``map``, ``AP``).

``measures`` is one name or a list of names. Options are those of ``prefeval eval``, under its
names (:meth:`prefeval.engine.evaluation.Evaluation.from_files`: ``measure_set``, ``binary_relevance``,
``relevance_floor``, ``relevance_level``, ``topk``, ``samples``, ``query_fraction``,
``label_fraction``, ``label_fraction_policy``, ``seed``, ``jobs``, ``ties``, ``draws``,
``rel_format``); an unknown one is a :class:`~prefeval.errors.UsageError` that lists them.
``rel_format`` says what ``qrels`` holds (:data:`prefeval.io.judgments.KINDS`): a qrels (the
default), preference judgments (``prefs``, ``qrels_prefs``, ``pairs``) or judgment groups
(``qrels_jg``), read from a path and by their own measures
(:mod:`prefeval.measures.judgments`): ``prefeval.evaluate("prefs.txt", runs, "all_prefs",
rel_format="prefs")``. ``ties="expected"`` makes every value
its expectation over random orders of the documents with equal scores; ``ties="range"`` adds the
columns ``<measure>_ties_min`` and ``<measure>_ties_max`` (:mod:`prefeval.measures.ties`). What the
command line notes on stderr (queries dropped or missing, a seed drawn) comes as
:class:`~prefeval.runtime.notes.Note` warnings.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prefeval.engine.evaluation import Block, Evaluation, Summary
from prefeval.errors import UsageError
from prefeval.io.inputs import with_columns

COLUMN_OPTIONS = ("qrels_columns", "run_columns")
"""The options that name the columns of tables (:func:`prefeval.io.inputs.with_columns`)."""
OPTIONS = tuple(name for name in inspect.signature(Evaluation.from_files).parameters
                if name not in ("qrels", "runs", "measures", "progress", "user_groups")) + COLUMN_OPTIONS
"""The options :func:`evaluate` and :func:`compare` take, as ``prefeval eval`` names them."""


def evaluate(qrels, runs, measures: str | Sequence[str] | None = (), *, per_query: bool = True,
             **options) -> pd.DataFrame:
    """Metric values: columns ``sample, run, qid`` and one per metric, a row per run and query.

    With ``per_query=False``, a row per sample and run holds the means over queries (qid ``all``) and
    the values of the measures of the whole run (``gini@10``, ``expshare@10:GROUP``, ...:
    :mod:`prefeval.measures.items`), which have no per-query value and no column per query.
    ``train``, ``items``, ``item_features``, ``item_groups``: the side inputs of the item measures
    (paths or DataFrames), as ``eval --train`` and the others.
    """
    evaluation = _evaluation(qrels, runs, measures, options)
    labels = {"run": np.array(evaluation.run_ids, dtype=object)}
    return _frame(evaluation, "metrics", labels, [m.name for m in evaluation.metric_measures], per_query)


def compare(qrels, runs, measures: str | Sequence[str] | None = (), *, per_query: bool = True,
            **options) -> pd.DataFrame:
    """Preferences (metrics as differences): columns ``sample, runi, runj, qid`` and one per measure,
    a row per pair of runs (in the order given, i < j) and query.

    With ``per_query=False``, a row per sample and pair holds the means over queries (qid ``all``).
    """
    evaluation = _evaluation(qrels, runs, measures, options)
    run_ids = np.array(evaluation.run_ids, dtype=object)
    first, second = ((np.array(side, dtype=np.int64) for side in zip(*evaluation.pairs)) if evaluation.pairs
                     else ([], []))
    labels = {"runi": run_ids[first], "runj": run_ids[second]}
    return _frame(evaluation, "preferences", labels, [m.name for m in evaluation.pair_measures], per_query)


def evaluate_by_group(qrels, runs, measures: str | Sequence[str] | None = (), *, user_groups,
                      **options) -> pd.DataFrame:
    """Each metric's mean over the users of each group (``--user-groups``): columns ``group, run,
    users`` and one per metric, a row per group with users and run (:mod:`prefeval.analyses.groups`);
    the worst-off group's values are ``frame.groupby("run")[metrics].min()``.
    ``user_groups``: a path or a DataFrame of (user, group) (:mod:`prefeval.io.side`); a user in two
    groups is an :class:`~prefeval.errors.InputError`, users in no group count in none."""
    evaluation = _evaluation(qrels, runs, measures, options, user_groups=user_groups)
    summary = next(result for result in evaluation.results() if isinstance(result, Summary))
    names = [m.name for m in evaluation.metric_measures]
    runs_of = np.array(evaluation.run_ids, dtype=object)
    width = len(runs_of)
    groups = summary.groups
    frame = pd.DataFrame({
        "group": np.repeat(np.array(list(groups), dtype=object), width),
        "run": np.tile(runs_of, len(groups)),
        "users": np.repeat(np.array([group.num_queries for group in groups.values()], dtype=np.int64), width),
        **{name: np.concatenate([group.metrics[name] for group in groups.values()]) if groups else np.zeros(0)
           for name in names},
    })
    return frame


def _evaluation(qrels, runs, measures, options: dict, user_groups=None) -> Evaluation:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise UsageError(f"unknown option(s) {', '.join(unknown)}; the options are {', '.join(OPTIONS)}")
    if runs is None:
        raise UsageError("runs are needed: a path, a DataFrame, Table or dict of one run, or a list or dict of runs")
    qrels, runs = with_columns(qrels, runs, *(options.pop(name, None) for name in COLUMN_OPTIONS))
    return Evaluation.from_files(qrels, runs, measures, user_groups=user_groups, **options)


def _frame(evaluation: Evaluation, kind: str, labels: dict[str, np.ndarray], names: list[str],
           per_query: bool) -> pd.DataFrame:
    """Stack the ``kind`` values ("metrics" or "preferences") of every result into one frame."""
    parts = []
    for result in evaluation.results():
        values = getattr(result, kind)
        if isinstance(result, Block) and per_query:
            count = len(result.qids)
            columns = {label: _texts(np.repeat(entities, count)) for label, entities in labels.items()}
            columns["qid"] = _texts(np.tile(np.array(result.qids, dtype=object), len(next(iter(labels.values())))))
        elif isinstance(result, Summary) and not per_query:
            columns = {label: _texts(entities) for label, entities in labels.items()}
            columns["qid"] = _texts(np.full(len(next(iter(labels.values()))), "all", dtype=object))
        else:
            continue
        columns.update({name: values[name].reshape(-1) for name in names})
        # the keys ties add (prefeval.measures.ties): as on eval's lines, pair values only in the summary
        extras = (result.metric_extras if kind == "metrics"
                  else result.pair_extras if isinstance(result, Summary) else {})
        columns.update({key: extra.reshape(-1) for key, extra in extras.items()})
        if kind == "metrics" and isinstance(result, Summary):  # the other statistics of --summary
            columns.update({key: values.reshape(-1) for key, values in result.statistics.items()})
            # the measures of the whole run (gini@10, expshare@10:GROUP, ...: prefeval.measures.items)
            columns.update({key: values[key].reshape(-1) for key in _run_measure_keys(evaluation, values)})
        frame = pd.DataFrame({"sample": result.sample, **columns})
        reported = getattr(result, "metric_reported" if kind == "metrics" else "pair_reported", None)
        if isinstance(result, Block) and reported is not None:  # the queries a run lacks, under skip
            frame = frame[reported.reshape(-1)]
        parts.append(frame)
    empty = pd.DataFrame(columns=["sample", *labels, "qid", *names])
    return pd.concat(parts, ignore_index=True) if parts else empty


def _run_measure_keys(evaluation: Evaluation, values: dict) -> list[str]:
    """The keys of the measures of the whole run among a summary's ``values``: a measure's name, or
    its name and a group (``expshare@10:GROUP``)."""
    names = [measure.name for measure in getattr(evaluation, "run_measures", ())]
    return [key for key in values if any(key == name or key.startswith(name + ":") for name in names)]


def _texts(values: np.ndarray) -> pd.Series:
    """Ids (run ids, query ids) as pandas infers text (under pandas 3 its ``str`` dtype), or as Python
    objects when one holds a byte that is not UTF-8 (a surrogate escape), which that dtype cannot
    hold once pyarrow is installed and stores it."""
    try:
        return pd.Series(values)
    except UnicodeEncodeError:
        return pd.Series(values, dtype=object)
