"""prefeval's own collection judged by preferences and by judgment groups, and the trec_eval command
lines whose outputs ``tests/data/trec_eval/prefs`` keeps (remade by its ``regenerate.py`` from a
trec_eval 10.0 binary; compared byte for byte by ``tests/test_prefs.py``).

The collection is written by :func:`write_collection` from a seeded ``random.Random`` (whose
``random()`` draws the same numbers on every Python), so it is not kept: only trec_eval's outputs
are. It exercises what trec_eval's preference and judgment-group code distinguishes:

* ``prefs.txt``: a group of one sub-group with equivalence classes (value 0 included); a group of
  three sub-groups that chain (a > b, b > c, c > d: transitivity); three groups of a query that
  disagree; a query whose documents all have one value (no preference) and one of a single document;
  groups with more non-relevant documents than relevant ones and fewer (both branches of
  prefs_avgjg_Rnonrel), in one sub-group and in several; a docid holding ``#``; comment lines;
  random groups over a dozen documents;
* ``qrels_prefs.txt``: a qrels whose iter field names three judgment groups, grades 0 to 3;
* ``pairs.txt``: pairwise lines, some repeated and some disagreeing, a comment; trec_eval reads its
  conversion (:func:`pairs_as_prefs`: each line a group ``L<line>`` of one sub-group, winner 2,
  other 1);
* ``qrels_jg.txt``: three groups, grades -1 to 3, a group that finds nothing relevant, a query no
  group finds anything relevant in, comments;
* two runs: ``run_a`` has every query, ``run_b`` lacks some (for ``-c``) and has one no judgments
  have; scores drawn from few values, so that documents tie (trec_eval orders ties by docid ascending
  for preferences, descending for judgment groups), and documents nobody judged.

trec_eval's reader of prefs files takes a comment line only alone (after one, the next line is read
as data) and not last, and has no blank lines; the files keep to that.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import NamedTuple

SEED = 25
JUDGMENTS = ("prefs.txt", "qrels_prefs.txt", "pairs.txt", "qrels_jg.txt")
RUNS = ("run_a", "run_b")


class Case(NamedTuple):
    """One trec_eval command line: ``-R rel_format``, the options, the judgments and the run; its
    output is ``NAME.out``. ``rel_format`` ``pairs`` is run by trec_eval as ``-R prefs`` on the
    conversion of the pairwise file."""

    name: str
    rel_format: str
    options: tuple[str, ...]
    judgments: str
    run: str

    def trec_eval_arguments(self, judgments: str) -> list[str]:
        return ["-R", "prefs" if self.rel_format == "pairs" else self.rel_format, *self.options, judgments, self.run]

    def prefeval_arguments(self) -> list[str]:
        """``prefeval eval``'s arguments for the same command (trec_eval's ``-M`` is ``--topk``)."""
        options = ["--topk" if option == "-M" else option for option in self.options]
        return ["--format", "trec_eval", "--rel-format", self.rel_format, *options, "-R", self.judgments, self.run]


CASES = (
    Case("prefs", "prefs", ("-q", "-m", "all_prefs"), "prefs.txt", "run_a"),
    Case("prefs.complete", "prefs", ("-q", "-c", "-m", "all_prefs"), "prefs.txt", "run_b"),
    Case("prefs.cut", "prefs", ("-q", "-M", "7", "-m", "all_prefs"), "prefs.txt", "run_a"),
    Case("prefs.nickname", "prefs", ("-m", "prefs"), "prefs.txt", "run_a"),
    Case("qrels_prefs", "qrels_prefs", ("-q", "-m", "all_prefs"), "qrels_prefs.txt", "run_a"),
    Case("qrels_prefs.cut", "qrels_prefs", ("-q", "-c", "-M", "5", "-m", "all_prefs"), "qrels_prefs.txt", "run_b"),
    Case("pairs", "pairs", ("-q", "-m", "all_prefs"), "pairs.txt", "run_a"),
    Case("pairs.complete", "pairs", ("-q", "-c", "-m", "all_prefs"), "pairs.txt", "run_b"),
    Case("qrels_jg", "qrels_jg", ("-q", "-m", "qrels_jg"), "qrels_jg.txt", "run_a"),
    Case("qrels_jg.level", "qrels_jg", ("-q", "-l", "2", "-m", "qrels_jg"), "qrels_jg.txt", "run_a"),
    Case("qrels_jg.complete", "qrels_jg", ("-q", "-c", "-M", "4", "-m", "qrels_jg"), "qrels_jg.txt", "run_b"),
    Case("qrels_jg.judged", "qrels_jg", ("-q", "-J", "-c", "-m", "qrels_jg"), "qrels_jg.txt", "run_b"),
    Case("qrels_jg.params", "qrels_jg",
         ("-q", "-m", "map_avgjg", "-m", "P_avgjg.1,3", "-m", "Rprec_mult_avgjg.0.5,1.5"), "qrels_jg.txt", "run_a"),
)
"""The command lines (each an output file)."""

QUICKTEST = (
    ("prefs", ("-q", "-m", "all_prefs"), "prefs.test", "prefs.results.test", "out.test.prefs"),
    ("prefs", ("-q", "-m", "all_prefs"), "prefs.comment.test", "prefs.results.test", "out.test.prefs"),
    ("qrels_prefs", ("-q", "-m", "all_prefs"), "qrels.test", "results.test", "out.test.qrels_prefs"),
    ("qrels_jg", ("-q", "-m", "qrels_jg"), "qrels.123", "results.test", "out.test.qrels_jg"),
    ("qrels_jg", ("-q", "-m", "qrels_jg"), "qrels.comments.123", "results.test", "out.test.qrels_jg"),
)
"""trec_eval's quicktest commands 9 to 13 (its Makefile): -R, options, judgments, run and expected
output, in trec_eval's ``test`` folder."""


