"""The tool layouts to the last printed digit: prefeval's ``--format ir_measures`` and ``--format
trec_eval`` against the tools' own output, line for line, on many small random collections.

    python benchmarks/last_digit.py ir_measures [--collections 300] [--first-seed 0]
    python benchmarks/last_digit.py trec_eval --trec-eval PATH [--collections 600] [--first-seed 0] [--large]

A value on the edge of a printed digit (0.59375 printed with four decimals) prints as the tool
prints it only when prefeval computes it in the tool's own order of operations
(:mod:`prefeval.ranking.conventions`, ``arithmetic`` and ``summary_order``): small collections make
such values common (sums of a few fractions land on .5 of the last digit).

The collections (:func:`collection`): 1 to 4 queries (``--large``: 12) with numeric ids (gdeval reads
no other), each with 1 to 8 judged documents (``--large``: 30) graded -2 to 4, a fifth of them
without a relevant document, the qrels' lines shuffled; 1 to 3 runs, each lacking a query of the
qrels now and then (never under trec_eval without ``-c``, where trec_eval 10.0 stops at such a
query), listing a query the qrels lack now and then, its queries in a random order, 1 to 8
documents a query (``--large``: 35) among the judged ones and unjudged ones, with tied scores in
every other collection.

* ``ir_measures``: every run on its own, as ``ir_measures QRELS RUN MEASURES -q`` prints it (its
  command line, run in this process) against ``prefeval eval --format ir_measures -q -m MEASURES``,
  for every group of :data:`IR_MEASURES_GROUPS` (the measures ir_measures computes in one call
  without mixing them up: its pytrec_eval provider computes ``NumRet`` within a ``judged_only``
  call there is one, and the plain ``nDCG`` within a call with ``gains=``). The per-query lines are
  compared as sets (ir_measures orders them by the program that computes each measure, in an
  order that changes with Python's hash seed; prefeval query by query), the summary lines in order.
  Tied scores only for the measures of pytrec_eval (the other providers break ties their own way).
* ``trec_eval``: ``trec_eval OPTIONS -m all_trec QRELS RUN`` for every run against ``prefeval eval
  --format trec_eval OPTIONS -m all_trec QRELS RUNS...``, byte for byte, for every option set of
  :data:`TREC_EVAL_OPTIONS` (``-M`` is prefeval's ``--topk``).

What differs by design is counted apart, not as a difference (:func:`excluded`): gdeval's values
(``ERR@k``, ``nDCG(dcg='exp-log2')@k``), which it prints with five decimals and ir_measures reads back,
so that their fourth decimal may be one off; ir_measures' ``nan`` for ``IPrec(judged_only=True)`` on
a query without relevant documents; the per-query lines of ``Accuracy`` that ir_measures leaves out
(no relevant document retrieved within the cut-off: no line, and a mean over the others; its
division by zero where no non-relevant one is, a ZeroDivisionError, skips the group); trec_eval's
``-nan`` under ``-J`` (``iprec_at_recall``, ``11pt_avg`` on a query left without documents). A
query of the qrels whose every entry has a negative grade crashes both trec_eval 10.0 and
pytrec_eval, so the collections have none.

It prints the counts: collections, outputs and lines compared, lines that differ (each, up to 20),
lines excluded by reason; and exits 1 when a line differs. ``tests/test_ir_measures_oracle.py`` and
``tests/test_trec_eval_oracle.py`` run it on a few collections.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

IR_MEASURES_GROUPS: dict[str, list[str]] = {
    "pytrec_eval": ["AP", "AP@5", "AP@10", "nDCG", "nDCG@5", "nDCG@10", "P@5", "P@10", "R@5", "R@10", "RR", "Rprec",
                    "Success@1", "Success@5", "Bpref", "BPref", "infAP", "IPrec@0.0", "IPrec@0.3", "IPrec@0.5",
                    "IPrec@1.0", "SetP", "SetR", "SetF", "SetF(beta=2.0)", "SetF(beta=0.25)", "SetAP", "SetRelP",
                    "NumQ", "NumRet", "NumRel", "NumRelRet", "NumRet(rel=2)", "P(rel=2)@5", "AP(rel=2)",
                    "Rprec(rel=2)", "RR(rel=2)", "Success(rel=2)@5", "SetP(rel=2)", "SetAP(rel=2)", "SetF(rel=2)",
                    "SetR(rel=2)", "Bpref(rel=2)", "infAP(rel=2)"],
    "judged_only": ["AP(judged_only=True)", "P(judged_only=True)@5", "nDCG(judged_only=True)@10",
                    "RR(judged_only=True)", "Rprec(judged_only=True)", "R(judged_only=True)@10",
                    "SetP(judged_only=True)", "IPrec(judged_only=True)@0.5"],
    "gains": ["nDCG(gains={0:0,1:1,2:3})@10"],
    "gains with grade 0": ["nDCG(gains={0:1,1:2,2:4,3:8,4:10})"],
    "judged, compat, msmarco": ["Judged", "Judged@5", "Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)",
                                "RR@10", "RR@3", "RR(rel=2)@10"],
    "gdeval": ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@20"],
    "accuracy": ["Accuracy", "Accuracy@5"],
}
"""The ir_measures names prefeval reads, in groups that ir_measures computes in one call."""
TIES_ALLOWED = {"pytrec_eval", "judged_only", "gains", "gains with grade 0"}
"""The groups of pytrec_eval's measures, which break ties as prefeval does (trec_eval's order)."""
GDEVAL = ("ERR@", "nDCG(dcg='exp-log2')")

TREC_EVAL_OPTIONS = [["-q"], ["-q", "-c"], ["-q", "-c", "-J"], ["-q", "-c", "-l", "2"], ["-q", "-c", "-M", "5"],
                     ["-q", "-J"], ["-q", "-l", "2"], ["-q", "-M", "5"]]
"""trec_eval's option sets compared; those without ``-c`` on the collections whose runs hold every query."""

