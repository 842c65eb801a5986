"""The command lines on which ``prefeval ndeval`` must print what ndeval prints, byte for byte, with
the files of ``tests/data/ndeval`` (whose ``regenerate.py`` records ndeval's outputs from the binary):

* ``web2012.qrels``: every judgment of topics 152, 173, 189 and 190 of the TREC 2012 Web track's
  ``qrels-for-ndeval`` (public, https://trec.nist.gov/data/web/12/qrels-for-ndeval); ``ql.run``,
  ``rm.run`` and ``rmf.run``: the first 100 documents of those topics in the track's public baselines
  (github.com/trec-web/trec-web-2014, data/runs/baselines/2012: ql/results-cata.txt,
  rm/results-cata.txt and rm/results-cata-filtered.txt, whose ranks have gaps), with their tied
  scores;
* ``edge.*``, ``dup.run``, ``nan.*`` and the others: prefeval's own, for ndeval's conventions (topic
  prefixes and leading zeros, ranks that disagree with scores, ties, subtopic ids with gaps, extra
  fields, CRLF and tabs, topics on one side only, a baseline's topics, a document twice below the
  cut-off, a topic without a relevant judgment).
"""

from __future__ import annotations

WEB = "web2012.qrels"
EDGE = "edge.qrels"

CASES: dict[str, list[str]] = {
    "web.default": [WEB, "ql.run"],
    "web.traditional": ["-traditional", WEB, "ql.run"],
    "web.c": ["-c", WEB, "rm.run"],
    "web.alpha_beta": ["-alpha", "0.3", "-beta", "0.9", WEB, "ql.run"],
    "web.alpha1_beta0": ["-alpha", "1", "-beta", "0", WEB, "rm.run"],
    "web.alpha0": ["-alpha", "0", "-beta", "0.7", WEB, "ql.run"],
    "web.M10": ["-M", "10", WEB, "rm.run"],
    "web.M10_traditional_c": ["-M", "10", "-traditional", "-c", WEB, "rmf.run"],
    "web.gaps": [WEB, "rmf.run"],
    "web.baseline": ["-baseline", "rmf.run", WEB, "ql.run"],
    "web.baseline_risk1": ["-baseline", "rmf.run", "-riskAlpha", "1", WEB, "ql.run"],
    "web.baseline_risk_c_traditional": ["-c", "-traditional", "-baseline", "rm.run", "-riskAlpha", "2.50", WEB,
                                        "ql.run"],
    "web.baseline_alpha_M": ["-alpha", "0.7", "-baseline", "ql.run", "-riskAlpha", "0.5", "-M", "20", WEB, "rm.run"],
    "web.flags": ["-ca", "-a", "-", WEB, "ql.run"],
    "edge.default": [EDGE, "edge.run"],
    "edge.traditional": ["-traditional", EDGE, "edge.run"],
    "edge.c": ["-c", EDGE, "edge.run"],
    "edge.crlf_c": ["-c", EDGE, "edge.crlf.run"],
    "edge.baseline": ["-baseline", "edge.baseline", EDGE, "edge.run"],
    "edge.baseline_c_risk": ["-c", "-baseline", "edge.baseline", "-riskAlpha", "1.5", EDGE, "edge.run"],
    "edge.run_as_baseline": ["-c", "-baseline", "edge.run", EDGE, "edge.baseline"],
    "edge.all": ["-ca", "-traditional", "-M", "2", "-baseline", "edge.baseline", "-riskAlpha", "0.25", "-alpha",
                 "0.6", "-beta", "0.8", EDGE, "edge.run"],
    "edge.risk_alone": ["-riskAlpha", "3", EDGE, "edge.run"],
    "edge.dup_M3": ["-M", "3", EDGE, "dup.run"],
}
"""Each case's arguments (after ``ndeval``), run in ``tests/data/ndeval``: ndeval's stdout is
``expected/NAME.csv``."""

NAN_CASES: dict[str, list[str]] = {
    "nan.default": ["nan.qrels", "nan.run"],
}
"""Cases where ndeval prints ``-nan`` (nNRBP on a topic without a relevant judgment, and its mean),
and prefeval 0 and the mean of its values; every other byte the same."""

ERRORS: dict[str, list[str]] = {
    "duplicate docno": [EDGE, "dup.run"],
    "duplicate rank": [EDGE, "samerank.run"],
    "negative judgment": ["negative.qrels", "edge.run"],
    "five fields": [EDGE, "short.run"],
    "no arguments": [],
    "one argument": [EDGE],
    "three operands": [EDGE, "edge.run", "edge.run"],
    "alpha above 1": ["-alpha", "2", EDGE, "edge.run"],
    "alpha without room": ["-alpha", EDGE, "edge.run"],
    "unknown flag": ["-x", EDGE, "edge.run"],
    "M of 0": ["-M", "0", EDGE, "edge.run"],
    "negative risk": ["-riskAlpha", "-1", EDGE, "edge.run"],
    "missing qrels": ["missing.qrels", "edge.run"],
}
"""Command lines that ndeval refuses, with exit code 1 and nothing on stdout (its messages are its
own: prefeval's are one line each, naming the file and line where ndeval names them)."""
