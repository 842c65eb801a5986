"""``prefeval trec_eval ARGS``: trec_eval 10.0's command line, read as trec_eval reads it (``trec_eval.c``)
and carried out by ``prefeval eval --format trec_eval``, so that it prints what trec_eval prints, byte
for byte. It only translates: the arguments become ``prefeval eval``'s (:func:`eval_arguments`), and
``prefeval eval`` does the rest; the console script ``prefeval-trec_eval`` is this command.

**The command line** is read as glibc's ``getopt_long`` reads trec_eval's (:func:`options`): the
letters ``hvqm:cl:nD:JN:M:R:T:oZ:``, clustered (``-qc``) and with their values glued (``-mP.10``,
``-M100``, ``-l2``) or apart (``-m P.10``); the long names (``--measure map``, ``--measure=map``, or
any unambiguous start of one, ``--meas=map``); options and operands in any order (unless
``POSIXLY_CORRECT`` is set), ``--`` ending the options. The operands are the qrels, then the run
(``-`` for standard input, which trec_eval allows for the run alone: qrels or a z-score file named
``-`` are the file ``./-``).

**Each option** (trec_eval's meaning, and what it becomes):

* ``-q``, ``-c``, ``-n``, ``-J``: per-query lines, missing queries scored as retrieving nothing, no
  summary, judged documents only: ``eval``'s ``-q``, ``-c``, ``-n``, ``-J``;
* ``-m NAME[.PARAMS]``: a measure or nickname, read as trec_eval reads it (``eval
  --measure-names trec_eval``: one name per ``-m``, spelled exactly, ``rbp`` is trec_eval's); a name
  trec_eval does not have is refused as it is met, "illegal measure";
* ``-l N`` (a relevance level), ``-N N`` (the number of documents in the collection, for utility),
  ``-M N`` (at most N documents per query: ``eval --topk N``): integers, as trec_eval's ``atol`` reads
  them; a text that is not one is refused (``atol`` would read ``1.5`` as 1, ``x`` as 0), and so are a
  level below 1 (prefeval never counts grade 0 as relevant; trec_eval's ``-l 0`` does) and ``-M 0``
  (no document kept, where trec_eval prints ``-nan``);
* ``-R FORMAT``: the judgments' format: ``qrels`` (trec_eval's default); ``prefs``, ``qrels_prefs`` and
  ``qrels_jg``, trec_eval's other formats, go through :func:`judgment_format` (the one place that
  will hand them to ``eval``); any other is trec_eval's "Illegal rel_format";
* ``-T FORMAT``: the run's format: ``trec_results``, trec_eval's only one;
* ``-Z FILE``: z-scores against FILE (``eval -Z``, :mod:`prefeval.io.zscores`);
* ``-D LEVEL[.QID]``: trec_eval's debugging: ``-D 0`` (its default) is accepted; any other level, and
  a query to evaluate alone for debugging (``.QID``), is refused, since what it prints is trec_eval's
  internal state among the results;
* ``-o`` (and ``--Output_old_results_format X``, which trec_eval's table gives a value): accepted and
  ignored, as trec_eval 10.0 ignores it ("Obsolete, no longer supported");
* ``-h``, ``--help``: prefeval's help for this command on stdout, and for each measure named by
  ``-m``, what it is (trec_eval prints its own manual, which is not prefeval's to copy); exit 0,
  after every option is read, as trec_eval;
* ``-v``, ``--version``: prefeval's version and the trec_eval version whose command line this is,
  on stderr (as trec_eval prints its version), exit 0 as soon as it is met.

**Exit codes** are trec_eval's: 0; 1 for a command line trec_eval refuses (an unknown option, an
option without its value, not two operands, an illegal measure); 2 for an input that cannot be read
or is malformed, a judgment or run format trec_eval does not have, or a measure trec_eval cannot set
up as asked (its "Cannot initialize measure"); 255 for a z-score file it cannot read. Every error is
one line, ``prefeval: error: ...``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import NamedTuple

import click

from prefeval.cli.common import CONTEXT, exit_codes, fail
from prefeval.errors import InputError, UsageError

TREC_EVAL_VERSION = "10.0"
"""The trec_eval whose command line and output this command is."""
SHORT_OPTIONS = "hvqm:cl:nD:JN:M:R:T:oZ:"
"""trec_eval's option letters, as ``getopt`` writes them (a colon: the letter takes a value)."""
LONG_OPTIONS: dict[str, tuple[str, bool]] = {
    "help": ("h", False),
    "version": ("v", False),
    "query_eval_wanted": ("q", False),
    "measure": ("m", True),
    "complete_rel_info_wanted": ("c", False),
    "level_for_rel": ("l", True),
    "nosummary": ("n", False),
    "Debug_level": ("D", True),
    "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True),
    "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True),
    "Results_format": ("T", True),
    "Output_old_results_format": ("o", True),
    "Zscore": ("Z", True),
}
"""trec_eval's long options: the letter each stands for, and whether it takes a value (trec_eval's
table gives ``--Output_old_results_format`` one, where ``-o`` takes none)."""