class _Draws:
    """Numbers drawn from ``random.Random(seed).random()`` only (reproducible on every Python)."""

    def __init__(self, seed: int):
        self._random = random.Random(seed)

    def below(self, count: int) -> int:
        return int(self._random.random() * count)

    def subset(self, items: list, least: int = 1) -> list:
        chosen = [item for item in items if self._random.random() < 0.6]
        return chosen if len(chosen) >= least else items[:least]


def _prefs_lines(draw: _Draws) -> list[str]:
    lines = ["# prefs: qid jg jsg docid value"]
    classes = {"A1": 3, "A2": 3, "A3": 2, "A4": 1, "A5": 1, "A6": 0, "A7": 0, "A8": 0}
    lines += [f"p01 u1 s1 {doc} {value}" for doc, value in classes.items()]
    chain = [("s1", "B1", 4), ("s1", "B2", 3), ("s2", "B2", 2), ("s2", "B3", 1), ("s3", "B3", 6), ("s3", "B4", 5),
             ("s3", "B5", 0), ("s1", "B5", 0)]
    lines += [f"p02 u1 {sub} {doc} {value}" for sub, doc, value in chain]
    lines.append("# three judges who disagree")
    for group, order in (("ga", ["C1", "C2", "C3", "C4"]), ("gb", ["C4", "C3", "C2", "C1"]), ("gc", ["C2", "C1"])):
        lines += [f"p03 {group} x {doc} {len(order) - place}" for place, doc in enumerate(order)]
    lines += [f"p04 u1 s1 D{n} 1" for n in range(4)]
    lines.append("p05 u1 s1 E1 2")
    lines += [f"p06 u1 s1 F{n} {value}" for n, value in enumerate([2, 1, 0, 0, 0, 0, 0, 0])]
    lines += [f"p06 u2 s{n % 2} F{n} {value}" for n, value in enumerate([3, 2, 2, 1, 0, 0, 0])]
    lines += [f"p06 u3 s1 F{n} {value}" for n, value in enumerate([3, 2, 1, 1, 0])]
    lines += ["p06 u4 s1 F0 1", "p06 u4 s1 F2 0", "p06 u4 s1 F3 0",
              "p06 u4 s2 F1 1", "p06 u4 s2 F4 0", "p06 u4 s2 F5 0", "p06 u4 s2 F6 0"]
    lines.append("# a docid with a number sign")
    lines += ["p07 u1 s1 G#1 2", "p07 u1 s1 G2 1", "p07 u1 s1 G3 0"]
    for query in ("p08", "p09", "p10"):
        docs = [f"{query}d{n:02d}" for n in range(12)]
        for group in range(1 + draw.below(3)):
            hidden = {doc: draw.below(4) for doc in docs}
            for sub in range(1 + draw.below(3)):
                lines += [f"{query} r{group} t{sub} {doc} {hidden[doc]}" for doc in draw.subset(docs, 2)]
    return lines