GRADES = [-2, -1, 0, 0, 1, 1, 2, 3, 4]


@dataclass
class Collection:
    """Qrels and runs as the lines of their files (:func:`collection`)."""

    qrels: list[str]
    runs: list[list[str]]
    tied: bool
    every_query: bool

    def write(self, folder: Path) -> tuple[str, list[str]]:
        """The qrels' and the runs' paths, written into ``folder``."""
        qrels = folder / "qrels"
        qrels.write_text("".join(line + "\n" for line in self.qrels))
        runs = []
        for number, lines in enumerate(self.runs):
            path = folder / f"run{number}"
            path.write_text("".join(line + "\n" for line in lines))
            runs.append(str(path))
        return str(qrels), runs


def collection(seed: int, large: bool = False) -> Collection:
    """The random collection of ``seed`` (module docstring): tied scores for even seeds, runs that hold
    every query of the qrels for seeds divisible by 3."""
    rng = random.Random(seed)
    tied, every_query = seed % 2 == 0, seed % 3 == 0
    qids = list(dict.fromkeys(str(rng.randint(1, 60)) for _ in range(rng.randint(1, 12 if large else 4))))
    judged = 30 if large else 8
    qrels = []
    for qid in qids:
        grades = [rng.choice(GRADES) for _ in range(rng.randint(1, judged))]
        if rng.random() < 0.2:
            grades = [min(grade, 0) for grade in grades]
        if all(grade < 0 for grade in grades):
            grades[0] = 0
        qrels += [f"{qid} 0 d{qid}-{d} {grade}" for d, grade in enumerate(grades)]
    rng.shuffle(qrels)
    runs = []
    for number in range(rng.randint(1, 3)):
        listed = [qid for qid in qids if every_query or rng.random() > 0.25] + (["999"] if rng.random() < 0.2 else [])
        if not set(listed) & set(qids):
            listed.append(qids[0])
        rng.shuffle(listed)
        lines = []
        candidates = judged + 5
        for qid in listed:
            docs = rng.sample([f"d{qid}-{d}" for d in range(candidates)], rng.randint(1, min(35 if large else 8,
                                                                                           candidates)))
            scores = ([float(rng.randint(0, 3)) for _ in docs] if tied
                      else [value / 8 for value in rng.sample(range(1, 10 * candidates), len(docs))])
            lines += [f"{qid} Q0 {doc} {rank} {score!r} tag{number}" for rank, (doc, score) in enumerate(zip(docs,
                                                                                                           scores))]
        runs.append(lines)
    return Collection(qrels, runs, tied, every_query)