QRELS, RESULTS = "qrels", "trec_results"
"""trec_eval's judgment format and run format by default (its only run format)."""
JUDGMENT_FORMATS = ("qrels_jg", "prefs", "qrels_prefs")
"""trec_eval's other judgment formats (``formats.c``)."""
EXIT_USAGE, EXIT_INPUT, EXIT_ZSCORES = 1, 2, 255
"""trec_eval's exit codes: a command line it refuses; an input it cannot read (or a format, or a
measure it cannot set up); a z-score file it cannot read (its ``return (UNDEF)`` from ``main``)."""
_INTEGER = re.compile(r"\s*[+-]?[0-9]+")


class TrecEvalOptions(NamedTuple):
    """trec_eval's command line, read (:func:`read_command_line`)."""

    operands: list[str]
    measures: list[str]
    help: bool = False
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int | None = None
    num_docs: int | None = None
    max_docs: int | None = None
    rel_format: str = QRELS
    results_format: str = RESULTS
    zscores: str | None = None


class CommandLineError(Exception):
    """A command line trec_eval refuses (exit code :data:`EXIT_USAGE`)."""


class FormatError(UsageError):
    """A judgment or run format (``-R``, ``-T``) prefeval does not read (exit code :data:`EXIT_INPUT`,
    trec_eval's for a format it does not have)."""


def options(args: list[str]) -> Iterator[tuple[str, str | None]]:
    """trec_eval's options in ``args``, one (letter, value) at a time as glibc's ``getopt_long`` finds
    them (module docstring), and last ("", operand) for each operand, in order. A
    :class:`CommandLineError` with glibc's words where it stops, when it is reached (an option met
    earlier has been yielded, as trec_eval acts on each as it comes)."""
    takes_value = {letter: SHORT_OPTIONS[place + 1:place + 2] == ":"
                   for place, letter in enumerate(SHORT_OPTIONS) if letter != ":"}
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        if arg.startswith("--"):
            name, equals, value = arg[2:].partition("=")
            found = [long for long in LONG_OPTIONS if long.startswith(name)]
            if name in LONG_OPTIONS:
                found = [name]
            if not found:
                raise CommandLineError(f"unrecognized option '{arg}'")
            if len(found) > 1:
                raise CommandLineError(f"option '--{name}' is ambiguous; possibilities: "
                                       + " ".join(f"'--{long}'" for long in found))
            letter, needs_value = LONG_OPTIONS[found[0]]
            if needs_value and not equals:
                if index >= len(args):
                    raise CommandLineError(f"option '--{found[0]}' requires an argument")
                value, index = args[index], index + 1
            elif equals and not needs_value:
                raise CommandLineError(f"option '--{found[0]}' doesn't allow an argument")
            yield letter, value if needs_value else None
        elif arg.startswith("-") and arg != "-":
            place = 1
            while place < len(arg):
                letter = arg[place]
                if letter not in takes_value:
                    raise CommandLineError(f"invalid option -- '{letter}'")
                if not takes_value[letter]:
                    yield letter, None
                    place += 1
                    continue
                if place + 1 < len(arg):
                    yield letter, arg[place + 1:]
                elif index < len(args):
                    yield letter, args[index]
                    index += 1
                else:
                    raise CommandLineError(f"option requires an argument -- '{letter}'")
                break
        elif os.environ.get("POSIXLY_CORRECT"):
            operands += args[index - 1:]
            break
        else:
            operands.append(arg)
    for operand in operands:
        yield "", operand


def read_command_line(args: list[str]) -> TrecEvalOptions:
    """trec_eval's command line ``args`` (module docstring), read option by option; ``-v`` prints the
    version and ends the command when it is met, as trec_eval does. A :class:`CommandLineError` for
    what trec_eval refuses, a :class:`UsageError` for what prefeval does not do."""
    read = TrecEvalOptions([], [])
    for letter, value in options(args):
        if letter == "":
            read.operands.append(value)
        elif letter == "v":
            _print_version()
        elif letter == "m":
            from prefeval.measures.foreign.trec_eval import check_written

            try:
                check_written(value)  # a name trec_eval does not have is refused as it is met
            except UsageError as error:
                raise CommandLineError(str(error)) from None
            read.measures.append(value)
        else:
            read = read._replace(**_option(letter, value))
    return read


