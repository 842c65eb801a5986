"""prefeval side by side with trec_eval and pytrec_eval, as whole processes, in one run of this script.

    python benchmarks/compare.py [--repeat 5] [--trec-eval PATH] [--reference DIR] [--scenario NAME ...]

Scenarios (robust03 from the shared data; the runs decompressed once into ``benchmarks/cache/``,
since trec_eval does not read gzip):

* ``startup``: ``prefeval --help`` and ``prefeval measures``, the price of every call in a shell loop;
* ``one-run``: one run, the six metrics below, per query, as trec_eval is used in a shell loop:
  ``prefeval eval --format tsv -q -m ap,ndcg,rr,p@10,r@100,rp`` against trec_eval with the same six;
* ``metrics``: the 17 runs, six metrics (AP, nDCG, RR, P@10, R@100, R-precision), per query: one
  ``prefeval eval`` against trec_eval looped over the runs (one process per run, as a shell loop
  runs it) and against one Python process that parses the files and calls pytrec_eval
  (``benchmarks/pytrec_eval_runs.py``);
* ``metrics-30k``: the same on a synthetic collection of 2 runs × 30,000 queries × 100 documents
  (``benchmarks/synthetic.py``), where the cost per query shows;
* ``reference``: ``prefeval eval -q`` against the reference script ``pref_eval.py -q`` (Diaz and
  Ferraro's, https://github.com/diazf/pref_eval, default measures) on the 17 gzipped robust03 runs.
  It is not part of prefeval: give its checkout with ``--reference DIR``, or the scenario is skipped.
* ``diversity``: a TREC Web-track-sized diversity collection (``benchmarks/web_track.py``: 50 topics,
  4 runs of 10,000 documents a topic; the 2012 track's public qrels with ``--web-qrels FILE``, else
  synthetic ones shaped like them): ndeval looped over the runs (one process per run, as the track
  ran it) against ``prefeval ndeval`` looped the same way (the same bytes) and against one
  ``prefeval eval -q`` of ndeval's 21 measures on every run. ndeval is not a dependency: give its
  path with ``--ndeval`` (``gcc -o ndeval ndeval.c -lm``, from github.com/trec-web/trec-web-2014's
  src/eval), or the scenario is skipped.

trec_eval is not a dependency: give its path with ``--trec-eval`` (build it from
https://github.com/usnistgov/trec_eval with ``make``), or the scenarios that need it are skipped.
Python sources (prefeval's and the reference script's) are compiled to bytecode first, as an
installed package is. The commands of a scenario take turns (A B A B ..., after a warm-up turn);
every time is the median over ``--repeat`` turns, wall time alone (no memory sampling, which would
take a share of the machine), and every ratio the median over the turns of prefeval's time divided
by the other command's in the same turn, so that it holds on a noisy machine where the absolute
times may not. Each ratio is checked against the scale issue's target (:data:`TARGETS`). Run it
from the checkout's root, whose ``prefeval`` it times.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import CACHE, ROBUST03, compiled, in_turns, median_timing, turn_ratio  # noqa: E402
from synthetic import Collection, write_collection  # noqa: E402
from web_track import WebTrack, write_web_track  # noqa: E402

STARTUP = "startup"
"""The scenario of two prefeval commands timed alone (the others compare prefeval with other tools)."""

SIX_METRICS = {"prefeval": "ap,ndcg,rr,p@10,r@100,rp",
               "trec_eval": ["map", "ndcg", "recip_rank", "P.10", "recall.100", "Rprec"]}


def robust03_plain() -> tuple[str, list[str]]:
    """The robust03 qrels and runs, the runs decompressed once into the cache."""
    folder = os.path.join(CACHE, "robust03-plain")
    os.makedirs(folder, exist_ok=True)
    runs = []
    for name in sorted(os.listdir(os.path.join(ROBUST03, "runs"))):
        target = os.path.join(folder, name.removesuffix(".gz"))
        if not os.path.exists(target):
            with gzip.open(os.path.join(ROBUST03, "runs", name)) as source, open(target, "wb") as plain:
                shutil.copyfileobj(source, plain)
        runs.append(target)
    return os.path.join(ROBUST03, "qrels.txt"), runs


def trec_eval_loop(trec_eval: str, qrels: str, runs: list[str], measures: list[str]) -> list[str]:
    """One shell command running trec_eval once per run, as a loop in a script does."""
    flags = " ".join(f"-m {m}" for m in measures)
    loop = "; ".join(f"{trec_eval} -q {flags} {qrels} {run}" for run in runs)
    return ["sh", "-c", loop + " > /dev/null"]


def scenarios(names: list[str], trec_eval: str | None, reference: str | None = None, ndeval: str | None = None,
              web_qrels: str | None = None) -> list[tuple[str, dict[str, list[str]]]]:
    """(scenario, {tool: command}) for the scenarios asked for (default: all)."""
    python = sys.executable
    prefeval = [python, "-m", "prefeval"]
    qrels, runs = robust03_plain()
    found = []
    if not names or STARTUP in names:
        found.append((STARTUP, {"prefeval --help": [*prefeval, "--help"],
                                  "prefeval measures": [*prefeval, "measures"]}))
    if not names or "one-run" in names:
        commands = {"prefeval": [*prefeval, "eval", "--format", "tsv", "-q", "-m", SIX_METRICS["prefeval"],
                                 "-R", qrels, runs[0]]}
        if trec_eval:
            flags = [part for name in SIX_METRICS["trec_eval"] for part in ("-m", name)]
            commands["trec_eval"] = [trec_eval, "-q", *flags, qrels, runs[0]]
        found.append(("one-run", commands))
    if not names or "metrics" in names:
        found.append(("metrics", metric_commands(trec_eval, qrels, runs)))
    if not names or "metrics-30k" in names:
        found.append(("metrics-30k", metric_commands(trec_eval, *write_collection(MANY_QUERIES, CACHE))))
    if reference and (not names or "reference" in names):
        gzipped = sorted(os.path.join(ROBUST03, "runs", name) for name in os.listdir(os.path.join(ROBUST03, "runs")))
        found.append(("reference", {
            "prefeval eval -q": [*prefeval, "eval", "-q", "-R", qrels, *gzipped],
            "pref_eval.py -q": [python, os.path.join(reference, "pref_eval.py"), "-q", "-R", qrels, *gzipped]}))
    if ndeval and (not names or DIVERSITY in names):
        found.append((DIVERSITY, diversity_commands(ndeval, *write_web_track(WEB_TRACK, CACHE, web_qrels))))
    return found


DIVERSITY = "diversity"
DIVERSITY_ONE_PROCESS = "prefeval eval (one process)"
WEB_TRACK = WebTrack(runs=4, depth=10_000)
NDEVAL_MEASURES = ("err_ia@5,err_ia@10,err_ia@20,nerr_ia@5,nerr_ia@10,nerr_ia@20,alpha_dcg@5,alpha_dcg@10,"
                   "alpha_dcg@20,alpha_ndcg@5,alpha_ndcg@10,alpha_ndcg@20,nrbp,nnrbp,ap_ia,p_ia@5,p_ia@10,p_ia@20,"
                   "strec@5,strec@10,strec@20")
"""ndeval's 21 columns, by prefeval's names."""


def diversity_commands(ndeval: str, qrels: str, runs: list[str]) -> dict[str, list[str]]:
    """ndeval looped over the runs, prefeval ndeval looped alike, and one prefeval eval of them all."""
    prefeval = f"{sys.executable} -m prefeval ndeval"
    return {
        "prefeval ndeval loop": ["sh", "-c", "; ".join(f"{prefeval} {qrels} {run}" for run in runs) + " > /dev/null"],
        "ndeval loop": ["sh", "-c", "; ".join(f"{ndeval} {qrels} {run}" for run in runs) + " > /dev/null"],
        DIVERSITY_ONE_PROCESS: [sys.executable, "-m", "prefeval", "eval", "-q", "--quiet", "-m", NDEVAL_MEASURES,
                                "-R", qrels, "-o", "/dev/null", *runs],
    }


MANY_QUERIES = Collection(runs=2, queries=30_000, depth=100, relevant=10.0)

TARGETS = {
    (STARTUP, "prefeval --help"): ("< 0.3 s", lambda wall, ratio: wall < 0.3),
    (STARTUP, "prefeval measures"): ("< 0.3 s", lambda wall, ratio: wall < 0.3),
    ("one-run", "trec_eval"): ("prefeval ≤ 1.5 × trec_eval", lambda wall, ratio: ratio <= 1.5),
    ("metrics", "trec_eval loop"): ("prefeval ≤ 0.5 × the loop", lambda wall, ratio: ratio <= 0.5),
    ("metrics", "pytrec_eval"): ("prefeval faster", lambda wall, ratio: ratio < 1.0),
    ("metrics-30k", "trec_eval loop"): ("prefeval ≤ 0.5 × the loop", lambda wall, ratio: ratio <= 0.5),
    ("metrics-30k", "pytrec_eval"): ("prefeval faster", lambda wall, ratio: ratio < 1.0),
    ("reference", "pref_eval.py -q"): ("prefeval ≤ 0.2 × (5 × faster)", lambda wall, ratio: ratio <= 0.2),
    (DIVERSITY, "ndeval loop"): ("prefeval ≤ 2 × ndeval", lambda wall, ratio: ratio <= 2.0),
}
"""The targets of the scale issue, per (scenario, command): what is asked, and whether a command's
median wall time and prefeval's ratio to it meet it."""


