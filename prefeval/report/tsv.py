"""trec_eval's text layout for ``eval --format tsv``, and trec_eval's names for prefeval's metrics.

trec_eval prints every value as ``printf("%-22s\\t%s\\t%6.4f\\n", measure, qid, value)``: the measure
name left-aligned in 22 characters, a tab, the query id (``all`` for the mean), a tab, the value with
4 decimals. prefeval writes the same, with trec_eval's name where one exists (:func:`trec_eval_name`)
and prefeval's canonical name otherwise, preceded by:

* a run column when several runs are evaluated: the run id on a run's metric lines, and
  ``RUNI/RUNJ`` on a pair's lines;
* a sample column, before it, when several samples are drawn (``--samples``).

Run and query ids are escaped as every tsv field is (:func:`~prefeval.report.formats.tsv_text`: a
tab, line break or backslash in a run id, a name given in Python or a file name, is written ``\\t``,
``\\n``, ``\\\\``), and in the pair column a ``/`` within a run id is written ``\\/``, so that every
line keeps its columns.

Lines come in the order of the JSON lines (queries in qrels order, then the means).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prefeval.errors import UsageError
from prefeval.io.keys import LABEL_KEYS, QID, RUN, RUNI, RUNJ, SAMPLE
from prefeval.measures import parse_measure
from prefeval.measures.names import trec_eval_spelling
from prefeval.report.formats import tsv_text


def trec_eval_line(name: str, qid: str, value: str) -> str:
    """One line as trec_eval prints it: the name left-aligned in 22 characters, the query id, the
    value (already written: ``%6.4f``, or an integer, or a run tag)."""
    return f"{name:<22}\t{qid}\t{value}"


def trec_eval_name(measure: str) -> str:
    """trec_eval's name of the prefeval measure ``measure``, from the one table of foreign names
    (:func:`~prefeval.measures.names.trec_eval_spelling`): ``ap@10`` → ``map_cut_10``, ``p@0`` →
    ``set_P``, ``success@1`` → ``success_1``. A measure trec_eval has no name for (preferences,
    ``rbp``, ``rr@10``), or a name that is not a measure, is written as it is."""
    try:
        return trec_eval_spelling(parse_measure(measure)) or measure
    except UsageError:
        return measure


def trec_eval_lines(records: Iterable[dict], run_column: bool, sample_column: bool) -> Iterator[str]:
    """The lines of ``eval`` records (:mod:`prefeval.report.eval_lines`) in trec_eval's layout."""
    names: dict[str, str] = {}
    for record in records:
        prefix = f"{record[SAMPLE]}\t" if sample_column else ""
        if run_column:
            if RUN in record:
                prefix += tsv_text(record[RUN]) + "\t"
            else:
                prefix += f"{tsv_text(record[RUNI], '/')}/{tsv_text(record[RUNJ], '/')}\t"
        qid = tsv_text(record[QID])
        for measure, value in record.items():
            if measure in LABEL_KEYS:
                continue
            if measure not in names:
                names[measure] = trec_eval_name(measure)
            yield prefix + trec_eval_line(names[measure], qid, f"{value:6.4f}")
