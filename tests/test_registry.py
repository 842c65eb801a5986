"""The registry of report formats (:mod:`prefeval.report.formats`): every format writes every kind it
names, each command offers exactly its kind's formats, and the records' kinds are told by their keys."""

from __future__ import annotations

import inspect
import io

import numpy as np
import pytest
from conftest import QRELS, RUNS, example_eval_lines
from contract import NDEVAL_DATA

from prefeval.analyses.aggregate import aggregate
from prefeval.analyses.check import check
from prefeval.analyses.ndeval import ndeval_report
from prefeval.analyses.null import NullEvaluation, null_records, read_null_lines
from prefeval.analyses.sampled_metrics import SampledEvaluation, read_sampled_lines, sampled_records
from prefeval.analyses.significance import SignificanceOptions, pairwise_significance
from prefeval.cli.aggregate import aggregate_command
from prefeval.cli.check import check_command
from prefeval.cli.evaluate import eval_command
from prefeval.cli.significance import significance_command
from prefeval.engine.evaluation import Evaluation
from prefeval.errors import UsageError
from prefeval.io.jsonl import write_jsonl
from prefeval.io.records import (
    ABOVE_NULL_SUMMARY,
    CONSISTENCY,
    NULL_DISTRIBUTION,
    OBSERVED,
    SAMPLED_VALUES,
    null_record_kind,
    sampled_record_kind,
)
from prefeval.measures.catalogue import measure_catalogue
from prefeval.report.evaluation import write_evaluation
from prefeval.report.formats import (
    CATALOGUE,
    CHECK,
    EVALUATION,
    FORMATS,
    KIND_OPTIONS,
    NDEVAL,
    NULL,
    ORDERINGS,
    SAMPLED,
    SIGNIFICANCE,
    formats_for,
    write_records,
)


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict:
    """Records of every kind, made from the bundled examples."""
    prefs = example_eval_lines(tmp_path_factory.mktemp("prefs") / "prefs.jsonl", "rpp,ap")
    sampled = SampledEvaluation.from_files(QRELS, RUNS[:2], 200, ["ap"], sample_sizes=[10])
    null = NullEvaluation.from_files(QRELS, RUNS[:2], ["ap"], draws=50, seed=1)
    return {
        EVALUATION: Evaluation.from_files(QRELS, RUNS[:3], ["ap", "rpp"], jobs=1),
        ORDERINGS: list(aggregate(prefs)),
        SIGNIFICANCE: list(pairwise_significance(prefs, ["ap"], SignificanceOptions(bootstrap=None, seed=1))),
        CHECK: check(QRELS, RUNS),
        CATALOGUE: measure_catalogue(),
        SAMPLED: list(sampled_records(sampled)),
        NULL: list(null_records(null)),
        NDEVAL: ndeval_report(str(NDEVAL_DATA / "edge.qrels"), str(NDEVAL_DATA / "edge.run")),
    }


def test_every_kind_has_its_options_and_every_format_writes_known_kinds():
    assert set(KIND_OPTIONS) == {EVALUATION, ORDERINGS, SIGNIFICANCE, CHECK, CATALOGUE, SAMPLED, NULL, NDEVAL}
    for writers in FORMATS.values():
        assert writers and set(writers) <= set(KIND_OPTIONS)
    assert all("jsonl" in formats_for(kind) for kind in KIND_OPTIONS)


@pytest.mark.parametrize("fmt, kind", [(fmt, kind) for fmt, writers in FORMATS.items() for kind in writers])
def test_every_format_writes_every_kind_it_names(records, fmt, kind):
    """Each writer exists, takes the options the registry gives it, says what ``--format`` shows, and
    writes its kind's records."""
    writer = FORMATS[fmt][kind]
    parameters = inspect.signature(writer.function()).parameters
    assert set(writer.options) <= set(parameters) and set(writer.options) <= {*KIND_OPTIONS[kind], "fmt"}
    assert writer.help
    stream = io.BytesIO()
    write_records(kind, records[kind], stream, fmt)
    text = stream.getvalue().decode()
    assert text.endswith("\n") and text.strip()


