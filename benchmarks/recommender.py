"""Recommender-scale synthetic collections: many users, few items each (the setting of Rendle's
sampled-metrics analysis), generated vectorised so that 10 million users take minutes, not hours.

    python benchmarks/recommender.py USERS [--runs 2] [--items 10] [--relevant 2] [--folder DIR]

Each user has ``relevant`` held-out items (grade 1) drawn from a catalogue of ``catalogue`` items;
each run recommends ``items`` distinct items per user, scored in descending order, and hits a
held-out item with a probability that differs by run. Users are written in the same order in every
file (as a recommender writes them), ids ``u1``, ``u2``, ...; items ``i17``, ... . Seeded: the same
arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

CHUNK_USERS = 250_000


def _ids(prefix: bytes, numbers: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, numbers.astype("U10").astype("S10"))


def _six_digits(fractions: np.ndarray) -> np.ndarray:
    """The six decimals of scores in [0, 1) as text (``0.`` is written before them)."""
    return np.char.zfill(np.minimum((fractions * 1e6).astype(np.int64), 999_999).astype("S6"), 6)


def write_recommender(folder: str, users: int, runs: int = 2, items: int = 10, relevant: int = 2,
                      catalogue: int = 100_000, seed: int = 1) -> tuple[str, list[str]]:
    """Write the qrels and runs under ``folder/recsys-{users}u-...`` once; return their paths."""
    target = os.path.join(folder, f"recsys-{users}u-{runs}r-{items}i-{relevant}rel-seed{seed}")
    qrels = os.path.join(target, "qrels.txt")
    run_paths = [os.path.join(target, f"run{r}") for r in range(runs)]
    done = os.path.join(target, "complete")
    if os.path.exists(done):
        return qrels, run_paths
    os.makedirs(target, exist_ok=True)
    rng = np.random.default_rng(seed)
    handles = [open(path, "wb") for path in [qrels, *run_paths]]
    hit_rate = np.linspace(0.15, 0.35, runs)
    try:
        for start in range(0, users, CHUNK_USERS):
            count = min(CHUNK_USERS, users - start)
            user = _ids(b"u", np.arange(start + 1, start + count + 1))
            # relevant + items distinct items per user: offsets from a random base, modulo the catalogue
            base = rng.integers(0, catalogue, count)[:, None]
            steps = np.cumsum(rng.integers(1, catalogue // (4 * (relevant + items)), (count, relevant + items)),
                              axis=1)
            pool = (base + steps) % catalogue
            held_out = pool[:, :relevant]
            qrels_lines = np.char.add(np.char.add(np.repeat(user, relevant), b" 0 i"),
                                      np.char.add(held_out.ravel().astype("S10"), b" 1\n"))
            handles[0].write(b"".join(qrels_lines.tolist()))
            for r in range(runs):
                recommended = pool[:, relevant:].copy()
                hits = rng.random((count, relevant)) < hit_rate[r]
                slots = rng.permutation(items)[:relevant]
                for k in range(relevant):
                    recommended[hits[:, k], slots[k]] = held_out[hits[:, k], k]
                scores = np.sort(rng.random((count, items)), axis=1)[:, ::-1]
                ranks = np.tile(np.arange(1, items + 1), count).astype("S3")
                line = np.char.add(np.repeat(user, items), b" Q0 i")
                line = np.char.add(line, recommended.ravel().astype("S10"))
                line = np.char.add(np.char.add(line, b" "), ranks)
                line = np.char.add(np.char.add(line, b" 0."), _six_digits(scores.ravel()))
                line = np.char.add(line, f" run{r}\n".encode())
                handles[1 + r].write(b"".join(line.tolist()))
    finally:
        for handle in handles:
            handle.close()
    open(done, "w").close()
    return qrels, run_paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("users", type=int)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--relevant", type=int, default=2)
    parser.add_argument("--folder", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cache"))
    args = parser.parse_args()
    qrels, runs = write_recommender(args.folder, args.users, args.runs, args.items, args.relevant)
    print(qrels, *runs)


if __name__ == "__main__":
    main()
