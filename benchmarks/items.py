"""The cost of the beyond-accuracy (item) measures against the plain evaluation, side by side, and the
streamed engine's peak memory with and without them.

    python benchmarks/items.py [USERS] [--repeat 3] [--memory-users 200000] [--engine auto]

On the recommender collection of ``benchmarks/recommender.py`` (2 runs, USERS users, default
1,000,000, 10 items each from a catalogue of 100,000 items ``i0`` .. ``i99999``), with side inputs
generated once (seeded) into ``benchmarks/cache/items-100000i-seed1/``:

- ``train.tsv``: 2,000,000 training interactions (user, item), users drawn uniformly from 1,000,000,
  items with a Zipf-like popularity skew (the item of popularity rank r drawn with probability
  ∝ 1/r, the ranks shuffled over the catalogue);
- ``items.tsv``: the catalogue, every item;
- ``features.tsv``: 1 to 3 distinct genres of 20 per item (``g0`` .. ``g19``);
- ``groups.tsv``: each item's provider, one of 10 (``p0`` .. ``p9``), provider p holding a share
  of the catalogue ∝ 1/(p + 1).

The same side inputs serve every number of users (they describe the items, not the users). Four
commands take turns (:func:`run.in_turns`): ``prefeval eval -q`` with the default measures (every
user's lines and the summary, written to /dev/null), the same with every item measure
(:data:`ITEM_MEASURES`) and the side inputs they read, both with ``--engine ENGINE``, and these two
without ``-q`` (the summary alone: the cost of the measures without that of writing twice the bytes
of lines). Prints each median wall time, the median over the turns of each ratio, and the load.
Then, once each, the first two commands with ``--engine stream`` on ``--memory-users`` users and on
USERS users, with the peak resident set of the process and the peak proportional set of its process
tree (its workers' included; :func:`run._run_once`); ``--memory-users 0`` skips them.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from recommender import write_recommender  # noqa: E402
from run import CACHE, _run_once, in_turns, median_timing, turn_ratio  # noqa: E402

CATALOGUE = 100_000
"""The catalogue of :func:`recommender.write_recommender` (its default)."""
ITEM_MEASURES = ["arp@10", "aplt@10", "epc@10", "efd@10", "poprank@10", "ild@10", "ild_jaccard@10", "catcov@10",
                 "ucov", "icov@10", "gini@10", "entropy@10,discount=1", "expshare@10", "disparity@10", "provider@10"]
"""Every item measure, at the lists' length."""


def _write(path: str, header: str, columns: list[np.ndarray]) -> None:
    """A TSV file of text columns, written once (to a ``.part`` file renamed at the end)."""
    line = columns[0].astype("S")
    for column in columns[1:]:
        line = np.char.add(np.char.add(line, b"\t"), column.astype("S"))
    with open(path + ".part", "wb") as handle:
        handle.write(header.encode() + b"\n")
        handle.write(b"\n".join(line.tolist()) + b"\n")
    os.replace(path + ".part", path)


def side_inputs(folder: str = CACHE, catalogue: int = CATALOGUE, interactions: int = 2_000_000,
                train_users: int = 1_000_000, genres: int = 20, providers: int = 10, seed: int = 1) -> dict[str, str]:
    """The side inputs' paths (``train``, ``items``, ``features``, ``groups``; module docstring),
    generated on first use."""
    target = os.path.join(folder, f"items-{catalogue}i-seed{seed}")
    paths = {name: os.path.join(target, f"{name}.tsv") for name in ("train", "items", "features", "groups")}
    done = os.path.join(target, "complete")
    if os.path.exists(done):
        return paths
    os.makedirs(target, exist_ok=True)
    rng = np.random.default_rng(seed)
    item_ids = np.char.add("i", np.arange(catalogue).astype("U10"))
    by_rank = rng.permutation(catalogue)
    weights = 1.0 / np.arange(1, catalogue + 1)
    trained = by_rank[rng.choice(catalogue, interactions, p=weights / weights.sum())]
    users = np.char.add("u", rng.integers(1, train_users + 1, interactions).astype("U10"))
    _write(paths["train"], "user\titem", [users, item_ids[trained]])
    _write(paths["items"], "item", [item_ids])
    counts = rng.integers(1, 4, catalogue)
    chosen = np.argsort(rng.random((catalogue, genres)), axis=1)[:, :3]  # 3 distinct genres, the first counts[i]
    keep = np.arange(3)[None, :] < counts[:, None]
    _write(paths["features"], "item\tgenre",
           [np.repeat(item_ids, counts), np.char.add("g", chosen[keep].astype("U3"))])
    shares = 1.0 / np.arange(1, providers + 1)
    provider = rng.choice(providers, catalogue, p=shares / shares.sum())
    _write(paths["groups"], "item\tprovider", [item_ids, np.char.add("p", provider.astype("U3"))])
    open(done, "w").close()
    return paths


def commands(users: int, engine: str, per_query: bool = True) -> dict[str, list[str]]:
    """The plain command and the one with every item measure, on ``users`` users; with ``-q`` (every
    user's lines) unless not ``per_query`` (the summary alone)."""
    qrels, runs = write_recommender(CACHE, users, runs=2)
    side = side_inputs()
    plain = [sys.executable, "-m", "prefeval", "eval", *(["-q"] if per_query else []), "--quiet", "--engine", engine,
             "-R", qrels, *runs, "-o", os.devnull]
    items = plain + ["-M", "all", "-m", ",".join(ITEM_MEASURES), "--train", side["train"], "--items", side["items"],
                     "--item-features", side["features"], "--item-groups", side["groups"]]
    return {"plain": plain, "items": items}


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("users", type=int, nargs="?", default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-users", type=int, default=200_000)
    parser.add_argument("--engine", default="auto")
    args = parser.parse_args()
    both = {f"{name}{suffix}": command for per_query, suffix in ((True, ""), (False, ", summary only"))
            for name, command in commands(args.users, args.engine, per_query).items()}
    timings = in_turns(both, args.repeat)
    for name, runs_of in timings.items():
        print(f"{name}: {median_timing(runs_of).wall:.2f} s (median of {args.repeat})")
    for suffix in ("", ", summary only"):
        ratio = turn_ratio(timings["items" + suffix], timings["plain" + suffix])
        print(f"items / plain{suffix}: {ratio:.2f} (median of the turns)")
    print(f"load: {_load()}")
    if not args.memory_users:
        return
    for users in (args.memory_users, args.users):
        for name, command in commands(users, "stream").items():
            timing = _run_once(command)
            print(f"stream, {users:,} users, {name}: peak {timing.max_rss_mib:,.0f} MiB (the process), "
                  f"{timing.tree_pss_mib:,.0f} MiB (PSS of its tree), {timing.wall:.2f} s")
    print(f"load: {_load()}")


if __name__ == "__main__":
    main()