_FLAGS = {"h": {"help": True}, "q": {"query": True}, "c": {"complete": True}, "n": {"summary": False},
          "J": {"judged_only": True}, "o": {}}


def _option(letter: str, value: str | None) -> dict:
    """The fields of :class:`TrecEvalOptions` an option other than ``-v`` and ``-m`` sets."""
    if letter in _FLAGS:
        return _FLAGS[letter]
    if letter == "l":
        level = _integer(value, "-l", "a relevance level")
        if level < 1:
            raise UsageError(f"-l {value}: prefeval counts a grade as relevant only above 0 (trec_eval's -l {level} "
                             "counts judged non-relevant documents as relevant)")
        return {"level": level}
    if letter == "N":
        count = _integer(value, "-N", "a number of documents")
        if count < 0:
            raise UsageError(f"-N {value}: a number of documents in the collection is at least 0")
        return {"num_docs": count}
    if letter == "M":
        count = _integer(value, "-M", "a number of documents")
        if count < 1:
            raise UsageError(f"-M {value}: keep at least 1 document per query (trec_eval's -M {count} keeps none "
                             "and prints -nan)")
        return {"max_docs": count}
    if letter == "D":
        level, _, query = value.partition(".")
        if _INTEGER.fullmatch(level) and int(level) == 0 and not query:
            return {}
        raise UsageError(f"-D {value}: trec_eval's debugging (its internal state printed among the results, for "
                         "one query with LEVEL.QID) is not reproduced; only -D 0, its default, is accepted")
    if letter == "R":
        return {"rel_format": value}
    if letter == "T":
        return {"results_format": value}
    return {"zscores": value}  # -Z


def _integer(value: str, option: str, what: str) -> int:
    """``value`` as trec_eval's ``atol`` reads it, when all of it is an integer; a :class:`UsageError`
    otherwise."""
    if not _INTEGER.fullmatch(value):
        raise UsageError(f"{option} {value}: {what} is an integer")
    return int(value)


def judgment_format(rel_format: str) -> list[str]:
    """``prefeval eval``'s options for the judgments of trec_eval's ``-R FORMAT``: ``qrels`` is eval's
    default; trec_eval's preference judgments (``prefs``, ``qrels_prefs``) and judgment groups
    (``qrels_jg``), :data:`JUDGMENT_FORMATS`, are eval's ``--rel-format`` of the same name
    (:mod:`prefeval.io.judgments`). Any other format, prefeval's own pairwise files included, is
    trec_eval's "Illegal rel_format" (a :class:`FormatError`)."""
    if rel_format == QRELS:
        return []
    if rel_format in JUDGMENT_FORMATS:
        return ["--rel-format", rel_format]
    raise FormatError(f"-R {rel_format}: illegal rel_format (trec_eval's: {', '.join((QRELS, *JUDGMENT_FORMATS))})")


def eval_arguments(read: TrecEvalOptions) -> list[str]:
    """The arguments of ``prefeval eval`` that do what trec_eval's command line ``read`` asks
    (module docstring); a :class:`CommandLineError` for operands other than the qrels and the run, a
    :class:`FormatError` for formats prefeval does not read."""
    if len(read.operands) != 2:
        raise CommandLineError(f"expected the qrels and the run, got {len(read.operands)} argument"
                               f"{'' if len(read.operands) == 1 else 's'}")
    qrels, run = read.operands
    arguments = ["--format=trec_eval", "--measure-names=trec_eval", "--quiet", f"--qrels={_named_file(qrels)}"]
    arguments += judgment_format(read.rel_format)
    if read.results_format != RESULTS:
        raise FormatError(f"-T {read.results_format}: illegal retrieval results format (trec_eval's: {RESULTS})")
    arguments += [f"--measure={measure}" for measure in read.measures]
    arguments += [flag for flag, wanted in (("-q", read.query), ("-c", read.complete), ("-n", not read.summary),
                                            ("-J", read.judged_only)) if wanted]
    arguments += [f"{option}={value}" for option, value in (("--relevance_level", read.level),
                                                             ("--num_docs", read.num_docs),
                                                             ("--topk", read.max_docs),
                                                             ("--zscores", _named_file(read.zscores)))
                  if value is not None]
    return arguments + ["--", run]


def _named_file(path: str | None) -> str | None:
    """A file trec_eval opens by name (the qrels, the z-score file): ``-`` is the file ``./-``, not
    standard input, which trec_eval reads for the run alone."""
    return os.path.join(os.curdir, path) if path == "-" else path


