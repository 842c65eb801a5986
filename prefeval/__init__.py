"""prefeval: preference-based and trec_eval-compatible evaluation of ranked runs.

The command line (``prefeval eval``, ``prefeval aggregate``, ``prefeval check``, ...) is a thin
layer over this API:

* :func:`evaluate` and :func:`compare`: metric values and pairwise preferences as DataFrames, from
  files, DataFrames or dicts;
* :func:`aggregate`: system orderings (mean, Borda, MC4) from per-query eval lines or DataFrames;
* :func:`check`: a validation report on qrels and run files;
* :class:`Evaluation`: the streaming engine behind both, with :func:`evaluation_records` giving the
  JSON-line records of ``prefeval eval``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prefeval")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

from prefeval.aggregate import aggregate  # noqa: E402
from prefeval.api import compare, evaluate  # noqa: E402
from prefeval.check import check  # noqa: E402
from prefeval.errors import InputError, UsageError  # noqa: E402
from prefeval.evaluation import Evaluation  # noqa: E402
from prefeval.records import evaluation_records  # noqa: E402

__all__ = [
    "Evaluation",
    "InputError",
    "UsageError",
    "__version__",
    "aggregate",
    "check",
    "compare",
    "evaluate",
    "evaluation_records",
]
