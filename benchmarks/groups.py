"""The cost of a breakdown by user group against the plain evaluation, side by side.

    python benchmarks/groups.py [USERS] [--groups 10] [--repeat 3]

On the recommender collection of ``benchmarks/recommender.py`` (2 runs, USERS users, default
1,000,000), with a groups file putting user ``u<n>`` in group ``g<n mod groups>``, two commands take
turns (:func:`run.in_turns`): ``prefeval eval -q`` of ndcg@10, p@10 and rr (every user's lines and
the summary, written to /dev/null), and the same with ``--user-groups``. Prints each median wall
time, the median over the turns of the ratio, and the load.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from recommender import write_recommender  # noqa: E402
from run import CACHE, in_turns, median_timing, turn_ratio  # noqa: E402

MEASURES = ["ndcg@10", "p@10", "rr"]


def groups_file(qrels: str, users: int, groups: int) -> str:
    path = os.path.join(os.path.dirname(qrels), f"groups-{groups}.tsv")
    if not os.path.exists(path):
        with open(path + ".part", "w") as handle:
            handle.write("user\tgroup\n")
            handle.writelines(f"u{user}\tg{user % groups}\n" for user in range(1, users + 1))
        os.replace(path + ".part", path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("users", type=int, nargs="?", default=1_000_000)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    qrels, runs = write_recommender(CACHE, args.users, runs=2)
    groups = groups_file(qrels, args.users, args.groups)
    plain = [sys.executable, "-m", "prefeval", "eval", "-q", "--quiet", "-m", ",".join(MEASURES), "-R", qrels, *runs,
             "-o", os.devnull]
    timings = in_turns({"plain": plain, "by group": plain + ["--user-groups", groups]}, args.repeat)
    for name, runs_of in timings.items():
        print(f"{name}: {median_timing(runs_of).wall:.2f} s (median of {args.repeat})")
    print(f"by group / plain: {turn_ratio(timings['by group'], timings['plain']):.2f} (median of the turns)")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
