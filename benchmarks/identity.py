"""Byte identity of prefeval's outputs across two versions of its code: a battery of commands.

    python benchmarks/identity.py record DIR [--code CHECKOUT] [--only NAME ...]
    python benchmarks/identity.py compare BEFORE AFTER

``record`` runs every command of :data:`BATTERY` (eval in every format, engine and convention, the
tie policies, summaries, subsampling, trec_eval's and ir_measures' layouts, aggregate, significance,
null, sampled, check, measures, plots as SVG, errors, the Python API) with the prefeval code of
``CHECKOUT`` (default: this checkout; another one is made with ``git worktree add DIR COMMIT``), and
writes each command's stdout, stderr and exit code into ``DIR/NAME.{out,err,code}``. ``compare``
lists the commands whose bytes differ between two recorded folders, and exits 1 if any does.

The inputs are the bundled ``examples/`` and six runs of the TREC 2003 Robust track from the shared
data (``PREFEVAL_SHARED_DATA``, else ``../shared/data`` beside the checkout); commands on robust03 are
skipped, and listed as skipped, without it. Outputs that hold a path of the machine name it
relative to the inputs' folder, so two checkouts record the same bytes.

A refactoring that changes no behaviour leaves ``compare`` silent; a change of behaviour shows up
here as the list of commands it changes, to be named in the commit that makes it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(os.environ.get("PREFEVAL_SHARED_DATA") or ROOT.parent / "shared" / "data")
ROBUST = SHARED / "robust03"
EXAMPLES = ROOT / "examples"

EX_QRELS = "EX/qrels.txt"
EX_RUNS = ["EX/runs/bm25", "EX/runs/dense", "EX/runs/hybrid", "EX/runs/random"]
RB_QRELS = "RB/qrels.txt"
RB_RUNS = [f"RB/runs/input.{name}.gz" for name in
           ("pircRBa1", "MU03rob01", "NLPR03vb10", "humR03dc", "uwmtCR0", "oce03noXbmD")]
RB3 = RB_RUNS[:3]
EVAL_LINES = "WORK/eval.jsonl"
"""eval -q lines of the three first robust03 runs, written by the command ``prepare``."""
SAMPLED_LINES = "WORK/sampled.jsonl"
NULL_LINES = "WORK/null.jsonl"
BOOTSTRAP_LINES = "WORK/bootstrap.jsonl"

IRM = "AP nDCG@10 P@10 R@100 RR Rprec Bpref infAP Judged@10 NumRet NumRelRet NumRel NumQ SetF(beta=2) RBP(p=0.8)@10"


def _eval(*args: str) -> list[str]:
    return ["eval", *args]


BATTERY: dict[str, list[str]] = {
    # preparing the inputs of the analyses (compared too)
    "prepare": ["eval", "-q", "-R", RB_QRELS, *RB3, "-o", EVAL_LINES],
    "prepare-sampled": ["sampled", "-R", RB_QRELS, *RB3, "-m", "ap,ndcg@10", "--sample-size", "100",
                        "--sample-size", "1000", "--num-items", "20000", "-o", SAMPLED_LINES],
    "prepare-null": ["null", "-R", RB_QRELS, *RB3, "-m", "ap,p@10", "--num-items", "5000", "--seed", "1",
                     "-o", NULL_LINES],
    "prepare-bootstrap": ["aggregate", "-P", EVAL_LINES, "-m", "ap,rpp", "--bootstrap", "200", "--seed", "1",
                          "-o", BOOTSTRAP_LINES],
    # eval: JSON lines
    "ex-default": _eval("-q", "-R", EX_QRELS, *EX_RUNS),
    "ex-summary-only": _eval("-R", EX_QRELS, *EX_RUNS),
    "rb-default": _eval("-q", "-R", RB_QRELS, *RB_RUNS),
    "rb-all": _eval("-q", "-M", "all", "-m", "ndcg@10,p@5,10,rbp@0.8,100,bpref,infap,judged@10,err@20,auc",
                    "-R", RB_QRELS, *RB3),
    "rb-levels": _eval("-q", "--topk", "100", "-l", "2", "-R", RB_QRELS, *RB3),
    "rb-binary": _eval("-q", "-b", "2", "-f", "1", "-R", RB_QRELS, *RB3),
    "rb-subsample": _eval("-q", "--samples", "3", "--query_fraction", "0.5", "--label_fraction", "0.7",
                          "--label_fraction_policy", "pool", "--seed", "3", "-R", RB_QRELS, *RB3),
    "rb-ties-expected": _eval("-q", "--ties", "expected", "--seed", "1", "-R", RB_QRELS, *RB_RUNS[:2]),
    "rb-ties-range": _eval("-q", "--ties", "range", "-m", "ap,ndcg@10,rpp,lexiprecision,p@10", "-R", RB_QRELS,
                           *RB3),
    "rb-summaries": _eval("--summary", "mean", "--summary", "median", "--summary", "cvar10", "--summary", "gini",
                          "-m", "ap,ndcg,gm_map,num_rel_ret", "-R", RB_QRELS, *RB3),
    "rb-skip-keep": _eval("-q", "--missing-queries", "skip", "--empty-queries", "keep", "-m", "ap,p@10,rpp",
                          "-R", RB_QRELS, *RB3),
    "rb-complete-judged": _eval("-q", "-c", "-J", "-m", "ap,bpref,p@10", "-R", RB_QRELS, *RB3),
    "rb-stream": _eval("-q", "--engine", "stream", "-R", RB_QRELS, *RB3),
    "rb-stream-jobs": _eval("-q", "--engine", "stream", "--jobs", "2", "-m", "ap,rpp,gm_map", "-R", RB_QRELS, *RB3),
    "rb-memory-jobs1": _eval("-q", "--engine", "memory", "--jobs", "1", "-R", RB_QRELS, *RB3),
    "rb-dask": _eval("-q", "--engine", "dask", "--jobs", "2", "-m", "ap,rpp,ndcg@10", "-R", RB_QRELS, *RB3),
    "rb-foreign-names": _eval("-q", "-m", "map,P.5,10,ndcg_cut.10,recip_rank,Rprec,set_F,nDCG@20,RBP(p=0.8),"
                              "SetP,iprec_at_recall.0.5", "-R", RB_QRELS, *RB3[:2]),
    # eval: other formats
    "rb-tsv": _eval("-q", "--format", "tsv", "-m", "ap,ndcg@10,p@10,rpp,map_cut.10,set_P", "-R", RB_QRELS, *RB3),
    "rb-tsv-one": _eval("-q", "--format", "tsv", "-m", "ap,ndcg,rr,p@10,r@100,rp", "-R", RB_QRELS, RB_RUNS[0]),
    "rb-table": _eval("--format", "table", "-R", RB_QRELS, *RB3),
    "rb-markdown-baseline": _eval("--format", "markdown", "--baseline", "MU03rob01", "-m", "ap,ndcg@10,rpp",
                                  "-R", RB_QRELS, *RB3),
    "rb-latex": _eval("--format", "latex", "--summary", "mean", "--summary", "median", "-m", "ap,p@10",
                      "-R", RB_QRELS, *RB3),
    "rb-trec-eval": _eval("--format", "trec_eval", "-q", "-m", "all_trec", "-R", RB_QRELS, *RB_RUNS[:2]),
    "rb-trec-eval-cJ": _eval("--format", "trec_eval", "-q", "-c", "-J", "-m", "all_trec", "-R", RB_QRELS,
                             RB_RUNS[2]),
    "rb-trec-eval-l2-M": _eval("--format", "trec_eval", "-q", "-l", "2", "--topk", "100", "-m", "official",
                               "-m", "ndcg_cut.5,10", "-m", "set", "-R", RB_QRELS, *RB_RUNS[3:5]),
    "rb-trec-eval-params": _eval("--format", "trec_eval", "-N", "1000", "-m", "utility", "-m", "set_F.0.5",
                                 "-m", "ndcg.1=3.5,2=9", "-m", "rbp.p=0.8", "-m", "iprec_at_recall.0.25,0.75",
                                 "-R", RB_QRELS, RB_RUNS[0]),
    "rb-trec-eval-default": _eval("--format", "trec_eval", "-R", RB_QRELS, RB_RUNS[5]),
    "rb-ir-measures": _eval("--format", "ir_measures", "-q", "-m", IRM, "-R", RB_QRELS, RB_RUNS[0]),
    "rb-ir-measures-runs": _eval("--format", "ir_measures", "-l", "2", "-m", IRM, "-R", RB_QRELS, *RB3),
    "ex-trec-eval": _eval("--format", "trec_eval", "-q", "-c", "-m", "all_trec", "-R", EX_QRELS, *EX_RUNS),
    "ex-ir-measures": _eval("--format", "ir_measures", "-q", "-m", IRM, "-R", EX_QRELS, *EX_RUNS[:2]),
    "ex-tsv": _eval("-q", "--format", "tsv", "-R", EX_QRELS, *EX_RUNS),
    # aggregate
    "agg": ["aggregate", "-P", EVAL_LINES],
    "agg-q": ["aggregate", "-q", "-P", EVAL_LINES, "-m", "rpp", "-m", "ap"],
    "agg-stats": ["aggregate", "-P", EVAL_LINES, "-m", "ap:median,ap:cvar10,ap:gini,rpp", "--format", "tsv"],
    "agg-sub": ["aggregate", "-P", EVAL_LINES, "--query_fraction", "0.5", "--num_samples", "5", "--seed", "7"],
    "agg-correlations": ["aggregate", "-P", EVAL_LINES, "--correlations", "-n"],
    "agg-table": ["aggregate", "-P", EVAL_LINES, "-m", "rpp,ap,lexirecall", "--format", "markdown"],
    "agg-bootstrap-table": ["aggregate", "-P", EVAL_LINES, "-m", "ap,rpp", "--bootstrap", "300", "--seed", "1",
                            "--format", "table"],
    "agg-bootstrap-tsv": ["aggregate", "-P", EVAL_LINES, "-m", "ap", "--bootstrap", "100", "--seed", "2",
                          "--format", "tsv"],
    # significance
    "sig": ["significance", "-P", EVAL_LINES, "-m", "rpp,ap,p@10", "--seed", "1"],
    "sig-baseline-md": ["significance", "-P", EVAL_LINES, "--baseline", "MU03rob01", "--format", "markdown",
                        "--seed", "1"],
    "sig-tsv": ["significance", "-P", EVAL_LINES, "-m", "ap", "--test", "randomization", "--correction", "bh",
                "--seed", "1", "--format", "tsv"],
    # the other analyses
    "null": ["null", "-R", RB_QRELS, *RB3, "-m", "ap", "--num-items", "3000", "--seed", "2"],
    "sampled": ["sampled", "-R", RB_QRELS, *RB3, "-m", "ndcg@10", "--num-items", "10000", "--draws", "20",
                "--seed", "4"],
    "check": ["check", "-R", RB_QRELS, *RB3],
    "check-table": ["check", "-R", EX_QRELS, *EX_RUNS, "--format", "table"],
    "measures": ["measures"],
    "measures-json": ["measures", "--json"],
    # plots, as SVG (the same bytes for the same input)
    "plot-preferences": ["plot", "preferences", EVAL_LINES, "-m", "rpp", "--seed", "1", "-o", "WORK/p.svg"],
    "plot-orderings": ["plot", "orderings", EVAL_LINES, "-m", "rpp,ap,ndcg", "-o", "WORK/o.svg"],
    "plot-sampled": ["plot", "sampled", SAMPLED_LINES, "-o", "WORK/s.svg"],
    "plot-null": ["plot", "null", NULL_LINES, "-m", "ap", "-o", "WORK/n.svg"],
    "plot-ranks": ["plot", "ranks", BOOTSTRAP_LINES, "-o", "WORK/r.svg"],
    # errors
    "err-unknown-measure": _eval("-m", "ndgc@10", "-R", EX_QRELS, EX_RUNS[0]),
    "err-map-at": _eval("-m", "map@10", "-R", EX_QRELS, EX_RUNS[0]),
    "err-missing-file": _eval("-R", EX_QRELS, "EX/runs/nothing"),
    "err-bad-qrels": _eval("-R", "EX/runs/bm25", EX_RUNS[0]),
    "err-trec-eval-option": _eval("--format", "trec_eval", "--ties", "expected", "-R", EX_QRELS, EX_RUNS[0]),
}
"""Every command, by name: arguments of ``prefeval`` with EX (examples/), RB (robust03) and WORK (a
folder for intermediate files) in place of their paths."""

PLOTS = {"plot-preferences": "p.svg", "plot-orderings": "o.svg", "plot-sampled": "s.svg", "plot-null": "n.svg",
         "plot-ranks": "r.svg"}
"""The plot commands and the image each writes: its bytes are the command's output."""

