"""Start-up: one robust03 run and six measures, prefeval beside trec_eval (issue 27, item 6).

    python benchmarks/run.py --scenario startup [--trec-eval PATH] [--repeat 21]

Whole processes, taking turns (:func:`run.in_turns`), the median of each and the median of the turns'
ratios to trec_eval:

* ``trec_eval -m map -m ndcg -m P.10 -m recip_rank -m recall.100 -m Rprec QRELS RUN``;
* ``prefeval eval --format trec_eval`` with the same names, whose output must be trec_eval's bytes;
* ``prefeval eval -m ap -m ndcg -m p@10 -m rr -m r@100 -m rp``, JSON lines (the default output);
* the latter as this checkout's own Python starts it (``python -m prefeval``), for comparison.

The run is robust03's ``input.pircRBa1``, decompressed into the cache (trec_eval reads no gzip);
trec_eval is ``--trec-eval PATH`` or ``$PREFEVAL_TREC_EVAL``, and the scenario is skipped, saying so,
without it or without robust03.

prefeval is timed as a user runs it: the ``prefeval`` command of a regular install, a wheel of this
checkout installed in a virtual environment of its own (``benchmarks/cache/startup-venv``, made again
at every run; its dependencies are the running Python's, on a path line of a ``.pth`` file). An
editable install (``pip install -e``) adds an import hook, setuptools' finder, that every start of
its environment's Python runs whatever it runs (it imports ``importlib.util`` and ``pathlib``: 15 ms
here), which is why the last command is slower.
"""

from __future__ import annotations

import gzip
import os
import shutil
import site
import subprocess
import sys
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUN = "input.pircRBa1"
TREC_EVAL_NAMES = ("map", "ndcg", "P.10", "recip_rank", "recall.100", "Rprec")
PREFEVAL_NAMES = ("ap", "ndcg", "p@10", "rr", "r@100", "rp")
"""The six measures, as trec_eval and as prefeval name them."""
TARGET = 1.5
"""The most prefeval may take, in times trec_eval's wall time (issue 27)."""


def missing(trec_eval: str | None, robust03: str) -> str | None:
    """Why the scenario cannot run (None when it can)."""
    if not trec_eval:
        return "no trec_eval: give --trec-eval PATH or set PREFEVAL_TREC_EVAL"
    if not (os.path.isfile(trec_eval) and os.access(trec_eval, os.X_OK)):
        return f"trec_eval {trec_eval!r} is not an executable file"
    if not os.path.exists(os.path.join(robust03, "runs", RUN + ".gz")):
        return f"no robust03 run {RUN}.gz under {robust03} (set PREFEVAL_ROBUST03)"
    return None


def regular_install(cache: str) -> str:
    """The ``prefeval`` command of a regular install of this checkout (module docstring), made anew."""
    folder = os.path.join(cache, "startup-venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    python = os.path.join(folder, "bin", "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", ROOT], check=True,
                   stdout=subprocess.DEVNULL)
    installed = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                               capture_output=True, text=True).stdout.strip()
    with open(os.path.join(installed, "prefeval-dependencies.pth"), "w") as handle:
        handle.write("\n".join(site.getsitepackages()) + "\n")
    return os.path.join(folder, "bin", "prefeval")


def commands(trec_eval: str, robust03: str, cache: str) -> dict[str, list[str]]:
    """The commands timed, by name, on the run decompressed into ``cache``."""
    qrels, run = os.path.join(robust03, "qrels.txt"), os.path.join(cache, RUN)
    if not os.path.exists(run):
        with gzip.open(os.path.join(robust03, "runs", RUN + ".gz")) as source, open(run + ".tmp", "wb") as target:
            shutil.copyfileobj(source, target)
        os.replace(run + ".tmp", run)
    prefeval = regular_install(cache)
    trec_eval_names = [word for name in TREC_EVAL_NAMES for word in ("-m", name)]
    prefeval_names = [word for name in PREFEVAL_NAMES for word in ("-m", name)]
    return {
        "trec_eval": [trec_eval, *trec_eval_names, qrels, run],
        "prefeval --format trec_eval": [prefeval, "eval", "--format", "trec_eval", *trec_eval_names, "-R", qrels, run],
        "prefeval (JSON lines)": [prefeval, "eval", *prefeval_names, "-R", qrels, run],
        "python -m prefeval (editable)": [sys.executable, "-m", "prefeval", "eval", *prefeval_names, "-R", qrels, run],
    }


def same_output(commands: dict[str, list[str]]) -> bool:
    """Whether ``prefeval eval --format trec_eval`` writes trec_eval's bytes."""
    outputs = [subprocess.run(commands[name], check=True, capture_output=True).stdout
               for name in ("trec_eval", "prefeval --format trec_eval")]
    return outputs[0] == outputs[1]


def report(result: dict) -> str:
    """The scenario's table (or why it was skipped)."""
    if "skipped" in result:
        return f"\nStart-up: skipped: {result['skipped']}.\n"
    lines = [
        "",
        f"Start-up: robust03's {RUN}, six measures ({', '.join(TREC_EVAL_NAMES)}), whole processes taking turns, "
        f"{result['repeat']} turns after a warm-up (median wall time; ratio: median of the turns' ratios to "
        f"trec_eval; target: {TARGET}); load average before and after: {result['load'][0]} / {result['load'][1]}:",
        "",
        "| command | wall time | ÷ trec_eval |",
        "|---|---:|---:|",
    ]
    for name, wall in result["walls"].items():
        ratio = f"{result['ratios'][name]:.2f}" if name in result["ratios"] else ""
        lines.append(f"| {name} | {wall * 1000:.0f} ms | {ratio} |")
    lines += ["", f"prefeval --format trec_eval writes trec_eval's bytes: {'yes' if result['same'] else 'NO'}."]
    return "\n".join(lines) + "\n"