@dataclass
class Tally:
    """What a comparison counted: collections, outputs (one command of each tool) and lines compared,
    the lines that differ (ours, theirs, where), and the lines excluded, by reason."""

    collections: int = 0
    outputs: int = 0
    lines: int = 0
    differences: list[tuple[str, str, str]] = field(default_factory=list)
    excluded: Counter = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.collections += other.collections
        self.outputs += other.outputs
        self.lines += other.lines
        self.differences += other.differences
        self.excluded.update(other.excluded)

    def report(self, tool: str) -> str:
        valued = sum(_value(ours) != _value(theirs) for ours, theirs, _ in self.differences)
        lines = [f"{tool}: {self.collections} collections, {self.outputs} outputs, {self.lines} lines compared, "
                 f"{len(self.differences)} differ ({valued} in the value, {len(self.differences) - valued} in "
                 "the measure's name or the query alone)"]
        lines += [f"  excluded ({reason}): {count}" for reason, count in sorted(self.excluded.items())]
        values_first = sorted(self.differences, key=lambda found: _value(found[0]) == _value(found[1]))
        lines += [f"  {where}: ours {ours!r}, theirs {theirs!r}" for ours, theirs, where in values_first[:20]]
        return "\n".join(lines)


def _value(line: str) -> str:
    """A line's last field, its value."""
    return line.rsplit("\t", 1)[-1].strip()


def excluded(ours: str, theirs: str, where: str) -> str | None:
    """Why a line that differs is excluded (module docstring), None when it is not."""
    value = _value(theirs)
    if value == "nan" and "IPrec(judged_only=True)" in theirs:
        return "ir_measures' nan: IPrec(judged_only=True) without relevant documents"
    if value == "-nan" and theirs.startswith(("iprec_at_recall", "11pt_avg")) and "-J" in where.split():
        return "trec_eval's -nan under -J: a query left without documents"
    if any(name in theirs for name in GDEVAL):
        ours_value, their_value = float(_value(ours)), float(value)
        if abs(ours_value - their_value) <= 1e-4 + 1e-9:
            return "gdeval's five decimals"
    return None


def compare_lines(ours: list[str], theirs: list[str], where: str, tally: Tally) -> None:
    """Count ``theirs`` against ``ours`` line for line (outputs of different lengths are one difference)."""
    tally.outputs += 1
    tally.lines += len(theirs)
    if len(ours) != len(theirs):
        tally.differences.append((f"{len(ours)} lines", f"{len(theirs)} lines", where))
        return
    for mine, their in zip(ours, theirs):
        if mine != their:
            reason = excluded(mine, their, where)
            if reason is None:
                tally.differences.append((mine, their, where))
            else:
                tally.excluded[reason] += 1


def run_prefeval(*args: str) -> str:
    """prefeval's stdout for ``prefeval ARGS``, run in this process."""
    from click.testing import CliRunner

    from prefeval.cli import main

    result = CliRunner().invoke(main, list(args))
    if result.exit_code:
        raise RuntimeError(f"prefeval {' '.join(args)}: {result.output}")
    return result.stdout