API = """
import sys, prefeval
q, runs = sys.argv[1], sys.argv[2:]
print(prefeval.evaluate(q, runs, ["ap", "ndcg@10", "p@10"], jobs=1).to_csv(index=False), end="")
print(prefeval.compare(q, runs, ["rpp", "ap"], per_query=False, jobs=1).to_csv(index=False), end="")
print(prefeval.evaluate(q, runs, "bpref", per_query=False, empty_queries="keep", missing_queries="skip",
                        jobs=1).to_csv(index=False), end="")
"""
"""What the Python API computes on three robust03 runs (its DataFrames as CSV)."""


def _paths(args: list[str], work: Path) -> list[str]:
    replaced = []
    for arg in args:
        arg = arg.replace("EX/", f"{EXAMPLES}/").replace("RB/", f"{ROBUST}/").replace("WORK/", f"{work}/")
        replaced.append(arg)
    return replaced


def _anonymous(text: bytes, work: Path) -> bytes:
    for path, name in ((str(work), "WORK"), (str(EXAMPLES), "EX"), (str(ROBUST), "RB")):
        text = text.replace(path.encode(), name.encode())
    return text


def record(folder: Path, code: Path, only: list[str]) -> None:
    """Run the battery with the prefeval code of ``code`` and write every result into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PYTHONPATH": str(code), "NO_COLOR": "1", "PYTHONHASHSEED": "0"}
    has_robust = (ROBUST / "qrels.txt").exists()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        commands = {name: args for name, args in BATTERY.items() if not only or name in only
                    or name.startswith("prepare")}
        for name, args in commands.items():
            if not has_robust and any(arg.startswith("RB/") for arg in args):
                print(f"skipped {name}: no robust03 data at {ROBUST}")
                continue
            result = subprocess.run([sys.executable, "-m", "prefeval", *_paths(args, work)], capture_output=True,
                                    env=environment, cwd=work)
            output = result.stdout
            if name in PLOTS and result.returncode == 0:
                output = (work / PLOTS[name]).read_bytes()
            _write(folder, name, _anonymous(output, work), _anonymous(result.stderr, work), result.returncode)
        if has_robust and (not only or "api" in only):
            result = subprocess.run([sys.executable, "-c", API, str(ROBUST / "qrels.txt"),
                                     *_paths(RB3, work)], capture_output=True, env=environment, cwd=work)
            _write(folder, "api", result.stdout, _anonymous(result.stderr, work), result.returncode)


def _write(folder: Path, name: str, out: bytes, err: bytes, code: int) -> None:
    (folder / f"{name}.out").write_bytes(out)
    (folder / f"{name}.err").write_bytes(err)
    (folder / f"{name}.code").write_text(f"{code}\n")
    print(f"{name}: exit {code}, {len(out)} bytes")


def compare(before: Path, after: Path) -> int:
    """The names of the results that differ (or exist in one folder only); 1 if there are any."""
    names = sorted({path.name for path in before.iterdir()} | {path.name for path in after.iterdir()})
    differing = [name for name in names if not (before / name).exists() or not (after / name).exists()
                 or (before / name).read_bytes() != (after / name).read_bytes()]
    for name in differing:
        print(f"differs: {name}")
    print(f"{len(names) - len(differing)} of {len(names)} results identical")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="run the battery and record its outputs")
    recording.add_argument("folder", type=Path)
    recording.add_argument("--code", type=Path, default=ROOT, help="the checkout whose prefeval code runs")
    recording.add_argument("--only", nargs="*", default=[], help="only these commands (and the preparations)")
    comparing = commands.add_parser("compare", help="compare two recorded folders")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.folder, args.code.resolve(), args.only)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
