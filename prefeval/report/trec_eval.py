"""trec_eval's text layout for ``eval --format tsv``, and trec_eval's names for prefeval's metrics.

trec_eval prints every value as ``printf("%-22s\\t%s\\t%6.4f\\n", measure, qid, value)``: the measure
name left-aligned in 22 characters, a tab, the query id (``all`` for the mean), a tab, the value with
4 decimals. prefeval writes the same, with trec_eval's name where one exists (:func:`trec_eval_name`)
and prefeval's canonical name otherwise, preceded by:

* a run column when several runs are evaluated: the run id on a run's metric lines, and
  ``RUNI/RUNJ`` on a pair's lines (run ids are file base names, so they never hold a ``/``);
* a sample column, before it, when several samples are drawn (``--samples``).

Lines come in the order of the JSON lines (queries in qrels order, then the means).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prefeval.errors import UsageError
from prefeval.measures import parse_measure

TREC_EVAL_LINE = "{name:<22}\t{qid}\t{value:6.4f}"
RECORD_KEYS = {"qid", "run", "runi", "runj", "sample", "type"}


def trec_eval_name(measure: str) -> str:
    """trec_eval's name of a prefeval metric: ``ap`` → ``map``, ``ap@10`` → ``map_cut_10``, ``ndcg`` →
    ``ndcg``, ``ndcg@10`` → ``ndcg_cut_10``, ``p@10`` → ``P_10``, ``p@0`` → ``set_P``, ``r@10`` →
    ``recall_10``, ``r@0`` → ``set_recall``, ``rr`` → ``recip_rank``, ``rp`` → ``Rprec``. Any other
    measure (preferences, ``rbp``, ``rr@k``) keeps its own name."""
    try:
        parsed = parse_measure(measure)
    except UsageError:
        return measure
    family = parsed.family
    k = parsed.param("k") if any(p.name == "k" for p in parsed.parameters) else None
    if family == "ap":
        return "map" if k == 0 else f"map_cut_{k}"
    if family == "ndcg":
        return "ndcg" if k == 0 else f"ndcg_cut_{k}"
    if family == "p":
        return "set_P" if k == 0 else f"P_{k}"
    if family == "r":
        return "set_recall" if k == 0 else f"recall_{k}"
    if family == "rr" and k == 0:
        return "recip_rank"
    if family == "rp":
        return "Rprec"
    return measure


def trec_eval_lines(records: Iterable[dict], run_column: bool, sample_column: bool) -> Iterator[str]:
    """The lines of ``eval`` records (:mod:`prefeval.report.eval_lines`) in trec_eval's layout."""
    names: dict[str, str] = {}
    for record in records:
        prefix = f"{record['sample']}\t" if sample_column else ""
        if run_column:
            prefix += (record["run"] if "run" in record else f"{record['runi']}/{record['runj']}") + "\t"
        qid = record["qid"]
        for measure, value in record.items():
            if measure in RECORD_KEYS:
                continue
            if measure not in names:
                names[measure] = trec_eval_name(measure)
            yield prefix + TREC_EVAL_LINE.format(name=names[measure], qid=qid, value=value)
