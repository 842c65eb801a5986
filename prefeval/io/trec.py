"""TREC qrels and run files.

* qrels: ``qid iter docid grade``. ``iter`` is ``0``, ``Q0`` or a subtopic id; a document's grade is
  its maximum over the lines that judge it.
* run: ``qid Q0 docid rank score [tag]``. Only qid, docid and score are used (the rank column is
  ignored, as trec_eval ignores it); a score may use a decimal comma; a line whose score is ``nan``
  is skipped.

Fields are separated by tabs or runs of spaces; blank lines and lines starting with ``#`` are skipped
(as trec_eval 10 does); Windows line endings and a UTF-8 byte-order mark are accepted.

Reading has two paths that accept exactly the same files. The fast path hands the bytes to pandas'
C tokeniser (with a one-character separator when the file allows it, which is twice as fast as
``\\s+``) and checks the shape of the result. Whenever the fast path fails or finds anything odd, the
slow path reads the file line by line in Python: it either raises an :class:`InputError` naming the
first bad line, or (for the rare valid file that pandas cannot take, such as one mixing lines with
and without a tag) returns the columns itself.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval.errors import InputError
from prefeval.io.source import display_name, read_bytes

NAN_SPELLINGS = ("nan", "NaN", "NAN", "Nan", "-nan", "+nan")
_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*(?:\n|$)")
_ENCODING = dict(encoding="utf-8", encoding_errors="surrogateescape")


@dataclass(frozen=True)
class LineFormat:
    """The shape of one kind of TREC file, for both reading paths and for error messages."""

    kind: str
    layout: str
    min_fields: int
    max_fields: int
    text_fields: dict[str, int]
    number_field: tuple[str, int]
    nan_allowed: bool
    decimal_comma: bool
    other_kind_hint: str

    def field_count_error(self, found: int) -> str:
        expected = (
            f"{self.min_fields}" if self.min_fields == self.max_fields
            else f"{self.min_fields} or {self.max_fields}"
        )
        message = f"expected {expected} fields ({self.layout}), found {found}"
        return message + self.other_kind_hint


QRELS_FORMAT = LineFormat(
    kind="qrels",
    layout="qid iter docid grade",
    min_fields=4,
    max_fields=4,
    text_fields={"qid": 0, "docid": 2},
    number_field=("grade", 3),
    nan_allowed=False,
    decimal_comma=False,
    other_kind_hint="; is this a run file given as qrels?",
)

RUN_FORMAT = LineFormat(
    kind="run",
    layout="qid Q0 docid rank score [tag]",
    min_fields=5,
    max_fields=6,
    text_fields={"qid": 0, "docid": 2},
    number_field=("score", 4),
    nan_allowed=True,
    decimal_comma=True,
    other_kind_hint="; is this a qrels file given as a run?",
)


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments, reduced to what evaluation needs: the relevant documents per query.

    Queries are numbered 0..Q-1 in order of first appearance in the file; only queries with at
    least one relevant document (grade > 0 after ``binary_relevance`` / ``relevance_floor``) are
    kept, the others are listed in ``dropped_qids``. The relevant documents of query ``q`` are
    ``docids[offsets[q]:offsets[q + 1]]``, in order of first appearance, with their ``grades``.
    ``num_judged[q]`` counts the documents judged for query ``q``, whatever their grade (None when
    the qrels were not read from judgments, as in some tests).
    """

    source: str
    qids: list[str]
    dropped_qids: list[str]
    offsets: np.ndarray
    docids: np.ndarray
    grades: np.ndarray
    num_judged: np.ndarray | None = None

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    @property
    def num_relevant(self) -> np.ndarray:
        """m per query: the number of relevant documents."""
        return np.diff(self.offsets)

    @property
    def query_of_document(self) -> np.ndarray:
        """For each relevant document, the index of its query."""
        return np.repeat(np.arange(self.num_queries), self.num_relevant)


@dataclass(frozen=True)
class RunColumns:
    """The three columns of a run that evaluation reads, one row per scored (non-nan) line."""

    source: str
    run_id: str
    qids: np.ndarray
    docids: np.ndarray
    scores: np.ndarray
    data: bytes

    def __len__(self) -> int:
        return len(self.scores)


