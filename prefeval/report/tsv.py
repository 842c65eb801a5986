"""trec_eval's text layout for ``eval --format tsv``.

trec_eval prints every value as ``printf("%-22s\\t%s\\t%6.4f\\n", measure, qid, value)``: the measure
name left-aligned in 22 characters, a tab, the query id (``all`` for the mean), a tab, the value with
4 decimals. prefeval writes the same, with trec_eval's name where one exists and prefeval's
otherwise (:func:`~prefeval.measures.request.layout_name`: the names of ``--format trec_eval``),
preceded by:

* a run column when several runs are evaluated: the run id on a run's metric lines, and
  ``RUNI/RUNJ`` on a pair's lines;
* a sample column, before it, when several samples are drawn (``--samples``).

Under ``--user-groups`` a group's summary lines have ``all:GROUP`` in the query column, and a run's
worst-off group for a metric is a line ``worst-off:GROUP`` with the group's value.

Run and query ids are escaped as every tsv field is (:func:`~prefeval.report.formats.tsv_text`: a
tab, line break or backslash in a run id, a name given in Python or a file name, is written ``\\t``,
``\\n``, ``\\\\``), and in the pair column a ``/`` within a run id is written ``\\/``, so that every
line keeps its columns.

Lines come in the order of the JSON lines (queries in the evaluation's order, then the summary).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prefeval.io.keys import GROUP, LABEL_KEYS, QID, RUN, RUNI, RUNJ, SAMPLE, TYPE, WORST_OFF
from prefeval.report.formats import tsv_text


def trec_eval_line(name: str, qid: str, value: str) -> str:
    """One line as trec_eval prints it: the name left-aligned in 22 characters, the query id, the
    value (already written: ``%6.4f``, or an integer, or a run tag)."""
    return f"{name:<22}\t{qid}\t{value}"


def trec_eval_lines(records: Iterable[dict], names: dict[str, str], run_column: bool,
                    sample_column: bool) -> Iterator[str]:
    """The lines of ``eval`` records (:mod:`prefeval.report.eval_lines`) in trec_eval's layout, each
    measure under its name in ``names`` (by prefeval name: trec_eval's where it has one,
    :func:`~prefeval.measures.request.request_names`); the other keys (a statistic ``ap:median``, a
    bound ``ap_ties_min``) as they are."""
    for record in records:
        prefix = f"{record[SAMPLE]}\t" if sample_column else ""
        if run_column:
            if RUN in record:
                prefix += tsv_text(record[RUN]) + "\t"
            else:
                prefix += f"{tsv_text(record[RUNI], '/')}/{tsv_text(record[RUNJ], '/')}\t"
        qid = tsv_text(WORST_OFF if record.get(TYPE) == WORST_OFF else record[QID])
        if GROUP in record:
            qid += ":" + tsv_text(record[GROUP])
        for key, value in record.items():
            if key not in LABEL_KEYS:
                yield prefix + trec_eval_line(names.get(key, key), qid, f"{value:6.4f}")
