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
slow path, :func:`scan_lines`, reads the file line by line in Python. Strictly (for evaluation,
:func:`read_columns`) it raises an :class:`InputError` naming the first bad line, or (for the rare
valid file that pandas cannot take, such as one mixing lines with and without a tag) returns the
columns itself. Leniently (for ``prefeval check``, :func:`read_columns_leniently`) it keeps the good
lines and counts the bad ones.
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
from prefeval.io.source import STDIN, display_name, read_bytes

NAN_SPELLINGS = ("nan", "NaN", "NAN", "Nan", "-nan", "+nan")
_COMMENT_LINES = re.compile(rb"(?m)^[ \t]*#[^\n]*(?:\n|$)")
_NOT_BLANK = re.compile(rb"\S")
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

    def parse_number(self, field: bytes) -> float | None:
        """The number in a grade or score field, or None when it is not one this format accepts
        (a decimal comma only where ``decimal_comma``, ``nan`` only where ``nan_allowed``)."""
        text = field.decode("utf-8", "replace")
        if self.decimal_comma:
            text = text.replace(",", ".")
        try:
            number = float(text)
        except ValueError:
            return None
        if np.isnan(number) and not self.nan_allowed:
            return None
        return number

    def field_count_error(self, found: int) -> str:
        """What is wrong with a line of ``found`` fields, with a hint that the file may be of the other kind."""
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
    """The three columns of a run that evaluation reads, one row per scored (non-nan) line.

    The file's bytes are not kept (a run can be large); :meth:`text` reads them again for an error
    message, except from stdin, which cannot be read twice and so is kept in ``stdin_text``.
    """

    source: str
    run_id: str
    qids: np.ndarray
    docids: np.ndarray
    scores: np.ndarray
    path: str | None
    stdin_text: bytes | None = None

    def text(self) -> bytes:
        """The run file's bytes (empty for a run that did not come from a file)."""
        if self.stdin_text is not None:
            return self.stdin_text
        return read_bytes(self.path) if self.path is not None else b""


@dataclass(frozen=True)
class Scan:
    """The columns of a file's well-formed lines, and its malformed lines: how many, the numbers
    (1-based) of the first few, and what is wrong with the first (None when no line is malformed)."""

    columns: dict[str, np.ndarray]
    malformed: int = 0
    malformed_lines: tuple[int, ...] = ()
    first_problem: str | None = None


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
    """Read a qrels file (see :func:`qrels_from_columns` for ``binary_relevance`` and ``relevance_floor``)."""
    source = display_name(path)
    columns = read_columns(read_bytes(path), source, QRELS_FORMAT)
    return qrels_from_columns(
        source, columns["qid"], columns["docid"], columns["grade"], binary_relevance, relevance_floor
    )


def qrels_from_columns(
    source: str,
    qids: np.ndarray,
    docids: np.ndarray,
    grades: np.ndarray,
    binary_relevance: float | None = None,
    relevance_floor: float | None = None,
) -> Qrels:
    """Build :class:`Qrels` from one row per judgment (from a file, a DataFrame or a dict).

    ``binary_relevance=G`` maps a grade g to 1 if g >= G else 0; ``relevance_floor=F`` then maps any
    grade below F to 0 (the order of the reference pref_eval.py). Grades <= 0 are non-relevant.
    """
    if binary_relevance is not None:
        grades = (grades >= binary_relevance).astype(np.float64)
    if relevance_floor is not None:
        grades = np.where(grades < relevance_floor, 0.0, grades)
    query_codes, qids = pd.factorize(qids)
    judgments = pd.DataFrame({"query": query_codes, "docid": docids, "grade": grades})
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
        path=path,
        stdin_text=data if path == STDIN else None,
    )


def read_columns(data: bytes, source: str, fmt: LineFormat) -> dict[str, np.ndarray]:
    """Tokenise ``data`` into the text columns (object arrays) and the number column (float64).

    Raises an :class:`InputError` naming ``source`` and the first malformed line, or saying that the
    file holds no line at all.
    """
    columns = _read_columns_fast(data, fmt)
    if columns is None:
        columns = scan_lines(data, source, fmt, strict=True).columns
    if len(columns[fmt.number_field[0]]) == 0:
        raise InputError(source, f"no {fmt.kind} lines ({fmt.layout}) in the file")
    return columns


def read_columns_leniently(data: bytes, source: str, fmt: LineFormat, shown: int) -> Scan:
    """The columns of the well-formed lines of ``data`` and an account of the malformed ones (the
    numbers of the first ``shown``), for a report on the file rather than an evaluation.

    Never raises: a file without any line gives empty columns. The fast path takes the files it
    can, which have no malformed line; any other file goes through :func:`scan_lines`.
    """
    columns = _read_columns_fast(data, fmt)
    if columns is not None:
        return Scan(columns)
    return scan_lines(data, source, fmt, strict=False, shown=shown)


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
    """The fastest separator pandas can use for ``text``: a single tab or space, else ``\\s+``.

    A one-character separator is safe when it is the only whitespace in the file besides line ends
    and no two whitespace (or control) bytes are adjacent anywhere: then no field is empty. Files
    with Windows line ends or blank lines take the ``\\s+`` path, which accepts them too.
    """
    has_tab, has_space = b"\t" in text, b" " in text
    if has_tab == has_space or text[:1] <= b" " or _adjacent_whitespace(text):
        return r"\s+"
    return "\t" if has_tab else " "


def _adjacent_whitespace(text: bytes, chunk: int = 1 << 18) -> bool:
    """Whether two bytes <= 0x20 are next to each other, scanned in cache-sized chunks."""
    for start in range(0, len(text), chunk):
        window = np.frombuffer(text, np.uint8, count=min(chunk + 1, len(text) - start), offset=start) <= 32
        if (window[1:] & window[:-1]).any():
            return True
    return False