def _qrels_prefs_lines(draw: _Draws) -> list[str]:
    lines = []
    for query in ("q1", "q2", "q3", "q4"):
        docs = [f"{query}d{n:02d}" for n in range(10)]
        for group in range(1 + draw.below(3)):
            lines += [f"{query} {group} {doc} {draw.below(4) if draw.below(3) else 0}" for doc in draw.subset(docs, 2)]
    return lines


def _pairs_lines(draw: _Draws) -> list[str]:
    lines = ["# pairs: qid docA docB winner"]
    for query in ("t1", "t2", "t3"):
        docs = [f"{query}d{n}" for n in range(6)]
        for _ in range(6 + draw.below(4)):
            first = docs[draw.below(len(docs))]
            second = docs[(docs.index(first) + 1 + draw.below(len(docs) - 1)) % len(docs)]
            lines.append(f"{query} {first} {second} {first if draw.below(3) else second}")
    lines += ["t1 t1d0 t1d1 t1d0", "t1 t1d0 t1d1 t1d1", "t1 t1d0 t1d1 t1d0"]  # repeated, and disagreeing
    return lines


def _qrels_jg_lines(draw: _Draws) -> list[str]:
    lines = ["# qrels_jg: qid jg docid grade"]
    for query in ("j1", "j2", "j3", "j4"):
        docs = [f"{query}d{n:02d}" for n in range(10)]
        for group in ("A", "B", "C")[:1 + draw.below(3)]:
            lines += [f"{query} {group} {doc} {draw.below(5) - 1}" for doc in draw.subset(docs)]
    lines += ["j5 A j5d00 0", "j5 B j5d01 0", "j5 B j5d02 -1"]  # nothing relevant to any group
    lines += ["j6 A j6d00 2", "j6 A j6d01 1", "j6 B j6d00 0", "j6 B j6d02 0"]  # B finds nothing relevant
    lines.append("# the end")
    lines.append("j6 C j6d01 3")
    return lines


def _run_lines(draw: _Draws, queries: dict[str, list[str]], skip: set[str], extra: bool) -> list[str]:
    lines = []
    for query, docs in queries.items():
        if query in skip:
            continue
        pool = docs + [f"{query}-unjudged{n}" for n in range(3)]
        chosen = draw.subset(pool)
        for doc in chosen:
            lines.append(f"{query} Q0 {doc} 0 {draw.below(5) / 2:.1f} tag")
    if extra:
        lines.append("x9 Q0 x9d1 0 1.0 tag")
    return lines


def pairs_as_prefs(pairs: Path, prefs: Path) -> None:
    """The prefs file trec_eval reads for a pairwise file (:mod:`prefeval.io.prefs`): for line n, a
    group ``L<n>`` (9 digits) of one sub-group ``0``, the winner 2 and the other 1."""
    out = []
    for number, line in enumerate(pairs.read_text().splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        query, first, second, winner = fields
        out += [f"{query} L{number:09d} 0 {doc} {2 if doc == winner else 1}" for doc in (first, second)]
    prefs.write_text("\n".join(out) + "\n")


def write_collection(folder: Path) -> dict[str, Path]:
    """Write the collection into ``folder``; its files by name."""
    draw = _Draws(SEED)
    judgments = {"prefs.txt": _prefs_lines(draw), "qrels_prefs.txt": _qrels_prefs_lines(draw),
                 "pairs.txt": _pairs_lines(draw), "qrels_jg.txt": _qrels_jg_lines(draw)}
    documents: dict[str, list[str]] = {}
    for name, lines in judgments.items():
        for line in lines:
            fields = line.split()
            if fields[0].startswith("#"):
                continue
            docs = fields[1:3] if name == "pairs.txt" else [fields[-2]]
            documents.setdefault(fields[0], [])
            documents[fields[0]] += [doc for doc in docs if doc not in documents[fields[0]]]
    skipped = {"p03", "p05", "q2", "t2", "j2", "j5"}
    runs = {"run_a": _run_lines(draw, documents, set(), False), "run_b": _run_lines(draw, documents, skipped, True)}
    files = {}
    for name, lines in {**judgments, **runs}.items():
        files[name] = folder / name
        files[name].write_text("\n".join(lines) + "\n")
    return files
