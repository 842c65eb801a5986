"""Side inputs of a recommender evaluation: the tables beside the qrels and runs that say who the
users are and what the items are.

- **user groups** (``--user-groups``): a user and its group, one row per user;
- **item groups** (``--item-groups``): an item and its group (a provider, a category of exposure);
- **items** (``--items``): the catalogue, one item a row;
- **item features** (``--item-features``): an item and one of its features (a category, a genre),
  one row per pair, so that an item may have several;
- **training interactions** (``--train``): a user and an item it interacted with (rating, timestamp
  and every other column ignored), the data that popularity and novelty are counted on.

Each is a CSV or TSV file with a header, a file of whitespace-separated fields without one (TREC
style: the columns in the order above), a Parquet file, or in the Python API a pandas DataFrame. A
header's user and item columns are found as a run's are (:data:`prefeval.io.columns.ALIASES`, the
names of LensKit, RecBole and Microsoft Recommenders: ``user``/``item``, ``user_id``/``item_id``,
``userID``/``itemID``; RecBole's atomic files' ``user_id:token`` too, the type after the colon
ignored); a group or feature column by :data:`SIDE_ALIASES`, else the first column that is neither.

What is wrong is one :class:`~prefeval.errors.InputError` naming the file and the line (the header
is line 1): a user in two groups, an item in two item groups, a row without a value, a table without
rows. How a side input fits the runs (a recommended item outside a strict catalogue: an error at the
run's line; items missing from the side inputs, a training file that holds none of a run's items:
notes) is judged as the runs are read (:mod:`prefeval.ranking.items`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from prefeval.errors import InputError, UsageError
from prefeval.io.codes import factorize
from prefeval.io.columns import ALIASES
from prefeval.io.fields import FieldLayout, TextColumn, split_fields

USER_GROUPS, ITEM_GROUPS, ITEMS, ITEM_FEATURES, TRAIN = "user-groups", "item-groups", "items", "item-features", "train"
KEY_ROLE = {USER_GROUPS: "qid", ITEM_GROUPS: "docid", ITEMS: "docid", ITEM_FEATURES: "docid", TRAIN: "qid"}
"""The role (:data:`~prefeval.io.columns.ALIASES`) of each side input's first column."""
VALUE_ROLE = {USER_GROUPS: "group", ITEM_GROUPS: "group", ITEMS: None, ITEM_FEATURES: "feature", TRAIN: "docid"}
"""The role of each side input's second column (none: the catalogue is one column)."""
SIDE_ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ALIASES["qid"],
    "docid": ALIASES["docid"],
    "group": ("group", "user_group", "item_group", "provider", "provider_id", "category"),
    "feature": ("feature", "category", "genre", "genres", "tag", "class"),
}
"""The column names of each role of a side input, in the order they are looked for."""
UNIQUE = {USER_GROUPS: "user", ITEM_GROUPS: "item"}
"""The side inputs that give each key one value: a key in two rows of them is an error."""


class SideTable(NamedTuple):
    """A side input as two aligned columns of text (:class:`~prefeval.io.fields.TextColumn`: each
    row's 64-bit key, and its text on demand): ``keys`` (users or items) and ``values`` (groups,
    features, trained items; for the catalogue, ``values`` is ``keys``). ``lines`` holds each row's
    line in its file (0: a DataFrame's or a Parquet file's row, which has none), for messages;
    ``source`` is how the input is named."""

    keys: TextColumn
    values: TextColumn
    lines: np.ndarray
    source: str

    @classmethod
    def of_texts(cls, keys, values, lines, source: str) -> SideTable:
        """From arrays of texts (str)."""
        keys = TextColumn.of_texts(keys)
        return cls(keys, keys if values is None else TextColumn.of_texts(values), np.asarray(lines), source)

    def mapping(self) -> dict[str, str]:
        """``{key: value}``: of a table whose keys are unique (user or item groups)."""
        return dict(zip(self.keys.tolist(), self.values.tolist()))

    def key_set(self) -> set[str]:
        return set(self.keys.tolist())


def read_side(value, kind: str) -> SideTable:
    """The side input ``kind`` (:data:`KEY_ROLE`'s keys) from a path (text or Parquet) or a DataFrame."""
    if kind not in KEY_ROLE:
        raise UsageError(f"unknown side input {kind!r}; the side inputs are {', '.join(KEY_ROLE)}")
    if isinstance(value, (str, os.PathLike)):
        source = os.fspath(value)
        rows, lines = _read_path(source, kind)
    elif _is_frame(value):
        source = f"--{kind} (DataFrame)"
        rows, lines = _frame_rows(value, kind, source, first_line=None)
    else:
        raise UsageError(f"--{kind}: expected a path or a pandas DataFrame, not a value of type {type(value).__name__}")
    keys, values = rows
    if len(keys) == 0:
        raise InputError(source, "no rows")
    table = SideTable(keys, values, lines, source)
    if kind in UNIQUE:
        _check_unique(table, UNIQUE[kind])
    return table