def metric_commands(trec_eval: str | None, qrels: str, runs: list[str]) -> dict[str, list[str]]:
    """Six metrics per query on every run: prefeval, trec_eval looped over the runs, pytrec_eval."""
    commands = {"prefeval": [sys.executable, "-m", "prefeval", "eval", "-q", "-m", SIX_METRICS["prefeval"],
                             "-R", qrels, *runs]}
    if trec_eval:
        commands["trec_eval loop"] = trec_eval_loop(trec_eval, qrels, runs, SIX_METRICS["trec_eval"])
    commands["pytrec_eval"] = [sys.executable, os.path.join(HERE, "pytrec_eval_runs.py"), qrels, *runs]
    return commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="the trec_eval executable")
    parser.add_argument("--scenario", action="append", default=[],
                        help="startup, one-run, metrics, metrics-30k, reference, diversity")
    parser.add_argument("--reference", help="a checkout of the reference scripts (pref_eval.py), for 'reference'")
    parser.add_argument("--ndeval", default=shutil.which("ndeval"), help="the ndeval executable, for 'diversity'")
    parser.add_argument("--web-qrels", help="the TREC 2012 Web track's qrels-for-ndeval, for 'diversity'")
    args = parser.parse_args()
    compiled(os.path.join(HERE, "..", "prefeval"), *([args.reference] if args.reference else []))
    lines = ["| scenario | command | wall (median) | prefeval ÷ it (median of the turns) | target | met |",
             "|---|---|---:|---:|---|---|"]
    for name, commands in scenarios(args.scenario, args.trec_eval, args.reference, args.ndeval, args.web_qrels):
        runs = in_turns(commands, args.repeat)
        first = next(iter(runs.values()))
        for tool, timings in runs.items():
            wall = median_timing(timings).wall
            ratio = turn_ratio(first, timings) if timings is not first and name != STARTUP else None
            target, met = TARGETS.get((name, tool), ("", None))
            if name == DIVERSITY and tool == DIVERSITY_ONE_PROCESS:
                ratio = None  # prefeval itself: the next line compares it with ndeval
            if name == DIVERSITY and tool == "ndeval loop":  # the one process too, against the same loop
                ratio_one = turn_ratio(runs[DIVERSITY_ONE_PROCESS], timings)
                lines.append(f"| {name} | ndeval loop (against {DIVERSITY_ONE_PROCESS}) | {wall:.3f} s "
                             f"| {ratio_one:.2f} | {target} | {'yes' if ratio_one <= 2.0 else 'no'} |")
            verdict = "" if not target else ("yes" if met(wall, ratio) else "no")
            lines.append(f"| {name} | {tool} | {wall:.3f} s | {'' if ratio is None else f'{ratio:.2f}'} "
                         f"| {target} | {verdict} |")
            print(lines[-1], file=sys.stderr, flush=True)
    options = "".join(f" --scenario {name}" for name in args.scenario)
    print(f"Command: `python benchmarks/compare.py --repeat {args.repeat}{options}` (the commands of a scenario "
          f"taking turns, {args.repeat} turns after a warm-up; whole processes).\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