class _RawArguments(click.Command):
    """A command given its arguments untouched (trec_eval's are read by :func:`options`, ``--`` and
    ``--help`` included)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.params["args"] = list(args)
        ctx.args = []
        return []


@click.command("trec_eval", cls=_RawArguments, context_settings={**CONTEXT, "help_option_names": []},
               add_help_option=False)
def trec_eval_command(args):
    """Evaluate a run as trec_eval does, on trec_eval's command line."""
    from prefeval.cli.evaluate import eval_command
    from prefeval.io.zscores import ZScoreFileError

    try:
        read = read_command_line(args)
        if read.help:
            click.echo(help_text(read.measures), nl=False)
            return
        arguments = eval_arguments(read)
    except CommandLineError as error:
        fail(f"{error}; see prefeval trec_eval -h", EXIT_USAGE)
    except FormatError as error:
        fail(str(error), EXIT_INPUT)
    except UsageError as error:
        fail(str(error), EXIT_USAGE)
    with exit_codes({ZScoreFileError: EXIT_ZSCORES, InputError: EXIT_INPUT, UsageError: EXIT_INPUT,
                     click.ClickException: EXIT_INPUT}):
        eval_command.main(arguments, prog_name="prefeval trec_eval", standalone_mode=False)


def _print_version() -> None:
    """``-v``: the versions, on stderr, and the end of the command (exit code 0), as trec_eval."""
    from prefeval import __version__

    click.echo(f"prefeval trec_eval {__version__} (trec_eval version {TREC_EVAL_VERSION}'s command line and output)",
               err=True)
    sys.exit(0)


HELP = """\
Usage: prefeval trec_eval [OPTIONS] QRELS RUN
       prefeval-trec_eval [OPTIONS] QRELS RUN

  Evaluate RUN (- for standard input) against QRELS, on trec_eval 10.0's command line, printing what
  trec_eval 10.0 prints, byte for byte: prefeval eval --format trec_eval does the work. Options may
  come anywhere, their values glued (-mP.10, -M100) or apart; long names may be shortened.

Options:
  -m, --measure NAME[.P,...]   A measure or nickname of trec_eval (official, the default; set; all_trec),
                               its parameters after the dot: -m P.5,10 -m ndcg.1=3,2=9. Repeatable.
                               `prefeval measures` lists trec_eval's names.
  -q, --query_eval_wanted      Per-query lines, then the summary.
  -n, --nosummary              No summary lines.
  -c, --complete_rel_info_wanted
                               A query of QRELS that RUN lacks counts, as retrieving nothing.
  -l, --level_for_rel N        Binary measures count grade >= N as relevant (default 1).
  -J, --Judged_docs_only       Drop the documents QRELS does not judge from RUN before ranking.
  -M, --Max_retrieved_per_topic N
                               Keep the first N documents of each query (prefeval eval --topk N).
  -N, --Number_docs_in_coll N  The number of documents in the collection (utility's).
  -Z, --Zscore FILE            Print z-scores against FILE's lines: qid measure mean stddev.
  -R, --Rel_info_format FORMAT The judgments' format: qrels (the default), prefs, qrels_prefs or
                               qrels_jg (prefeval eval --rel-format FORMAT).
  -T, --Results_format FORMAT  The run's format: trec_results (trec_eval's only one).
  -D, --Debug_level 0          trec_eval's debug level: 0 only (its debug output is not reproduced).
  -o                           Ignored, as trec_eval 10.0 ignores it.
  -v, --version                Print the version on stderr and exit.
  -h, --help                   Print this help and exit; with -m, what each measure is.

  Exit codes, trec_eval's: 0; 1 for a command line it refuses (an unknown option or measure, not two
  files); 2 for a file that cannot be read, a format it does not have, or a measure it cannot set up
  as asked; 255 for a z-score file it cannot read. Installed as prefeval-trec_eval too.

Examples:
  prefeval trec_eval -q -c -m all_trec qrels.txt run
  prefeval trec_eval -q -M100 -m official -m ndcg_cut.10,20 qrels.txt run.gz
  prefeval trec_eval -q -m all_trec -Z zscores.txt qrels.txt - < run
"""


def help_text(measures: list[str]) -> str:
    """What ``-h`` prints: :data:`HELP`, then, for the measures ``-m`` named, each one's name as
    trec_eval prints it, prefeval's name, what it is and where it comes from."""
    if not measures:
        return HELP
    from prefeval.measures.request import read_request, request_names

    request = read_request(measures, tool="trec_eval")
    names = request_names(request, "trec_eval")
    described = [f"  {names[measure.name]} (prefeval {measure.name}): {measure.summary}; {measure.cite}"
                 for measure in request.measures]
    described += [f"  {item.printed}: a line of trec_eval's output, not a measure" for item in request.lines]
    return HELP + "\nThe measures named (-m):\n" + "\n".join(described) + "\n"
