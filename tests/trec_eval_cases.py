"""The collections and command lines whose trec_eval 10.0 outputs are kept in ``tests/data/trec_eval/``,
so that every test run checks ``prefeval trec_eval`` against trec_eval byte for byte, without the
binary (``tests/test_trec_eval_command.py``); ``tests/data/trec_eval/regenerate.py`` remakes the
outputs from a trec_eval binary.

The collection is prefeval's own, written by :func:`write_collection` from a seeded generator
(Python's ``random.Random``, whose draws and formatting do not change between versions), and exercises
what trec_eval's own test folder does: comments in the qrels, grades 0 to 4, a grade above 9 and
unjudged documents (-1), a query without a relevant document, a run missing queries (``-c``), runs
shorter than the cut-offs, ties in scores, queries interleaved and extra fields after the tag, a
query no qrels have, query ids that sort differently as text and as numbers, trec_eval's options
(``-q -c -n -J -l -M -N``), measure parameters, nicknames and a z-score file of its own (``-Z``).
The bundled examples (``examples/``) are evaluated too, and robust03 (shared data, not kept here)
under the option sets of ``tests/test_trec_eval_oracle.py``. No command line shows a value where
prefeval differs from trec_eval on purpose (docs/commands/trec_eval.md, "Where prefeval differs": ``-nan`` under ``-J``,
``-c`` for utility) or where trec_eval's value is undefined (above, :data:`PARAMETERS`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "trec_eval"
"""Where the expected outputs are kept."""
EXAMPLES = ROOT / "examples"
SEED = 2025

QIDS = ("1", "2", "3", "7", "10", "12", "20", "101", "a5", "b")
"""Query ids: as text, 1 < 10 < 101 < 12 < 2 < 20 < 3 < 7 < a5 < b."""
NO_RELEVANT, HIGH_GRADE = "12", "7"
"""A query judged without a relevant document; a query with a document of grade 12 (relstring's ``>``)."""
MISSING_FROM_TRUNC = ("3", "20", "b")
"""The queries the truncated run lacks (scored as retrieving nothing under ``-c``)."""
FOREIGN_QID = "999"
"""A query of the runs that the qrels lack (ignored)."""


class Case(NamedTuple):
    """One command line: its arguments (``{name}`` stands for the file :func:`write_collection` writes
    under that name, or an example's), and the file its standard input is, when the run is ``-``."""

    name: str
    args: tuple[str, ...]
    stdin: str | None = None

    def arguments(self, files: dict[str, str]) -> list[str]:
        return [arg.format(**files) for arg in self.args]


PARAMETERS = ("-miprec_at_recall..15,.35,.5", "-m", "P.3,7,12", "-m", "recall.4,50", "-m", "Rprec_mult.0.5,1.5",
              "-mutility.1,-2,0.5,0", "-N", "300", "-m", "11pt_avg.0.2,0.5,0.8", "-mndcg.1=2,2=5,3=7",
              "-mndcg_cut.3,8.5", "-msuccess.2,4", "-mset_F.0.25", "-mmap_cut.7,25", "-mrelative_P.6", "-munj.3",
              "-m", "yaap")
"""Measure parameters. Not dcg and ideal_dcg, which trec_eval 10.0 crashes on when ndcg, dcg or
ideal_dcg is given parameters beside another of the three (it keeps their parameters in one place);
nor rbp and rbp_resid given a persistence, whose values trec_eval 10.0 computes from two variables it
never sets (docs/commands/trec_eval.md), so that they change with the measures computed before them."""

PARAMETERS_COMPLETE = tuple(arg for arg in PARAMETERS if not arg.startswith("-mutility"))
"""The same under ``-c``, but for utility, whose missing queries trec_eval -c scores otherwise with
other coefficients (docs/commands/trec_eval.md, "Where prefeval differs")."""

CASES = (
    Case("official", ("{qrels}", "{full}")),
    Case("all_trec", ("-q", "-m", "all_trec", "{qrels}", "{full}")),
    Case("all_trec.short", ("-q", "-m", "all_trec", "{qrels}", "{short}")),
    Case("all_trec.complete", ("-q", "-c", "-m", "all_trec", "{qrels}", "{trunc}")),
    Case("all_trec.complete.max", ("-qc", "-M5", "-m", "all_trec", "{qrels}", "{trunc}")),
    Case("all_trec.level", ("-m", "all_trec", "-mrelstring.20", "-q", "-l2", "{qrels}", "{full}")),
    Case("all_trec.judged", ("-q", "-J", "--measure=all_trec", "{qrels}", "{full}")),
    Case("all_trec.summary", ("-c", "-m", "all_trec", "{qrels}", "{short}")),
    Case("set.per_query", ("-n", "-q", "-m", "set", "{qrels}", "{full}")),
    Case("parameters", ("-q", *PARAMETERS, "{qrels}", "{full}")),
    Case("parameters.complete", ("-q", "-c", "-l", "2", *PARAMETERS_COMPLETE, "{qrels}", "{trunc}")),
    Case("gains", ("-q", "-c", "-m", "dcg.0=1,1=2,3=-1", "-m", "yaap", "-m", "ndcg_rel", "{qrels}", "{trunc}")),
    Case("dcg", ("-q", "-m", "dcg", "-m", "ideal_dcg", "-m", "ndcg", "{qrels}", "{full}")),
    Case("ideal_gains", ("-q", "-m", "ideal_dcg.1=3,2=9", "-m", "11pt_avg.0,1", "{qrels}", "{short}")),
    Case("zscores", ("-q", "-m", "all_trec", "-Z", "{zscores}", "{qrels}", "{full}")),
    Case("zscores.complete", ("-q", "-c", "-Z", "{zscores}", "-m", "official", "-m", "yaap", "{qrels}", "{trunc}")),
    Case("zscores.summary", ("--Zscore={zscores}", "-m", "all_trec", "{qrels}", "{short}")),
    Case("stdin", ("-q", "-m", "official", "{qrels}", "-"), stdin="full"),
    Case("examples.bm25", ("-q", "-J", "-m", "all_trec", "{examples_qrels}", "{bm25}")),
    Case("examples.dense", ("-q", "-c", "-l2", "-m", "all_trec", "{examples_qrels}", "{dense}")),
    Case("examples.hybrid", ("-q", "-c", "-M", "10", "-m", "all_trec", "{examples_qrels}", "{hybrid}")),
    Case("examples.random", ("-q", "-c", "-m", "all_trec", "{examples_qrels}", "{random}")),
)
"""The command lines, by name: the expected output of each is ``tests/data/trec_eval/NAME.out``."""

ROBUST03_RUNS = ("InexpC2", "MU03rob01", "NLPR03vb10", "SABIR03BASE", "Sel50", "THUIRr0301", "UAmsT03RDesc",
                 "UIUC03Rd1", "VTcdhgp1", "aplrob03a", "fub03IeOLKe3", "humR03dc", "oce03noXbmD", "pircRBa1",
                 "rutcor03100", "uic0301", "uwmtCR0")
FEW_RUNS = ("MU03rob01", "NLPR03vb10", "InexpC2")
"""Many ties; 10-12 documents per query; scores that tie in single precision (query 330)."""
ROBUST03_OPTION_SETS = ("-q -c", "-q", "-q -c -J", "-q -c -l 2", "-q -c -M 100")
"""trec_eval's option sets checked on robust03 (with ``-m all_trec``)."""
ROBUST03_RUNS_OF = {options: ROBUST03_RUNS if options == "-q -c" else FEW_RUNS for options in ROBUST03_OPTION_SETS}
"""Every run under ``-q -c``, three under the other option sets."""


def robust03_expected(options: str) -> Path:
    """The file of trec_eval's outputs under ``options`` -m all_trec, run after run, compressed with xz
    (Python's lzma): a third of gzip's size, the runs' outputs repeating each other farther apart than
    gzip's 32 KB window."""
    return DATA / "robust03" / (options.replace("-", "").replace(" ", "_") + ".out.xz")


def write_collection(folder: Path) -> dict[str, str]:
    """Write the generated collection into ``folder``: the qrels, the runs ``full``, ``short`` and
    ``trunc`` and the z-score file; return every file of :data:`CASES` by name (paths relative to
    ``folder``, in which trec_eval and prefeval run; the examples by absolute path)."""
    rng = random.Random(SEED)
    qrels, grades = _qrels(rng)
    files = {"qrels": "qrels.txt", "full": "run.full", "short": "run.short", "trunc": "run.trunc",
             "zscores": "zscores.txt"}
    texts = {"qrels": qrels, "full": _run(rng, grades, "fullRun", 20, 60, 2),
             "short": _run(rng, grades, "shortRun", 1, 8, 0),
             "trunc": _run(rng, grades, "truncRun", 10, 40, 1, missing=MISSING_FROM_TRUNC, interleaved=True),
             "zscores": _zscores(rng, grades)}
    for name, text in texts.items():
        (folder / files[name]).write_text(text)
    files["examples_qrels"] = str(EXAMPLES / "qrels.txt")
    files.update({name: str(EXAMPLES / "runs" / name) for name in ("bm25", "dense", "hybrid", "random")})
    return files


def _qrels(rng: random.Random) -> tuple[str, dict[str, dict[str, int]]]:
    """The qrels' text (comments among the lines, iter 0 or Q0), and the grades by query and document."""
    lines, grades = ["# prefeval's test qrels: qid iter docno grade"], {}
    for qid in QIDS:
        judged = {}
        for number in range(rng.randrange(8, 40)):
            draw = rng.random()
            grade = 0 if draw < 0.5 or qid == NO_RELEVANT else 1 if draw < 0.7 else 2 if draw < 0.82 else \
                3 if draw < 0.9 else 4 if draw < 0.95 else -1
            judged[f"D{qid}-{number:03d}"] = grade
        if qid == HIGH_GRADE:
            judged[f"D{qid}-{len(judged):03d}"] = 12
        grades[qid] = judged
        for docid, grade in judged.items():
            lines.append(f"{qid} {'Q0' if rng.random() < 0.2 else '0'} {docid} {grade}")
            if rng.random() < 0.03:
                lines.append("# a comment between judgments")
    return "\n".join(lines) + "\n", grades


def _run(rng: random.Random, grades: dict[str, dict[str, int]], tag: str, fewest: int, most: int, decimals: int,
         missing: tuple[str, ...] = (), interleaved: bool = False) -> str:
    """A run: for each query (and :data:`FOREIGN_QID`) but ``missing``, ``fewest`` to ``most`` documents
    of the qrels' pool and outside it, scored with ``decimals`` decimals (ties), a few in scientific
    notation; tab or space separated; ``interleaved``: the queries' lines mixed, with fields after the
    tag."""
    lines = []
    for qid in [q for q in QIDS if q not in missing] + [FOREIGN_QID]:
        pool = list(grades.get(qid, {})) + [f"X{qid}-{number:03d}" for number in range(30)]
        docids = rng.sample(pool, min(len(pool), rng.randrange(fewest, most + 1)))
        for rank, docid in enumerate(docids, 1):
            score = round(rng.uniform(0, 10), decimals)
            written = f"{score:.3e}" if rng.random() < 0.05 else f"{score:.{decimals}f}"
            separator = "\t" if rng.random() < 0.5 else " "
            extra = " extra fields" if interleaved and rng.random() < 0.3 else ""
            lines.append(separator.join((qid, "Q0", docid, str(rank), written, tag)) + extra)
    if interleaved:
        rng.shuffle(lines)
    return "\n".join(lines) + "\n"


ZSCORE_MEASURES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall_0.00", "iprec_at_recall_0.50", "P_5", "P_10", "P_30", "recall_10", "ndcg",
                   "ndcg_cut_10", "11pt_avg", "utility", "set_F", "rbp", "unj_5", "yaap", "infAP", "gm_bpref")