def _read_columns_fast(data: bytes, fmt: LineFormat) -> dict[str, np.ndarray] | None:
    """pandas' C tokeniser; None when the file needs the slow path (to report an error, or to read it).

    Every line must have the same number of fields, ``min_fields`` or ``max_fields``. With a
    one-character separator only the needed columns are read, and the field count of every line is
    checked by counting separators; with ``\\s+`` all columns are read and pandas rejects lines with
    extra fields. A missing trailing field leaves the number column empty, which fails to convert.
    """
    text = data
    if text.startswith(b"#") or b"#" in text and _COMMENT_LINES.search(text):
        text = _COMMENT_LINES.sub(b"", text)
    if _NOT_BLANK.search(text) is None:
        return None
    sep = _separator(text)
    frame = _pandas_read(text, sep, fmt)
    if frame is None or not fmt.min_fields <= frame.shape[1] <= fmt.max_fields and sep == r"\s+":
        return None
    fields = _fields_per_line(frame, fmt)
    if fields is None or (sep != r"\s+" and text.count(sep.encode()) != len(frame) * (fields - 1)):
        return None
    numbers = frame[fmt.number_field[1]].to_numpy(dtype=np.float64)
    if not fmt.nan_allowed and np.isnan(numbers).any():
        return None
    columns = {name: frame[index].to_numpy(dtype=object) for name, index in fmt.text_fields.items()}
    columns[fmt.number_field[0]] = numbers
    return columns


def _fields_per_line(frame: pd.DataFrame, fmt: LineFormat) -> int | None:
    """The number of fields of every line, judged by the last (optional) column; None if it varies."""
    if fmt.min_fields == fmt.max_fields:
        return fmt.max_fields
    last = frame.get(fmt.max_fields - 1)
    if last is None:
        return fmt.min_fields if frame.shape[1] == fmt.min_fields else None
    empty = last.to_numpy(dtype=object) == ""
    if not empty.any():
        return fmt.max_fields
    return fmt.min_fields if empty.all() else None


def _pandas_read(text: bytes, sep: str, fmt: LineFormat) -> pd.DataFrame | None:
    """The file's columns as a frame keyed by field index, the number column converted; None when
    pandas cannot read it as such. Plain numbers are tried first (the fastest), then numbers with
    ``nan`` where the format allows it, then a decimal comma."""
    number_index = fmt.number_field[1]
    if sep == r"\s+":
        names, usecols = None, None
    else:
        names = range(fmt.max_fields)
        usecols = sorted({*fmt.text_fields.values(), number_index, fmt.max_fields - 1})
    dtypes = {index: object for index in range(fmt.max_fields)}

    def read(number_type, nan: bool) -> pd.DataFrame:
        return pd.read_csv(
            io.BytesIO(text), sep=sep, header=None, names=names, usecols=usecols, index_col=False,
            dtype={**dtypes, number_index: number_type}, keep_default_na=False, na_filter=nan,
            na_values={number_index: list(NAN_SPELLINGS)} if nan else None, quoting=csv.QUOTE_NONE,
            engine="c", **_ENCODING,
        )

    attempts = [(np.float64, False)] + [(np.float64, True)] * fmt.nan_allowed + [(object, True)] * fmt.decimal_comma
    for number_type, nan in attempts:
        try:
            frame = read(number_type, nan)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError):
            return None
        except ValueError:
            continue
        if number_type is np.float64:
            return frame
        raw = frame[number_index].astype(str).str.replace(",", ".", regex=False)
        numbers = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64)
        if np.isnan(numbers).any() and not raw[np.isnan(numbers)].isin(NAN_SPELLINGS).all():
            return None
        frame[number_index] = numbers
        return frame
    return None


def scan_lines(data: bytes, source: str, fmt: LineFormat, *, strict: bool, shown: int = 0) -> Scan:
    """Read ``data`` line by line in Python, checking every line as ``fmt`` says (the slow path).

    Blank lines and lines starting with ``#`` are skipped. A line is malformed when it has too few or
    too many fields, or no number where ``fmt`` expects one. ``strict``: the first malformed line
    raises an :class:`InputError` naming ``source`` and the line. Lenient (``strict=False``): every
    malformed line is skipped and counted, the numbers of the first ``shown`` are kept, and the
    message of the first is the one strict would raise. Both modes return the same columns for a
    file without malformed lines; a file without any line gives empty columns (:func:`read_columns`
    rejects it, :func:`read_columns_leniently` does not).
    """
    number_name, number_index = fmt.number_field
    text_values: dict[str, list[str]] = {name: [] for name in fmt.text_fields}
    numbers: list[float] = []
    malformed, malformed_lines, first_problem = 0, [], None
    for line_number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        problem, number = None, None
        if not fmt.min_fields <= len(fields) <= fmt.max_fields:
            problem = fmt.field_count_error(len(fields))
        else:
            number = fmt.parse_number(fields[number_index])
            if number is None:
                shown_field = fields[number_index].decode("utf-8", "replace")[:40]
                problem = f"{number_name} {shown_field!r} is not a number"
        if problem is not None:
            if strict:
                raise InputError(source, problem, line_number)
            malformed += 1
            first_problem = first_problem or problem
            if len(malformed_lines) < shown:
                malformed_lines.append(line_number)
            continue
        for name, index in fmt.text_fields.items():
            text_values[name].append(fields[index].decode("utf-8", "surrogateescape"))
        numbers.append(number)
    columns = {name: np.array(values, dtype=object) for name, values in text_values.items()}
    columns[number_name] = np.array(numbers, dtype=np.float64)
    return Scan(columns, malformed, tuple(malformed_lines), first_problem)
