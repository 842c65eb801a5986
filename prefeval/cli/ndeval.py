"""``prefeval ndeval [options] qrels run``: ndeval 4.5's command line, read as ndeval reads it, and its
CSV output, byte for byte. The command only reads the options: the library computes
(:func:`prefeval.analyses.ndeval.ndeval_report`, on the files as :mod:`prefeval.io.ndeval` reads them)
and the format registry writes (:mod:`prefeval.report.ndeval`).

**The command line** is read as ndeval's ``main`` reads it: options come first, each recognised only
while enough arguments follow it to leave the qrels and the run (an option with a value needs two
more, a flag one more: ``prefeval ndeval -c qrels run``; ``-alpha 0.7 qrels`` is a usage error), and
the last two arguments are always the qrels and the run:

* ``-alpha A``, ``-beta B``: redundancy intolerance and patience, in [0, 1] (default 0.5);
* ``-traditional``: order each topic's documents by score, then docno, descending (default: by the
  rank field);
* ``-baseline FILE``, ``-riskAlpha A``: risk-sensitive evaluation against the baseline run, the
  weight of a loss 1 + A (A >= 0, default 0; written in the run id as given);
* ``-c``: means over every topic of the qrels; ``-a``: accepted (ndeval reads it and does nothing
  with it); flags may be grouped (``-ca``), and ``-`` alone is an empty group;
* ``-M DEPTH``: keep the first DEPTH documents of each topic (DEPTH > 0);
* ``-version``, ``-help`` (and ``-h``, ``--help``, which ndeval reads as a usage error): ndeval's
  version or prefeval's help for this command, on stdout, exit 0.

A value is read as ndeval's ``sscanf`` reads its start (``-alpha 0.7x`` is 0.7, ``-M 10x`` is 10);
where ndeval would keep the previous value because none starts the text (``-alpha x``), or read a
NaN (``-alpha nan``), prefeval refuses it. Every error is one line, ``prefeval: error: ...``, and
exit code 1, ndeval's for every failure. Where ndeval prints ``-nan`` (nNRBP on a topic without a
relevant judgment), prefeval prints 0 and says so in a note on stderr.
"""

from __future__ import annotations

import re

import click

from prefeval.cli.common import fail, note, reported_errors
from prefeval.errors import UsageError
from prefeval.io.numbers import leading_number

USAGE = "usage: prefeval ndeval [options] qrels run   (-help for full usage information)"
VALUED = ("-alpha", "-beta", "-M", "-baseline", "-riskAlpha")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+")
HELP = """\
Usage: prefeval ndeval [OPTIONS] QRELS RUN

  Evaluate RUN against QRELS on ndeval 4.5's command line (the TREC Web track's evaluator of novelty
  and diversity), printing what ndeval prints, byte for byte: a CSV line per topic of RUN of its
  intent-aware measures, then their means (amean). Options come first, as ndeval reads them.

Options:
  -alpha A        Redundancy intolerance of alpha-DCG, alpha-nDCG, ERR-IA and NRBP, in [0, 1] (0.5).
  -beta B         Patience of NRBP, in [0, 1] (0.5).
  -traditional    Order each topic's documents by score, then docno (both descending), not by rank.
  -baseline FILE  Risk-sensitive evaluation against this baseline run.
  -riskAlpha A    The weight of a loss against the baseline is 1 + A, A >= 0 (0).
  -c              Means over every topic of QRELS (and of the baseline), not only RUN's.
  -M DEPTH        Keep the first DEPTH documents of each topic.
  -version        Print ndeval's version and exit.
  -help, -h, --help
                  Print this help and exit.

  QRELS: topic subtopic docno judgment (natural numbers; a judgment above 1 counts as 1). RUN: topic
  Q0 docno rank score runid. Columns: ERR-IA@k, nERR-IA@k, alpha-DCG@k, alpha-nDCG@k (k = 5, 10,
  20), NRBP, nNRBP, MAP-IA, P-IA@k, strec@k: prefeval's err_ia, nerr_ia, alpha_dcg, alpha_ndcg, nrbp,
  nnrbp, ap_ia, p_ia and strec (`prefeval measures` describes them). Exit code 1 for every error.

Examples:
  prefeval ndeval qrels-for-ndeval.txt run.txt > run.ndeval.csv
  prefeval ndeval -c -traditional -alpha 0.5 qrels-for-ndeval.txt run.txt
  prefeval ndeval -c -traditional -baseline baseline.txt -riskAlpha 1 qrels-for-ndeval.txt run.txt
"""
HELP_OPTIONS = ("-help", "--help", "-h")
"""ndeval's ``-help``, and the other spellings of prefeval's commands (ndeval reads them as a usage
error)."""