"""The measures the z-score file gives references for (the others, trec_eval's -1000000)."""


def _zscores(rng: random.Random, grades: dict[str, dict[str, int]]) -> str:
    """A z-score file: references for most queries and measures; none for query ``2``; num_rel with a
    deviation of 0 and the query's own count (z-score 0), num_ret with a deviation of 0 and another
    count (-1000000); and a last query and, in each query, a last measure that sort after every name
    looked up (trec_eval's binary searches read past the end of their arrays otherwise)."""
    lines = []
    for qid in QIDS:
        if qid == "2":
            continue
        for measure in ZSCORE_MEASURES:
            if rng.random() < 0.15:
                continue
            if measure == "num_rel":
                mean, deviation = float(sum(grade > 0 for grade in grades[qid].values())), 0.0
            elif measure == "num_ret":
                mean, deviation = 1000.0, 0.0
            elif measure in ("utility", "num_rel_ret"):
                mean, deviation = round(rng.uniform(-20, 20), 3), round(rng.uniform(1, 10), 3)
            else:
                mean, deviation = round(rng.uniform(0, 0.6), 4), round(rng.uniform(0.05, 0.4), 4)
            lines.append(f"{qid}\t{measure} {mean} {deviation}")
        lines.append(f"{qid} zzz_last_measure 0 1")
    lines.append("zzz_last_query map 0 1")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"