def run_ir_measures(*args: str) -> str:
    """ir_measures' stdout for ``ir_measures ARGS`` (its command line, run in this process)."""
    from ir_measures.__main__ import main_cli

    out, argv = io.StringIO(), sys.argv
    sys.argv = ["ir_measures", *args]
    try:
        with contextlib.redirect_stdout(out):
            main_cli()
    finally:
        sys.argv = argv
    return out.getvalue()


def ir_measures_tally(seeds, large: bool = False) -> Tally:
    """:func:`compare_lines` of every run and group of ``seeds``' collections (module docstring)."""
    tally = Tally()
    with tempfile.TemporaryDirectory() as name:
        for seed in seeds:
            found = collection(seed, large)
            qrels, runs = found.write(Path(name))
            tally.collections += 1
            for group, measures in IR_MEASURES_GROUPS.items():
                if found.tied and group not in TIES_ALLOWED:
                    continue
                for number, run in enumerate(runs):
                    try:
                        theirs = run_ir_measures(qrels, run, *measures, "-q").splitlines()
                    except ZeroDivisionError:  # Accuracy without a non-relevant document within the cut-off
                        tally.excluded["Accuracy's ZeroDivisionError"] += 1
                        continue
                    args = [arg for measure in measures for arg in ("-m", measure)]
                    ours = run_prefeval("eval", "--format", "ir_measures", "-q", *args, "-R", qrels, run).splitlines()
                    per_query, summary = _split(ours)
                    their_per_query, their_summary = _split(theirs)
                    if group == "accuracy":  # ir_measures leaves out the queries without a relevant document
                        shown = {line.rsplit("\t", 1)[0] for line in their_per_query}
                        tally.excluded["Accuracy's queries left out"] += len(per_query) - len(shown)
                        if len(shown) < len(per_query):
                            tally.excluded["Accuracy's queries left out"] += len(summary)
                            summary = their_summary = []
                        per_query = [line for line in per_query if line.rsplit("\t", 1)[0] in shown]
                    compare_lines(sorted(per_query) + summary, sorted(their_per_query) + their_summary,
                                  f"seed {seed}, run {number}, {group}", tally)
    return tally


def _split(lines: list[str]) -> tuple[list[str], list[str]]:
    """The per-query lines and the summary lines (query id ``all``)."""
    summary = [line for line in lines if line.startswith("all\t")]
    return [line for line in lines if not line.startswith("all\t")], summary


def trec_eval_tally(trec_eval: str, seeds, large: bool = False) -> Tally:
    """:func:`compare_lines` of every option set on ``seeds``' collections (module docstring)."""
    tally = Tally()
    with tempfile.TemporaryDirectory() as name:
        for seed in seeds:
            found = collection(seed, large)
            qrels, runs = found.write(Path(name))
            tally.collections += 1
            for options in TREC_EVAL_OPTIONS:
                if "-c" not in options and not found.every_query:
                    continue
                theirs = "".join(subprocess.run([trec_eval, *options, "-m", "all_trec", qrels, run], check=True,
                                                capture_output=True, text=True).stdout for run in runs)
                ours = run_prefeval("eval", "--format", "trec_eval", *("--topk" if word == "-M" else word
                                                                       for word in options),
                                    "-m", "all_trec", "-R", qrels, *runs)
                compare_lines(ours.splitlines(), theirs.splitlines(), f"seed {seed}, {' '.join(options)}", tally)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tool", choices=["ir_measures", "trec_eval"])
    parser.add_argument("--collections", type=int, default=300)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--large", action="store_true", help="up to 12 queries, 30 judged and 35 retrieved documents")
    parser.add_argument("--trec-eval", help="the trec_eval binary (trec_eval only)")
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.collections)
    if args.tool == "trec_eval":
        if not args.trec_eval:
            parser.error("trec_eval needs --trec-eval PATH")
        tally = trec_eval_tally(args.trec_eval, seeds, args.large)
    else:
        tally = ir_measures_tally(seeds, args.large)
    print(tally.report(args.tool))
    return 1 if tally.differences else 0


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # prefeval's notes on the data (queries missing, ignored)
    sys.exit(main())