@click.command("ndeval", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": []}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def ndeval_command(args):
    """Evaluate a run as ndeval does, on ndeval's command line.

    prefeval ndeval [-alpha A] [-beta B] [-traditional] [-baseline FILE] [-riskAlpha A] [-c] [-M DEPTH]
    qrels run: ndeval's CSV of the intent-aware measures, byte for byte (prefeval ndeval -help)."""
    try:
        read = read_command_line(list(args))
    except UsageError as error:
        fail(str(error), 1)
    if isinstance(read, str):
        click.echo(read, nl=False)
        return
    options, qrels, run = read
    from prefeval.analyses.ndeval import ndeval_report
    from prefeval.io.output import output_stream
    from prefeval.report.formats import NDEVAL, write_records

    try:
        with reported_errors():
            report = ndeval_report(qrels, run, options)
            with output_stream(None) as stream:
                write_records(NDEVAL, report, stream, "ndeval")
    except SystemExit as end:
        if end.code not in (0, None):
            raise SystemExit(1) from None  # ndeval's exit code for every failure
        raise
    for topic, column in report.nan:
        note(f"topic {topic}: ndeval prints -nan for {column} (0/0: no relevant judgment, or alpha 0 with beta "
             "1); prefeval prints 0.000000")
    for column in report.mean_nan:
        note(f"ndeval prints -nan for the mean of {column} (a topic's -nan); prefeval prints the mean of its values")


def read_command_line(args: list[str]):
    """ndeval's options and operands (module docstring): (options, qrels, run), or the text to print for
    ``-version`` or ``-help``; a :class:`UsageError` where ndeval prints its usage."""
    from prefeval.analyses.ndeval import NdevalOptions
    from prefeval.measures.foreign import ndeval

    options = NdevalOptions()
    values: dict = {}
    while len(args) + 1 != 3:
        count = len(args) + 1  # ndeval's argc
        first = args[0] if args else None
        if count >= 2 and first == "-version":
            return f"prefeval ndeval: ndeval {ndeval.VERSION}\n"
        if count >= 2 and first in HELP_OPTIONS:
            return HELP
        if count >= 5 and first in VALUED:
            text = args[1]
            if first in ("-alpha", "-beta", "-riskAlpha"):
                value = _number(first, text)
                values[{"-alpha": "alpha", "-beta": "beta", "-riskAlpha": "risk_alpha"}[first]] = value
                if first == "-riskAlpha":
                    values["risk_text"] = text
                options = options._replace(**values)
                options.check()
            elif first == "-M":
                options = options._replace(depth=_integer(first, text)).check()
            else:
                options = options._replace(baseline=text)
            args = args[2:]
        elif count >= 4 and first == "-traditional":
            options = options._replace(traditional=True)
            args = args[1:]
        elif count >= 4 and first.startswith("-"):
            for letter in first[1:]:
                if letter == "c":
                    options = options._replace(complete=True)
                elif letter != "a":
                    raise UsageError(f"{USAGE}: unknown option {first!r}")
            args = args[1:]
        else:
            raise UsageError(USAGE)
    return options, args[0], args[1]


def _number(option: str, text: str) -> float:
    value = leading_number(text)
    if value is None or value != value:
        raise UsageError(f"{option}: {text!r} is not a number")
    return value


def _integer(option: str, text: str) -> int:
    match = _INTEGER.match(text)
    if match is None or abs(int(match.group(0))) > 2**31 - 1:
        raise UsageError(f"{option}: {text!r} is not an integer")
    return int(match.group(0))