def test_jsonl_writes_the_records_as_they_are(records):
    for kind in (ORDERINGS, SIGNIFICANCE, CHECK, CATALOGUE, SAMPLED, NULL):
        written, expected = io.BytesIO(), io.BytesIO()
        write_records(kind, records[kind], written)
        write_jsonl(records[kind], expected)
        assert written.getvalue() == expected.getvalue()


def test_an_unknown_format_or_option_is_refused_as_before():
    with pytest.raises(UsageError, match=r"^unknown format 'trec_eval'; choose one of jsonl, tsv, table, markdown, "
                                         r"latex$"):
        write_records(ORDERINGS, [], io.BytesIO(), "trec_eval")
    with pytest.raises(UsageError, match=r"^unknown format 'latex'; choose one of jsonl, table$"):
        write_records(CHECK, [], io.BytesIO(), "latex")
    with pytest.raises(TypeError, match="orderings records have no option baseline"):
        write_records(ORDERINGS, [], io.BytesIO(), "table", baseline="A")
    with pytest.raises(ValueError, match="unknown record kind 'nope'"):
        formats_for("nope")


def test_the_tools_formats_render_any_evaluation(records):
    """trec_eval's and ir_measures' layouts render what an evaluation holds, whatever its conventions
    (here the reference's, of the Python API): each run's metrics under the tool's names, the
    evaluation's own summary."""
    evaluation = records[EVALUATION]
    summary = next(result for result in evaluation.results() if not hasattr(result, "qids"))
    for fmt, name in (("trec_eval", "map"), ("ir_measures", "AP")):
        stream = io.BytesIO()
        write_evaluation(evaluation, stream, fmt)
        fields = [line.split("\t") for line in stream.getvalue().decode().splitlines()]
        named = [row for row in fields if name in (field.strip() for field in row)]
        assert len(fields) == len(named) == evaluation.num_runs, fields  # the preference has no line
        assert [float(row[-1]) for row in named] == pytest.approx(summary.metrics["ap"].tolist(), abs=5e-5)


def choices(command, name: str) -> tuple[str, ...]:
    (option,) = [param for param in command.params if param.name == name]
    return tuple(option.type.choices)


def test_each_command_offers_the_formats_of_its_kind():
    assert choices(eval_command, "fmt") == formats_for(EVALUATION) == (
        "jsonl", "tsv", "table", "markdown", "latex", "trec_eval", "ir_measures")
    assert choices(aggregate_command, "fmt") == formats_for(ORDERINGS) == ("jsonl", "tsv", "table", "markdown", "latex")
    assert choices(significance_command, "fmt") == formats_for(SIGNIFICANCE) == formats_for(ORDERINGS)
    assert choices(check_command, "report_format") == formats_for(CHECK) == ("jsonl", "table")
    assert formats_for(CATALOGUE) == ("jsonl", "table")  # measures: --json, else the table


def test_sampled_and_null_records_are_told_apart_by_their_keys(records, tmp_path):
    sampled_kinds = [sampled_record_kind(record) for record in records[SAMPLED]]
    assert sampled_kinds == [SAMPLED_VALUES, SAMPLED_VALUES, CONSISTENCY]
    null_kinds = {null_record_kind(record) for record in records[NULL]}
    assert null_kinds == {NULL_DISTRIBUTION, OBSERVED, ABOVE_NULL_SUMMARY}
    assert null_record_kind({"qid": "1", "run": "A", "measure": "ap", "value": 0.5}) is None
    path = tmp_path / "sampled.jsonl"
    with path.open("wb") as stream:
        write_jsonl(records[SAMPLED], stream)
    lines = read_sampled_lines(str(path))
    assert (lines.means, lines.consistency, lines.measures) == (records[SAMPLED][:2], records[SAMPLED][2:], ["ap"])
    path = tmp_path / "null.jsonl"
    with path.open("wb") as stream:
        write_jsonl(records[NULL], stream)
    null = read_null_lines(str(path))
    assert len(null.queries) + len(null.observed) + len(null.summaries) == len(records[NULL])
    assert null.measures == ["ap"] and np.isfinite([r["expected"] for r in null.queries]).all()
