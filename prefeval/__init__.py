"""prefeval: preference-based and trec_eval-compatible evaluation of ranked runs.

The command line (``prefeval eval``, ``prefeval aggregate``, ``prefeval check``, ...) is a thin
layer over this API:

* :func:`evaluate` and :func:`compare`: metric values and pairwise preferences as DataFrames (and
  :func:`evaluate_by_group`, the metrics by user group), from
  files, DataFrames or dicts;
* :func:`aggregate`: system orderings (mean, Borda, MC4) from per-query eval lines or DataFrames;
* :func:`check`: a validation report on qrels and run files;
* :class:`Evaluation`: the streaming engine behind both, with :func:`evaluation_records` giving the
  JSON-line records of ``prefeval eval``;
* the analyses as modules: ``prefeval.significance``, ``prefeval.sampled`` and ``prefeval.null``
  (:mod:`prefeval.analyses.significance`, :mod:`~prefeval.analyses.sampled_metrics`,
  :mod:`~prefeval.analyses.null`).

Names are imported when first used (``__version__`` too), so ``import prefeval`` (and the command
line's start-up) pays only for what is used.
"""

from importlib import import_module

from prefeval.errors import InputError, UsageError

_PUBLIC = {
    "Evaluation": ("prefeval.engine.evaluation", "Evaluation"),
    "aggregate": ("prefeval.analyses.aggregate", "aggregate"),
    "check": ("prefeval.analyses.check", "check"),
    "compare": ("prefeval.dataframes", "compare"),
    "evaluate": ("prefeval.dataframes", "evaluate"),
    "evaluate_by_group": ("prefeval.dataframes", "evaluate_by_group"),
    "evaluation_records": ("prefeval.report.eval_lines", "evaluation_records"),
    "null": ("prefeval.analyses.null", None),
    "sampled": ("prefeval.analyses.sampled_metrics", None),
    "significance": ("prefeval.analyses.significance", None),
}
"""Every public name, and where it lives (``None``: the module itself)."""


def _version() -> str:
    """The installed version (reading the package metadata takes tens of milliseconds, so it is read
    only when asked for)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prefeval")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name not in _PUBLIC:
        raise AttributeError(f"module 'prefeval' has no attribute {name!r}")
    module, attribute = _PUBLIC[name]
    value = import_module(module) if attribute is None else getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["InputError", "UsageError", "__version__", *_PUBLIC]
