"""``-m`` means the same in every output format: for every name of trec_eval's and ir_measures' tables
(each bare, and with an example parameter) and every trec_eval nickname, ``eval`` in ``jsonl``,
``tsv``, ``table``, ``trec_eval`` and ``ir_measures`` evaluates the same measures, under each format's
names from the one table of its tool, with the same values (under the same conventions, trec_eval's
here, given explicitly: each format's default conventions are its tool's). trec_eval's measures of
preferences and of judgment groups read the example qrels as such (``--rel-format``), in every
format but ``ir_measures``, which has none.

Each format's lines are read back into {(run, measure): value}: a measure named as prefeval names it
(jsonl, table), as trec_eval prints it (tsv, trec_eval, read by trec_eval's table) or as ir_measures
prints it (read by ir_measures' table); measures are compared by family and parameter values, the
values as printed (four decimals, counts as integers).
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from conftest import QRELS, RUNS

from prefeval.cli import main
from prefeval.io.judgments import GROUPS, PREFERENCES
from prefeval.measures import foreign
from prefeval.measures.foreign import ir_measures, trec_eval
from prefeval.measures.judgments import JudgmentMetric
from prefeval.measures.request import layout_name, read_request

FORMATS = ("jsonl", "tsv", "table", "trec_eval", "ir_measures")
ROOT = Path(__file__).resolve().parent.parent
TWO_RUNS = [run for run in RUNS if run.endswith(("bm25", "hybrid"))]
RUN_IDS = ("bm25", "hybrid")


def names() -> list[str]:
    """Every trec_eval and ir_measures name, bare and with an example parameter, and the nicknames."""
    found: list[str] = list(trec_eval.NICKNAMES)
    for module in foreign.TOOLS.values():
        for row in module.ROWS:
            if row.family is not None:
                found += [row.name, row.example()] if row.example() != row.name else [row.name]
    return list(dict.fromkeys(found))


def judgments_read(name: str) -> str:
    """The kind of judgments the measures of ``name`` read: ``qrels``, or, for trec_eval's measures of
    preferences and judgment groups, the example qrels read as such (``qrels_prefs``: one group per
    query; ``qrels_jg``: its iter field the one group), which ir_measures has no measures of."""
    kinds = {measure.judgments for measure in read_request([name]).measures if isinstance(measure, JudgmentMetric)}
    return {PREFERENCES: "qrels_prefs", GROUPS: "qrels_jg"}[kinds.pop()] if kinds else "qrels"


def evaluate(name: str, fmt: str) -> str:
    args = ["eval", "--format", fmt, "--conventions", "trec_eval", "--rel-format", judgments_read(name), "-m", name,
            "-R", QRELS, *TWO_RUNS]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, (name, fmt, result.output)
    return result.stdout


def values(fmt: str, output: str) -> dict[tuple[str, str], str]:
    """{(run, printed name): the value as printed, 4 decimals} of a format's summary lines."""
    read: dict[tuple[str, str], str] = {}
    lines = output.splitlines()
    if fmt == "jsonl":
        for record in map(orjson.loads, lines):
            if record.get("type") == "metric":
                for key, value in record.items():
                    if key not in ("qid", "run", "sample", "type"):
                        read[record["run"], key] = f"{value:.4f}"
    elif fmt == "table":
        header = lines[0].split()
        for line in lines[2:]:
            if not line.strip():
                break
            run, *cells = line.split()
            read.update({(run, key): cell for key, cell in zip(header[1:], cells)})
    elif fmt == "trec_eval":
        runs = iter(RUN_IDS)
        run = next(runs)
        for number, line in enumerate(lines):
            name, _, value = (field.strip() for field in line.split("\t"))
            if (run, name) in read or (number and name == "runid"):
                run = next(runs)
            if name not in trec_eval.LAYOUT:
                read[run, name] = _four_decimals(value)
    else:
        for line in lines:
            fields = [field.strip() for field in line.split("\t")]
            if fmt == "tsv" and ("/" in fields[0] or fields[-2] != "all"):
                continue  # a pair's line
            read[fields[0], fields[-3 if fmt == "tsv" else -2]] = _four_decimals(fields[-1])
    return read


def _four_decimals(value: str) -> str:
    return value if "." in value else f"{float(value):.4f}"  # counts, printed as integers


@pytest.mark.parametrize("name", names())
def test_every_foreign_name_means_the_same_in_every_format(name):
    """The same measures and values in every format, each under its format's name: prefeval's (jsonl,
    table), trec_eval's (tsv, trec_eval: the same names), ir_measures' (ir_measures)."""
    request = read_request([name])
    named = {
        "jsonl": {m.name: m.name for m in request.measures},
        "table": {m.name: m.name for m in request.measures},
        "tsv": {layout_name(m, trec_eval.TOOL, request.printed(trec_eval.TOOL)): m.name for m in request.measures},
        "ir_measures": {layout_name(m, ir_measures.TOOL, request.printed(ir_measures.TOOL)): m.name
                        for m in request.measures},
    }
    named["trec_eval"] = named["tsv"]
    expected = None
    formats = FORMATS if judgments_read(name) == "qrels" else tuple(fmt for fmt in FORMATS if fmt != "ir_measures")
    for fmt in formats:
        printed = values(fmt, evaluate(name, fmt))
        assert {printed_name for _, printed_name in printed} == set(named[fmt]), (name, fmt)
        by_measure = {(run, named[fmt][printed_name]): value for (run, printed_name), value in printed.items()}
        assert {run for run, _ in by_measure} == set(RUN_IDS), (name, fmt)
        expected = expected or by_measure
        assert by_measure == expected, (name, fmt)
    assert len(expected) == len(RUN_IDS) * len(request.measures)


def test_the_readme_commands_on_bare_list_names_hold(tmp_path):
    """The README's two commands on a bare trec_eval list name (section "Measure names from trec_eval
    and ir_measures"), run as shown: ``P`` is trec_eval's nine cut-offs, as prefeval's keys in the JSON
    lines and as trec_eval's names in tsv."""
    from test_readme_statistics import run_shell, section

    script = re.search(r"```sh\n(.*?)```", section("Measure names from trec_eval and ir_measures"), re.S).group(1)
    json_command, tsv_command = [line.split("  #")[0] for line in script.splitlines() if line.strip()]
    cut_offs = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    [summary] = map(orjson.loads, run_shell(json_command, ROOT, tmp_path).splitlines())
    assert [key for key in summary if key.startswith("p@")] == [f"p@{k}" for k in cut_offs]
    names = [line.split("\t")[0].strip() for line in run_shell(tsv_command, ROOT, tmp_path).splitlines()]
    assert names == [f"P_{k}" for k in cut_offs]