def run_id_from_path(path: str) -> str:
    """The run id of a run file: its base name without a leading ``input.`` and a trailing ``.gz``."""
    name = os.path.basename(os.fspath(path).rstrip("/\\")) if path != "-" else "stdin"
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    return name


def read_qrels(
    path: str,
    binary_relevance: float | None = None,
    relevance_floor: float | None = None,
) -> Qrels:
    """Read a qrels file.

    ``binary_relevance=G`` maps a grade g to 1 if g >= G else 0; ``relevance_floor=F`` then maps any
    grade below F to 0 (the order of the reference pref_eval.py). Grades <= 0 are non-relevant.
    """
    source = display_name(path)
    data = read_bytes(path)
    columns = read_columns(data, source, QRELS_FORMAT)
    grades = columns["grade"]
    if binary_relevance is not None:
        grades = (grades >= binary_relevance).astype(np.float64)
    if relevance_floor is not None:
        grades = np.where(grades < relevance_floor, 0.0, grades)
    query_codes, qids = pd.factorize(columns["qid"])
    judgments = pd.DataFrame({"query": query_codes, "docid": columns["docid"], "grade": grades})
    best = judgments.groupby(["query", "docid"], sort=False)["grade"].max().reset_index()
    relevant = best[best["grade"] > 0]
    relevant = relevant.iloc[np.argsort(relevant["query"].to_numpy(), kind="stable")]
    kept = np.unique(relevant["query"].to_numpy())
    if len(kept) == 0:
        raise InputError(source, "no query has a relevant document (a grade > 0 after -b/-f)")
    renumber = np.full(len(qids), -1)
    renumber[kept] = np.arange(len(kept))
    query_of_document = renumber[relevant["query"].to_numpy()]
    offsets = np.searchsorted(query_of_document, np.arange(len(kept) + 1)).astype(np.int64)
    dropped = np.setdiff1d(np.arange(len(qids)), kept)
    return Qrels(
        source=source,
        qids=[str(qids[q]) for q in kept],
        dropped_qids=[str(qids[q]) for q in dropped],
        offsets=offsets,
        docids=relevant["docid"].to_numpy(dtype=object),
        grades=relevant["grade"].to_numpy(dtype=np.float64),
        num_judged=np.bincount(best["query"].to_numpy(), minlength=len(qids))[kept].astype(np.int64),
    )


def read_run(path: str) -> RunColumns:
    """Read a run file into its qid, docid and score columns (lines scored ``nan`` dropped)."""
    source = display_name(path)
    data = read_bytes(path)
    columns = read_columns(data, source, RUN_FORMAT)
    scored = ~np.isnan(columns["score"])
    if not scored.all():
        columns = {name: values[scored] for name, values in columns.items()}
    return RunColumns(
        source=source,
        run_id=run_id_from_path(path),
        qids=columns["qid"],
        docids=columns["docid"],
        scores=columns["score"],
        data=data,
    )


def read_columns(data: bytes, source: str, fmt: LineFormat) -> dict[str, np.ndarray]:
    """Tokenise ``data`` into the text columns (object arrays) and the number column (float64)."""
    columns = _read_columns_fast(data, fmt)
    if columns is None:
        columns = _read_columns_slowly(data, source, fmt)
    if len(columns[fmt.number_field[0]]) == 0:
        raise InputError(source, f"no {fmt.kind} lines ({fmt.layout}) in the file")
    return columns


def find_lines(data: bytes, fields: dict[int, str]) -> list[int]:
    """1-based numbers of the lines whose fields at the given indexes have the given values.

    Used only to report errors found after tokenising (a duplicate document, say), so it may be slow.
    """
    wanted = {index: value.encode("utf-8", "surrogateescape") for index, value in fields.items()}
    found = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        parts = line.split()
        if all(len(parts) > index and parts[index] == value for index, value in wanted.items()):
            found.append(number)
    return found


