"""Recommender-scale synthetic collections: many users, few items each (the setting of Rendle's
sampled-metrics analysis), generated vectorised so that 10 million users take minutes, not hours.

    python benchmarks/recommender.py USERS [--runs 2] [--items 10] [--relevant 2] [--folder DIR]
                                           [--parquet] [--partitioned]

Each user has ``relevant`` held-out items (grade 1) drawn from a catalogue of ``catalogue`` items;
each run recommends ``items`` distinct items per user, scored in descending order, and hits a
held-out item with a probability that differs by run. Users are written in the same order in every
file (as a recommender writes them), ids ``u1``, ``u2``, ...; items ``i17``, ... . Seeded: the same
arguments give the same bytes.

The same collection is written as TREC text (``qrels.txt``, ``run0``, ...), and on request as Parquet
(pyarrow), with recommender toolkits' column names (qrels: ``user``, ``item``, ``rating``; runs:
``user``, ``item``, ``score``, ``rank``, ``tag``; the ids as strings, the scores the doubles the text's
six decimals are): ``--parquet``, one file per run (``parquet/qrels.parquet``,
``parquet/run0.parquet``, ...: row groups of pyarrow's default size, 1,048,576 rows), and
``--partitioned``, a directory per run of one file per 250,000 users (``partitioned/run0/part-0.parquet``,
..., numbered without zeros as pyarrow and Dask number parts). Each form is written once, into
the collection's folder (its own ``complete`` marker); asking for a form the folder lacks generates
the collection again, writing only that form (the text's bytes are the same).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

CHUNK_USERS = 250_000
TEXT, PARQUET, PARTITIONED = "text", "parquet", "partitioned"


def _ids(prefix: bytes, numbers: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, numbers.astype("U10").astype("S10"))


def _six_digits(fractions: np.ndarray) -> np.ndarray:
    """The six decimals of scores in [0, 1) as text (``0.`` is written before them)."""
    return np.char.zfill(np.minimum((fractions * 1e6).astype(np.int64), 999_999).astype("S6"), 6)


class Chunk(NamedTuple):
    """The users of one chunk: their ids, held-out items, and per run the items recommended and the
    six decimals of their scores (as text), in the order they are written."""

    users: np.ndarray
    held_out: np.ndarray
    recommended: list[np.ndarray]
    digits: list[np.ndarray]


def _chunks(users: int, runs: int, items: int, relevant: int, catalogue: int, seed: int) -> Iterator[Chunk]:
    """The collection, chunk by chunk of :data:`CHUNK_USERS` users (the random draws in one fixed order)."""
    rng = np.random.default_rng(seed)
    hit_rate = np.linspace(0.15, 0.35, runs)
    for start in range(0, users, CHUNK_USERS):
        count = min(CHUNK_USERS, users - start)
        user = _ids(b"u", np.arange(start + 1, start + count + 1))
        # relevant + items distinct items per user: offsets from a random base, modulo the catalogue
        base = rng.integers(0, catalogue, count)[:, None]
        steps = np.cumsum(rng.integers(1, catalogue // (4 * (relevant + items)), (count, relevant + items)),
                          axis=1)
        pool = (base + steps) % catalogue
        held_out = pool[:, :relevant]
        recommended, digits = [], []
        for r in range(runs):
            chosen = pool[:, relevant:].copy()
            hits = rng.random((count, relevant)) < hit_rate[r]
            slots = rng.permutation(items)[:relevant]
            for k in range(relevant):
                chosen[hits[:, k], slots[k]] = held_out[hits[:, k], k]
            scores = np.sort(rng.random((count, items)), axis=1)[:, ::-1]
            recommended.append(chosen)
            digits.append(_six_digits(scores.ravel()))
        yield Chunk(user, held_out, recommended, digits)


def _text_lines(chunk: Chunk, relevant: int, items: int) -> list[bytes]:
    """The qrels' and each run's lines of a chunk, as TREC text."""
    qrels_lines = np.char.add(np.char.add(np.repeat(chunk.users, relevant), b" 0 i"),
                              np.char.add(chunk.held_out.ravel().astype("S10"), b" 1\n"))
    texts = [b"".join(qrels_lines.tolist())]
    count = len(chunk.users)
    for r, (recommended, digits) in enumerate(zip(chunk.recommended, chunk.digits)):
        ranks = np.tile(np.arange(1, items + 1), count).astype("S3")
        line = np.char.add(np.repeat(chunk.users, items), b" Q0 i")
        line = np.char.add(line, recommended.ravel().astype("S10"))
        line = np.char.add(np.char.add(line, b" "), ranks)
        line = np.char.add(np.char.add(line, b" 0."), digits)
        line = np.char.add(line, f" run{r}\n".encode())
        texts.append(b"".join(line.tolist()))
    return texts


def _item_ids(numbers: np.ndarray) -> np.ndarray:
    return np.char.add("i", numbers.ravel().astype("U10"))


def _tables(chunk: Chunk, relevant: int, items: int) -> list:
    """The qrels' and each run's rows of a chunk, as pyarrow Tables (module docstring)."""
    import pyarrow as pa

    users = np.char.decode(chunk.users, "ascii")
    tables = [pa.table({"user": pa.array(np.repeat(users, relevant)), "item": pa.array(_item_ids(chunk.held_out)),
                        "rating": pa.array(np.ones(len(users) * relevant, dtype=np.int8))})]
    count = len(users)
    for r, (recommended, digits) in enumerate(zip(chunk.recommended, chunk.digits)):
        tables.append(pa.table({
            "user": pa.array(np.repeat(users, items)),
            "item": pa.array(_item_ids(recommended)),
            "score": pa.array(digits.astype(np.int64) / 1e6),  # as strtod reads 0.dddddd: one exact division
            "rank": pa.array(np.tile(np.arange(1, items + 1, dtype=np.int16), count)),
            "tag": pa.DictionaryArray.from_arrays(np.zeros(count * items, dtype=np.int8), [f"run{r}"]),
        }))
    return tables


def collection_paths(folder: str, users: int, runs: int = 2, items: int = 10, relevant: int = 2, seed: int = 1,
                     form: str = TEXT) -> tuple[str, list[str]]:
    """The qrels' and runs' paths of a collection in the form ``form`` (:data:`TEXT`, :data:`PARQUET`,
    :data:`PARTITIONED`), without writing anything."""
    target = os.path.join(folder, f"recsys-{users}u-{runs}r-{items}i-{relevant}rel-seed{seed}")
    if form == TEXT:
        return os.path.join(target, "qrels.txt"), [os.path.join(target, f"run{r}") for r in range(runs)]
    suffix = ".parquet" if form == PARQUET else ""
    return (os.path.join(target, form, f"qrels{suffix}"),
            [os.path.join(target, form, f"run{r}{suffix}") for r in range(runs)])


def write_recommender(folder: str, users: int, runs: int = 2, items: int = 10, relevant: int = 2,
                      catalogue: int = 100_000, seed: int = 1, form: str = TEXT) -> tuple[str, list[str]]:
    """Write the qrels and runs under ``folder/recsys-{users}u-...`` once, in the form ``form``
    (module docstring); return their paths."""
    qrels, run_paths = collection_paths(folder, users, runs, items, relevant, seed, form)
    target = collection_paths(folder, users, runs, items, relevant, seed)[0].rsplit(os.sep, 1)[0]
    done = os.path.join(target, "complete" if form == TEXT else f"complete-{form}")
    if os.path.exists(done):
        return qrels, run_paths
    paths = [qrels, *run_paths]
    os.makedirs(target if form == TEXT else os.path.join(target, form), exist_ok=True)
    if form == PARTITIONED:
        for path in paths:
            os.makedirs(path, exist_ok=True)
    writers = []
    try:
        for number, chunk in enumerate(_chunks(users, runs, items, relevant, catalogue, seed)):
            if form == TEXT:
                if not writers:
                    writers = [open(path, "wb") for path in paths]
                for handle, text in zip(writers, _text_lines(chunk, relevant, items)):
                    handle.write(text)
                continue
            import pyarrow.parquet as pq

            tables = _tables(chunk, relevant, items)
            if form == PARTITIONED:
                for path, table in zip(paths, tables):
                    pq.write_table(table, os.path.join(path, f"part-{number}.parquet"))
                continue
            if not writers:
                writers = [pq.ParquetWriter(path, table.schema) for path, table in zip(paths, tables)]
            for writer, table in zip(writers, tables):
                writer.write_table(table)
    finally:
        for writer in writers:
            writer.close()
    open(done, "w").close()
    return qrels, run_paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("users", type=int)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--relevant", type=int, default=2)
    parser.add_argument("--folder", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache"))
    parser.add_argument("--parquet", action="store_true", help="also write the collection as Parquet files")
    parser.add_argument("--partitioned", action="store_true", help="also write it as directories of Parquet files")
    args = parser.parse_args()
    forms = [TEXT] + [PARQUET] * args.parquet + [PARTITIONED] * args.partitioned
    for form in forms:
        qrels, runs = write_recommender(args.folder, args.users, args.runs, args.items, args.relevant, form=form)
        print(qrels, *runs)


if __name__ == "__main__":
    main()