def _is_frame(value) -> bool:
    import sys

    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _read_path(source: str, kind: str):
    try:
        with open(source, "rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise InputError(source, f"cannot be read ({error.strerror})") from None
    if magic == b"PAR1":
        from prefeval.io.columnar import pyarrow_for

        pa = pyarrow_for(source)
        try:
            frame = pa.parquet.read_table(source).to_pandas()
        except pa.ArrowException as error:
            raise InputError(source, f"is not a readable Parquet file ({error})") from None
        return _frame_rows(frame, kind, source, first_line=None)
    with open(source, encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    separator = "\t" if "\t" in first else "," if "," in first else r"\s+"
    fields = [field.strip() for field in (first.split(separator) if separator != r"\s+" else first.split())]
    has_header = any(_bare(field) in names for field in fields for names in SIDE_ALIASES.values())
    if separator != ",":
        plain = _plain_rows(source, kind, fields, has_header, tabs=separator == "\t")
        if plain is not None:
            return plain
    import pandas as pd

    try:
        frame = pd.read_csv(source, sep=separator, header=0 if has_header else None, dtype=str,
                            keep_default_na=False, engine="python" if separator == r"\s+" else "c")
    except (pd.errors.ParserError, ValueError) as error:
        kind_of_fields = "whitespace" if separator == r"\s+" else "delimiter"
        reason = str(error).strip().splitlines()[-1]
        raise InputError(source, f"is not a table of {kind_of_fields}-separated fields ({reason})") from None
    if not has_header:
        frame.columns = [str(number) for number in range(frame.shape[1])]
    return _frame_rows(frame, kind, source, first_line=2 if has_header else 1)


def _plain_rows(source: str, kind: str, fields: list[str], has_header: bool, tabs: bool):
    """((keys, values), lines) as :func:`_frame_rows` gives them, of a file whose rows (after the
    header) have the common shape of :func:`~prefeval.io.fields.split_fields` (one tab, or one space,
    between non-empty fields, as many on every line as in the first): read with numpy, no Python
    string per row (a training file holds millions). ``tabs``: the first line's fields are separated
    by tabs, as the others' must be then. None when the rows have another shape: pandas reads them
    then, and names what is wrong."""
    with open(source, "rb") as handle:
        data = handle.read()
    if has_header:
        data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
        if not data:
            return None
    names = fields if has_header else [str(number) for number in range(len(fields))]
    if tabs and len(names) > 1 and b"\t" not in data:
        return None
    columns = _columns(names, kind, source)
    at = [names.index(column) for column in columns]
    split = split_fields(data, FieldLayout(tuple(at), None, len(names), len(names), False))
    if split is None:
        return None
    texts = split[:len(at)]
    lines = np.arange(len(texts[0]), dtype=np.int64) + (2 if has_header else 1)
    return (texts[0], texts[-1]), lines


def _columns(names: list, kind: str, source: str) -> list:
    """The names of the key column and the value column (the catalogue: the key's alone) among a
    table's column ``names``: by name, else by position."""
    key_column = _column(names, KEY_ROLE[kind], exclude=(), fallback=0)
    value_role = VALUE_ROLE[kind]
    columns = [key_column] if value_role is None else \
        [key_column, _column(names, value_role, exclude=(key_column,), fallback=1)]
    if any(column is None for column in columns):
        listed = ", ".join(map(repr, map(str, names))) or "none"
        raise InputError(source, f"has too few columns for {kind} (its columns: {listed})")
    return columns


def _frame_rows(frame, kind: str, source: str, first_line: int | None):
    """((keys, values), lines) of a table: its columns found by name, else by position."""
    columns = _columns(list(frame.columns), kind, source)
    lines = np.arange(len(frame)) + first_line if first_line is not None else np.zeros(len(frame), dtype=np.int64)
    texts = []
    for column in columns:
        series = frame[column]
        text = series.astype(str).str.strip().to_numpy(dtype=object)
        empty = series.isna().to_numpy() | (text == "")
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            where = {"line": int(lines[row])} if first_line is not None else {}
            suffix = "" if first_line is not None else f" (row {row})"
            raise InputError(source, f"column {str(column)!r} is missing a value{suffix}", **where)
        texts.append(TextColumn.of_texts(text))
    return (texts[0], texts[-1]), lines


def _bare(name) -> str:
    """A column's name without the type RecBole's atomic files give it (``user_id:token`` is
    ``user_id``; ``rating:float``, ``genre:token_seq``)."""
    text = str(name)
    return text.split(":", 1)[0] if text.endswith(_RECBOLE_TYPES) else text


_RECBOLE_TYPES = (":token", ":float", ":token_seq", ":float_seq")


def _column(columns: Iterable, role: str, exclude: tuple, fallback: int):
    names = [name for name in columns]
    for alias in SIDE_ALIASES[role]:
        for name in names:
            if _bare(name) == alias and name not in exclude:
                return name
    others = [name for name in names if name not in exclude]
    if exclude:
        return others[0] if others else None
    return names[fallback] if len(names) > fallback else None


def _check_unique(table: SideTable, what: str) -> None:
    """An error at the second row of the first key (in key order) that two rows share."""
    keys = table.keys.keys
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(repeated) == 0:
        return
    first, second = int(order[repeated[0]]), int(order[repeated[0] + 1])
    key, value, other = table.keys[second], table.values[first], table.values[second]
    if value == other:
        detail = f"{what} {key!r} is listed twice"
    else:
        detail = (f"{what} {key!r} is in two groups ({value!r} and {other!r}); "
                  f"{'an' if what == 'item' else 'a'} {what} belongs to one group")
    line = int(table.lines[second]) or None
    if line is None:
        detail += f" (row {second})"
    raise InputError(table.source, detail, line=line)


def sorted_codes(column: TextColumn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct texts of ``column`` sorted, as (their keys, the texts), and each row's position
    among them (int64), as ``np.unique(texts, return_inverse=True)`` gives them; the rows are told
    apart by their keys, and only the distinct texts are made and sorted."""
    codes, first = factorize(column.keys)
    texts = column.texts(first)
    order = np.argsort(texts, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return column.keys[first][order], texts[order], rank[codes]