def _separator(text: bytes) -> str:
    """The fastest separator pandas can use for ``text``: a single tab or space, else ``\\s+``."""
    for sep, other in ((b"\t", b" "), (b" ", b"\t")):
        if (
            sep in text
            and other not in text
            and sep + sep not in text
            and not text.startswith(sep)
            and b"\n" + sep not in text
            and sep + b"\n" not in text
            and sep + b"\r" not in text
            and not text.endswith(sep)
        ):
            return sep.decode()
    return r"\s+"


def _read_columns_fast(data: bytes, fmt: LineFormat) -> dict[str, np.ndarray] | None:
    """pandas' C tokeniser; None when the file needs the slow path (to report an error, or to read it)."""
    text = data
    if text.startswith(b"#") or b"#" in text and _COMMENT_LINES.search(text):
        text = _COMMENT_LINES.sub(b"", text)
    if not text.strip():
        return None
    number_name, number_index = fmt.number_field
    dtypes = {index: object for index in range(fmt.max_fields)}
    dtypes[number_index] = np.float64
    try:
        frame = _pandas_read(text, dtypes, number_index)
    except ValueError:
        if not fmt.decimal_comma:
            return None
        try:
            dtypes[number_index] = object
            frame = _pandas_read(text, dtypes, number_index)
            raw = frame[number_index].astype(str).str.replace(",", ".", regex=False)
            numbers = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64)
            if np.isnan(numbers).any() and not raw[np.isnan(numbers)].isin(NAN_SPELLINGS).all():
                return None
            frame[number_index] = numbers
        except (ValueError, pd.errors.ParserError):
            return None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError):
        return None
    if not fmt.min_fields <= frame.shape[1] <= fmt.max_fields:
        return None
    columns = {}
    for name, index in fmt.text_fields.items():
        values = frame[index].to_numpy(dtype=object)
        if (values == "").any():
            return None
        columns[name] = values
    numbers = frame[number_index].to_numpy(dtype=np.float64)
    if not fmt.nan_allowed and np.isnan(numbers).any():
        return None
    if frame.shape[1] > fmt.min_fields and (frame[frame.shape[1] - 1].to_numpy(dtype=object) == "").any():
        return None  # some lines lack the optional field: let the slow path check them one by one
    columns[number_name] = numbers
    return columns


def _pandas_read(text: bytes, dtypes: dict[int, object], number_index: int) -> pd.DataFrame:
    return pd.read_csv(
        io.BytesIO(text),
        sep=_separator(text),
        header=None,
        index_col=False,
        dtype=dtypes,
        keep_default_na=False,
        na_values={number_index: list(NAN_SPELLINGS)},
        quoting=csv.QUOTE_NONE,
        engine="c",
        **_ENCODING,
    )


def _read_columns_slowly(data: bytes, source: str, fmt: LineFormat) -> dict[str, np.ndarray]:
    """Line by line: the first bad line raises an :class:`InputError`; a valid file is returned."""
    number_name, number_index = fmt.number_field
    text_values: dict[str, list[str]] = {name: [] for name in fmt.text_fields}
    numbers: list[float] = []
    for line_number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if not fmt.min_fields <= len(fields) <= fmt.max_fields:
            raise InputError(source, fmt.field_count_error(len(fields)), line_number)
        number = _parse_number(fields[number_index], fmt)
        if number is None:
            shown = fields[number_index].decode("utf-8", "replace")[:40]
            raise InputError(source, f"{number_name} {shown!r} is not a number", line_number)
        for name, index in fmt.text_fields.items():
            text_values[name].append(fields[index].decode("utf-8", "surrogateescape"))
        numbers.append(number)
    columns = {name: np.array(values, dtype=object) for name, values in text_values.items()}
    columns[number_name] = np.array(numbers, dtype=np.float64)
    return columns


def _parse_number(field: bytes, fmt: LineFormat) -> float | None:
    text = field.decode("utf-8", "replace")
    if fmt.decimal_comma:
        text = text.replace(",", ".")
    try:
        number = float(text)
    except ValueError:
        return None
    if np.isnan(number) and not fmt.nan_allowed:
        return None
    return number
