"""The beyond-accuracy item measures of ``prefeval eval`` (:mod:`prefeval.measures.items`) against an
independent oracle: each formula written here again, in plain Python, from the documented
definitions (the docstrings of :mod:`prefeval.analyses.beyond_accuracy` and
:mod:`prefeval.measures.items`; Microsoft Recommenders' documented catalogue coverage, Gini and
distributional coverage (entropy) and novelty; Vargas and Castells' EPC and EFD, RecSys 2011),
calling none of prefeval's functions, on generated data (seeded): a Zipf popularity skew, tied
scores, cold-start users (few or no training interactions), items nobody trained on but in the
catalogue, users of the qrels without a list. Every per-user value (``-q`` lines) and every summary
value is compared, and each measure has a tiny case computed by hand.

LensKit would be the natural second oracle, but it pulls torch, which does not install here: the
oracle is the documented formulas.

Also: every engine writes the same bytes; the provider preference is antisymmetric and agrees with
:mod:`prefeval.measures.provider`; bad side inputs and options give one-line errors or notes.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from conftest import json_lines, run_cli
from contract import assert_one_line_error
from test_partitioned import in_process  # noqa: F401  (a fixture: --engine dask in this process)

from prefeval.measures import provider as provider_functions

REL_TOL = 1e-12
K = 5
LIST_FAMILIES = ("arp", "aplt", "epc", "efd", "poprank", "ild", "ild_jaccard", "catcov")


# --- the generated recommender dataset ---------------------------------------------------------------

class Dataset:
    """Files of a generated recommender evaluation and what the oracle reads of them (plain Python)."""

    def __init__(self, folder: Path, seed: int, num_items: int = 40, num_users: int = 30, grouped_share=0.9):
        rng = np.random.default_rng(seed)
        self.items = [f"i{n}" for n in range(num_items)]
        trained_items = self.items[: num_items * 2 // 3]  # the rest: in the catalogue, nobody trained on them
        self.users = [f"u{n}" for n in range(num_users)]
        self.train = []  # (user, item) interactions, a Zipf skew over the trained items
        for number, user in enumerate(self.users):
            count = 0 if number % 9 == 0 else 1 if number % 9 == 1 else int(rng.integers(2, 12))  # cold start
            for _ in range(count):
                self.train.append((user, trained_items[min(int(rng.zipf(1.5)) - 1, len(trained_items) - 1)]))
        self.train.append(("u_only_in_train", trained_items[0]))
        self.features = {item: set(f"c{c}" for c in rng.choice(5, size=int(rng.integers(0, 4)), replace=False))
                         for item in self.items}
        self.groups = {item: f"p{int(rng.integers(0, 3))}" for item in self.items if rng.random() < grouped_share}
        self.runs = {}  # run name -> {user: [(item, score)]}
        for name in ("a", "b"):
            lists = {}
            for number, user in enumerate(self.users):
                if number % 7 == 3:
                    continue  # a user of the qrels without a list
                size = int(rng.integers(1, 9))
                chosen = rng.choice(num_items, size=size, replace=False)
                lists[user] = [(self.items[i], float(rng.integers(0, 4))) for i in chosen]  # tied scores
            self.runs[name] = lists
        self.relevant = {user: self.items[int(rng.integers(0, num_items))] for user in self.users}
        self.folder = folder
        self.write()

    def write(self) -> None:
        f = self.folder
        (f / "train.tsv").write_text("user_id\titem_id\n" + "".join(f"{u}\t{i}\n" for u, i in self.train))
        (f / "items.tsv").write_text("item_id\n" + "".join(f"{i}\n" for i in self.items))
        (f / "features.tsv").write_text("item_id\tgenre\n" + "".join(
            f"{i}\t{c}\n" for i in self.items for c in sorted(self.features[i])))
        (f / "groups.tsv").write_text("item_id\tprovider\n" + "".join(f"{i}\t{g}\n" for i, g in self.groups.items()))
        (f / "test.qrels").write_text("".join(f"{u} 0 {self.relevant[u]} 1\n" for u in self.users))
        for name, lists in self.runs.items():
            (f / f"{name}.run").write_text("".join(
                f"{u} Q0 {i} {r} {s} {name}\n" for u, items in lists.items() for r, (i, s) in enumerate(items, 1)))

    def options(self) -> list[str]:
        f = self.folder
        return ["--train", f / "train.tsv", "--items", f / "items.tsv", "--item-features", f / "features.tsv",
                "--item-groups", f / "groups.tsv"]

    def ranked(self, run: str, user: str, k: int | None) -> list[str]:
        """The user's list as trec_eval ranks it: score descending, ties by docid descending."""
        ordered = sorted(self.runs[run].get(user, []), key=lambda pair: (pair[1], pair[0]), reverse=True)
        return [item for item, _ in ordered][:k]


# --- the oracle: the documented formulas, in plain Python --------------------------------------------

class Oracle:
    def __init__(self, data: Dataset, head_share: float = 0.2):
        self.data = data
        catalogue = set(data.items)
        train = [(u, i) for u, i in data.train if i in catalogue]
        self.phi = Counter(i for _, i in train)  # interactions
        self.pop = Counter(i for _, i in set(train))  # distinct users
        self.training_users = len({u for u, _ in train})
        by_popularity = sorted(data.items, key=lambda i: (-self.phi[i], i))
        total, running, self.head = sum(self.phi.values()), 0, set()
        for item in by_popularity:
            if running >= head_share * total:
                break
            self.head.add(item)
            running += self.phi[item]
        # popularity rank: 1 the most popular, tied items the mean of their ranks
        self.rank = {}
        for count in set(self.phi[i] for i in data.items):
            above = sum(1 for i in data.items if self.phi[i] > count)
            tied = sum(1 for i in data.items if self.phi[i] == count)
            for item in data.items:
                if self.phi[item] == count:
                    self.rank[item] = above + (tied + 1) / 2
        self.categories = set().union(*data.features.values())

    def per_list(self, family: str, items: list[str]) -> float:
        if not items:
            return 0.0
        mean = lambda values: sum(values) / len(values)  # noqa: E731
        n_users = self.training_users
        if family == "arp":
            return mean([self.phi[i] for i in items])
        if family == "aplt":
            return mean([i not in self.head for i in items])
        if family == "epc":
            return mean([1 - self.pop[i] / n_users for i in items])
        if family == "efd":
            return mean([-math.log2(max(self.pop[i], 1) / n_users) for i in items])
        if family == "poprank":
            return mean([self.rank[i] for i in items])
        if family in ("ild", "ild_jaccard"):
            pairs = list(itertools.combinations(items, 2))
            if not pairs:
                return 0.0
            distances = []
            for x, y in pairs:
                a, b = self.data.features[x], self.data.features[y]
                denominator = math.sqrt(len(a) * len(b)) if family == "ild" else len(a | b)
                distances.append(1 - (len(a & b) / denominator if denominator else 0.0))
            return mean(distances)
        if family == "catcov":
            return len(set().union(*(self.data.features[i] for i in items))) / len(self.categories)
        raise KeyError(family)

    def exposure(self, run: str, k: int, discount: bool = False) -> dict[str, float]:
        exposure = {item: 0.0 for item in self.data.items}
        for user in self.data.users:
            for rank, item in enumerate(self.data.ranked(run, user, k), 1):
                exposure[item] += 1 / math.log2(1 + rank) if discount else 1
        return exposure

    def whole_run(self, family: str, run: str, k: int, discount: bool = False) -> dict[str, float]:
        """``{key: value}`` of a measure of the whole run."""
        e = self.exposure(run, k, discount)
        n, total = len(e), sum(e.values())
        name = f"{family}@{k}" + (",discount=1" if discount else "")
        if family == "icov":  # Microsoft Recommenders' catalog_coverage: distinct recommended / catalogue
            return {name: sum(1 for v in e.values() if v > 0) / n}
        if family == "gini":  # mean absolute difference of the shares, normalised to [0, 1]
            shares = [v / total for v in e.values()]
            return {name: sum(abs(x - y) for x in shares for y in shares) / (2 * (n - 1))}
        if family == "entropy":  # Microsoft Recommenders' distributional_coverage
            return {name: -sum(v / total * math.log2(v / total) for v in e.values() if v > 0)}
        shares = defaultdict(float)
        for item, group in self.data.groups.items():
            shares[group] += e[item] / total
        groups = sorted(set(self.data.groups.values()))
        if family == "expshare":
            return {f"{name}:{g}": shares[g] for g in groups}
        if family == "disparity":
            return {name: max(shares[g] for g in groups) - min(shares[g] for g in groups)}
        raise KeyError(family)

    def provider(self, first: str, second: str, user: str, k: int) -> int:
        """The worst-off provider group first (prefeval.measures.provider's docstring), written again."""
        groups = sorted(set(self.data.groups.values()))

        def sorted_exposure(run):
            e = dict.fromkeys(groups, 0.0)
            for rank, item in enumerate(self.data.ranked(run, user, k), 1):
                if item in self.data.groups:
                    e[self.data.groups[item]] += 1 / math.log2(1 + rank)
            return sorted(e.values())

        for x, y in zip(sorted_exposure(first), sorted_exposure(second)):
            if abs(x - y) > 1e-9:
                return 1 if x > y else -1
        return 0


def evaluate(data: Dataset, measures: list[str], *options) -> list[dict]:
    runs = [data.folder / "a.run", data.folder / "b.run"]
    result = run_cli("eval", "-q", "-R", data.folder / "test.qrels", *[a for m in measures for a in ("-m", m)],
                     *data.options(), *options, *runs)
    assert result.exit_code == 0, result.stderr
    return json_lines(result.stdout)


def close(got: float, expected: float) -> bool:
    return math.isclose(got, expected, rel_tol=REL_TOL, abs_tol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_user_and_summary_values_agree_with_the_oracle(tmp_path, seed):
    data = Dataset(tmp_path, seed)
    oracle = Oracle(data)
    per_list = [f"{family}@{k}" if k else family for family in LIST_FAMILIES for k in (K, None)]
    lines = evaluate(data, [*per_list, "ucov"])
    run_names = {"a.run": "a", "b.run": "b"}
    checked = 0
    for line in lines:
        if line.get("type") != "metric":
            continue
        run = run_names[line["run"]]
        users = data.users if line["qid"] == "all" else [line["qid"]]
        for name in per_list:
            family, _, k = name.partition("@")
            values = [oracle.per_list(family, data.ranked(run, user, int(k) if k else None)) for user in users]
            expected = sum(values) / len(values)
            assert close(line[name], expected), (line["qid"], run, name, line[name], expected)
            checked += 1
        expected_ucov = sum(1 for user in users if data.ranked(run, user, None)) / len(users)
        assert close(line["ucov"], expected_ucov)
    assert checked == 2 * (len(data.users) + 1) * len(per_list)
    # cold-start users and users without a list are among them
    assert any(not data.ranked("a", user, None) for user in data.users)
    assert any(oracle.phi[item] == 0 for item in data.items)


@pytest.mark.parametrize("seed", [0, 3])
def test_whole_run_values_agree_with_the_oracle(tmp_path, seed):
    data = Dataset(tmp_path, seed)
    oracle = Oracle(data)
    names = [("icov", False), ("gini", False), ("gini", True), ("entropy", False), ("entropy", True),
             ("expshare", False), ("expshare", True), ("disparity", False), ("disparity", True)]
    measures = [f"{family}@{K}" + (",discount=1" if discount else "") for family, discount in names]
    lines = evaluate(data, measures)
    summaries = {line["run"]: line for line in lines if line["qid"] == "all" and "run" in line}
    assert not [line for line in lines if line["qid"] != "all" and any(m.split("@")[0] in str(line) for m in
                                                                          ("gini", "icov", "expshare"))]
    for file, run in (("a.run", "a"), ("b.run", "b")):
        expected = {}
        for family, discount in names:
            expected.update(oracle.whole_run(family, run, K, discount))
        got = {key: value for key, value in summaries[file].items() if "@" in key}
        assert set(got) == set(expected)
        for key in expected:
            assert close(got[key], expected[key]), (run, key, got[key], expected[key])


def test_provider_agrees_with_the_oracle_and_is_antisymmetric(tmp_path):
    data = Dataset(tmp_path, 4, grouped_share=0.8)
    oracle = Oracle(data)
    forward = evaluate(data, ["provider@5", "provider"])
    runs = [data.folder / "b.run", data.folder / "a.run"]
    swapped = run_cli("eval", "-q", "-R", data.folder / "test.qrels", "-m", "provider@5", "-m", "provider",
                      *data.options(), *runs)
    backward = {line["qid"]: line for line in json_lines(swapped.stdout) if "runi" in line}
    pairs = [line for line in forward if "runi" in line]
    assert len(pairs) == len(data.users) + 1
    signs = set()
    for line in pairs:
        assert line["runi"] == "a.run" and line["runj"] == "b.run"
        for name in ("provider@5", "provider"):
            assert line[name] == -backward[line["qid"]][name] or line[name] == backward[line["qid"]][name] == 0
            if line["qid"] != "all":
                k = 5 if name == "provider@5" else None
                assert line[name] == oracle.provider("a", "b", line["qid"], k), (line["qid"], name)
                signs.add(line[name])
    assert signs == {-1, 0, 1}
    # and as the pure functions of prefeval.measures.provider compute it from the group exposures
    groups = sorted(set(data.groups.values()))
    for line in pairs[:-1]:
        user = line["qid"]
        matrices = []
        for run in ("a", "b"):
            ranked = data.ranked(run, user, 5)
            codes = [groups.index(data.groups[i]) if i in data.groups else -1 for i in ranked]
            matrices.append(provider_functions.group_exposure(np.zeros(len(ranked), dtype=int), np.array(codes),
                                                              np.arange(1, len(ranked) + 1), 1, len(groups)))
        assert provider_functions.compare_pairs(np.stack(matrices), np.array([[0, 1]]))[0, 0] == line["provider@5"]
    mean = sum(line["provider@5"] for line in pairs[:-1]) / len(data.users)
    assert close(pairs[-1]["provider@5"], mean)


# --- tiny cases by hand -------------------------------------------------------------------------------

def tiny(tmp_path) -> tuple[list, dict]:
    """Catalogue a b c d; training: u1 a, u1 a, u1 b, u2 a, u3 c (|U_train| = 3; φ: a 3, b 1, c 1, d 0;
    pop: a 2, b 1, c 1, d 0); features a {x, y}, b {y}, c {z}, d none; groups a, b: P; c: Q; d: none.
    Run r: u1 a, b, c (ranks 1, 2, 3); u2 d, a; u3 no list. Run s: u1 c, d; u2 b; u3 a."""
    (tmp_path / "train.tsv").write_text("user\titem\nu1\ta\nu1\ta\nu1\tb\nu2\ta\nu3\tc\n")
    (tmp_path / "items.tsv").write_text("item\na\nb\nc\nd\n")
    (tmp_path / "features.tsv").write_text("item\tgenre\na\tx\na\ty\nb\ty\nc\tz\n")
    (tmp_path / "groups.tsv").write_text("item\tprovider\na\tP\nb\tP\nc\tQ\n")
    (tmp_path / "qrels").write_text("u1 0 a 1\nu2 0 b 1\nu3 0 c 1\n")
    (tmp_path / "r").write_text("u1 Q0 a 1 3 r\nu1 Q0 b 2 2 r\nu1 Q0 c 3 1 r\nu2 Q0 d 1 2 r\nu2 Q0 a 2 1 r\n")
    (tmp_path / "s").write_text("u1 Q0 c 1 2 s\nu1 Q0 d 2 1 s\nu2 Q0 b 1 1 s\nu3 Q0 a 1 1 s\n")
    options = ["-R", tmp_path / "qrels", "--train", tmp_path / "train.tsv", "--items", tmp_path / "items.tsv",
               "--item-features", tmp_path / "features.tsv", "--item-groups", tmp_path / "groups.tsv"]
    return options, {}


def tiny_lines(tmp_path, *measures, runs=("r", "s")):
    options, _ = tiny(tmp_path)
    result = run_cli("eval", "-q", *options, *[a for m in measures for a in ("-m", m)],
                     *[tmp_path / run for run in runs])
    assert result.exit_code == 0, result.stderr
    lines = json_lines(result.stdout)
    metric = {(line["run"], line["qid"]): line for line in lines if "run" in line}
    pairs = {line["qid"]: line for line in lines if "runi" in line}
    return metric, pairs


def test_popularity_and_novelty_by_hand(tmp_path):
    metric, _ = tiny_lines(tmp_path, "arp", "aplt", "epc", "efd", "poprank", "arp@1", "ucov")
    r1, r2, r3 = (metric[("r", u)] for u in ("u1", "u2", "u3"))
    assert r1["arp"] == pytest.approx((3 + 1 + 1) / 3, rel=REL_TOL) and r2["arp"] == 1.5 and r3["arp"] == 0
    assert r1["arp@1"] == 3 and metric[("s", "u1")]["arp@1"] == 1
    # head: a alone holds 3 of 5 interactions >= 20%: b, c, d are the tail
    assert r1["aplt"] == pytest.approx(2 / 3, rel=REL_TOL) and r2["aplt"] == 0.5
    assert r1["epc"] == pytest.approx(((1 - 2 / 3) + (1 - 1 / 3) * 2) / 3, rel=REL_TOL)
    assert r2["epc"] == pytest.approx((1 + 1 - 2 / 3) / 2, rel=REL_TOL)  # d: nobody trained on it
    assert r1["efd"] == pytest.approx((-math.log2(2 / 3) - 2 * math.log2(1 / 3)) / 3, rel=REL_TOL)
    assert r2["efd"] == pytest.approx((-math.log2(1 / 3) - math.log2(2 / 3)) / 2, rel=REL_TOL)  # d seen once
    # popularity ranks: a 1, b and c tie at 2.5, d 4
    assert r1["poprank"] == pytest.approx((1 + 2.5 + 2.5) / 3, rel=REL_TOL) and r2["poprank"] == 2.5
    assert (r1["ucov"], r3["ucov"], metric[("s", "u3")]["ucov"]) == (1, 0, 1)
    assert metric[("r", "all")]["arp"] == pytest.approx((5 / 3 + 1.5) / 3, rel=REL_TOL)  # u3 counts 0
    assert metric[("r", "all")]["ucov"] == pytest.approx(2 / 3, rel=REL_TOL)


def test_diversity_by_hand(tmp_path):
    metric, _ = tiny_lines(tmp_path, "ild", "ild_jaccard", "catcov", "ild@2")
    r1, r2 = metric[("r", "u1")], metric[("r", "u2")]
    # u1 a{x,y} b{y} c{z}: cosine distances 1 − 1/√2, 1, 1; Jaccard 1 − 1/2, 1, 1
    assert r1["ild"] == pytest.approx((3 - 1 / math.sqrt(2)) / 3, rel=REL_TOL)
    assert r1["ild_jaccard"] == pytest.approx((3 - 1 / 2) / 3, rel=REL_TOL)
    assert r1["ild@2"] == pytest.approx(1 - 1 / math.sqrt(2), rel=REL_TOL)
    assert r2["ild"] == 1 and r2["ild_jaccard"] == 1  # d has no features: unlike every item
    assert r1["catcov"] == 1 and r2["catcov"] == pytest.approx(2 / 3, rel=REL_TOL)
    assert metric[("s", "u2")]["ild"] == 0 and metric[("s", "u2")]["catcov"] == pytest.approx(1 / 3, rel=REL_TOL)


def test_whole_run_measures_by_hand(tmp_path):
    metric, _ = tiny_lines(tmp_path, "icov@2", "gini@2", "entropy@2", "gini@2,discount=1", "expshare@2",
                           "disparity@2", "expshare@2,discount=1")
    r = metric[("r", "all")]
    # r@2: u1 a, b; u2 d, a: exposure a 2, b 1, c 0, d 1 of 4
    assert r["icov@2"] == 0.75
    # shares ascending 0, 1/4, 1/4, 1/2; (2j − n − 1) = −3, −1, 1, 3; over n − 1 = 3
    assert r["gini@2"] == pytest.approx((-1 / 4 + 1 / 4 + 3 / 2) / 3, rel=REL_TOL)
    assert r["entropy@2"] == pytest.approx(1.5, rel=REL_TOL)
    # discounted: a 1 + 1/log2(3), b 1/log2(3), d 1
    w = 1 / math.log2(3)
    shares = sorted([0, (1 + w) / (2 + 2 * w), w / (2 + 2 * w), 1 / (2 + 2 * w)])
    assert r["gini@2,discount=1"] == pytest.approx(sum((2 * j - 5) * p for j, p in enumerate(shares, 1)) / 3,
                                                   rel=REL_TOL)
    # groups: P holds a, b (3 of 4), Q c (0), d in none
    assert (r["expshare@2:P"], r["expshare@2:Q"], r["disparity@2"]) == (0.75, 0.0, 0.75)
    assert r["expshare@2,discount=1:P"] == pytest.approx((1 + 2 * w) / (2 + 2 * w), rel=REL_TOL)
    s = metric[("s", "all")]  # s@2: c, d, b, a once each
    assert (s["icov@2"], s["gini@2"], s["entropy@2"]) == (1.0, 0.0, 2.0)
    assert (s["expshare@2:P"], s["expshare@2:Q"], s["disparity@2"]) == (0.5, 0.25, 0.25)


def test_provider_by_hand(tmp_path):
    _, pairs = tiny_lines(tmp_path, "provider", "provider@1")
    # u1: r gives P 1 + 1/log2(3), Q 1/2 -> sorted (1/2, 1.63); s gives Q 1, P 0 -> (0, 1): r first
    # u2: r gives P (a at 2) 1/log2(3), Q 0 -> (0, 0.63); s gives P 1 -> (0, 1): s; u3: r nothing, s P 1: s
    assert [pairs[u]["provider"] for u in ("u1", "u2", "u3")] == [1, -1, -1]
    # @1: u1 r P 1 vs s Q 1: (0, 1) each, a tie; u2: r d (no group) vs s b P 1: s
    assert [pairs[u]["provider@1"] for u in ("u1", "u2", "u3")] == [0, -1, -1]
    assert pairs["all"]["provider"] == pytest.approx(-1 / 3, rel=REL_TOL)


# --- engines ------------------------------------------------------------------------------------------

ENGINE_MEASURES = ["arp@5", "aplt", "epc@5", "efd", "poprank@5", "ild@5", "ild_jaccard", "catcov@5", "ucov",
                   "icov@5", "gini@5,discount=1", "gini@5", "entropy@5", "expshare@5", "expshare@5,discount=1",
                   "disparity@5", "provider@5", "ap"]


def test_every_engine_writes_the_same_bytes(tmp_path, in_process):  # noqa: F811
    data = Dataset(tmp_path, 5, num_users=60)
    common = ["eval", "-q", "-R", data.folder / "test.qrels", *[a for m in ENGINE_MEASURES for a in ("-m", m)],
              *data.options(), data.folder / "a.run", data.folder / "b.run"]
    outputs = {}
    for engine, jobs in (("memory", "1"), ("memory", "2"), ("stream", "1"), ("stream", "2"), ("dask", "1")):
        result = run_cli(*common, "--engine", engine, "--jobs", jobs)
        assert result.exit_code == 0, (engine, result.stderr)
        outputs[(engine, jobs)] = (result.stdout_bytes, result.stderr)
    memory = outputs[("memory", "1")]
    assert b"gini@5,discount=1" in memory[0] and b"expshare@5:p0" in memory[0] and b"provider@5" in memory[0]
    for key, output in outputs.items():
        assert output == memory, key
    assert max(in_process) >= 2  # the dask engine cut the collection into partitions


def test_an_item_outside_the_catalogue_is_the_same_error_whatever_the_jobs(tmp_path):
    """With 2 jobs the runs are read and their items found in the catalogue by forked readers: the
    error is still the run's, at its line."""
    options, _ = tiny(tmp_path)
    (tmp_path / "x").write_text("u1 Q0 a 1 2 x\nu1 Q0 zz 2 1 x\n")
    errors = set()
    for jobs in ("1", "2"):
        result = run_cli("eval", *options, "-m", "arp", "--jobs", jobs, tmp_path / "r", tmp_path / "x")
        errors.add(assert_one_line_error(result, 1, "item 'zz' is not in the catalogue"))
    assert len(errors) == 1 and errors.pop().startswith(f"{tmp_path / 'x'}:2: ")


# --- errors and notes ---------------------------------------------------------------------------------

def test_an_item_outside_the_catalogue_is_an_error_and_writes_nothing(tmp_path):
    options, _ = tiny(tmp_path)
    (tmp_path / "x").write_text("u1 Q0 a 1 2 x\nu1 Q0 zz 2 1 x\n")
    out = tmp_path / "out.jsonl"
    result = run_cli("eval", *options, "-m", "arp", "-o", out, tmp_path / "r", tmp_path / "x")
    message = assert_one_line_error(result, 1, "item 'zz' is not in the catalogue")
    assert message.startswith(f"{tmp_path / 'x'}:2: ")
    assert not out.exists()


@pytest.mark.parametrize(("measure", "option"), [("arp", "--train"), ("ild", "--item-features"),
                                                 ("catcov", "--item-features"), ("provider", "--item-groups"),
                                                 ("expshare@10", "--item-groups"), ("gini@10", "--items")])
def test_a_measure_without_its_side_input_names_the_option(tmp_path, measure, option):
    tiny(tmp_path)
    result = run_cli("eval", "-R", tmp_path / "qrels", "-m", measure, tmp_path / "r", tmp_path / "s")
    assert_one_line_error(result, 2, option)


@pytest.mark.parametrize(("extra", "fragment"), [
    (["-m", "gini@5,discount=2"], "discount must be in [0, 1]"),
    (["-m", "arp@5", "--ties", "expected"], "ties"),
    (["-m", "arp@5", "--ties", "range"], "ties"),
    (["-m", "gini@5", "--samples", "3"], "whole run"),
    (["-m", "icov@5", "--query-fraction", "0.5"], "whole run"),
])
def test_refused_options(tmp_path, extra, fragment):
    options, _ = tiny(tmp_path)
    result = run_cli("eval", *options, *extra, tmp_path / "r", tmp_path / "s")
    assert_one_line_error(result, 2, fragment)


def test_a_side_input_no_measure_reads_is_noted(tmp_path):
    options, _ = tiny(tmp_path)
    result = run_cli("eval", *options, "-m", "ap", tmp_path / "r", tmp_path / "s")
    assert result.exit_code == 0
    first, *_ = result.stderr.splitlines()
    assert first == ("prefeval: note: --train, --items, --item-features, --item-groups: no measure asked for reads "
                     "them (arp, ild, gini, provider, ...: prefeval measures)")
    assert "Traceback" not in result.stderr


def test_items_outside_a_non_strict_catalogue_are_noted(tmp_path):
    tiny(tmp_path)
    (tmp_path / "x").write_text("u1 Q0 a 1 2 x\nu1 Q0 zz 2 1 x\nu2 Q0 yy 1 1 x\n")
    result = run_cli("eval", "-q", "-R", tmp_path / "qrels", "-m", "ild", "--item-features",
                     tmp_path / "features.tsv", tmp_path / "r", tmp_path / "x")
    assert result.exit_code == 0, result.stderr
    # the catalogue is the items of features.tsv (a, b, c): d of run r, zz and yy of run x are outside it
    assert result.stderr.splitlines()[-1] == (
        f"prefeval: note: 3 entries of the runs' lists (e.g. 'd') are items not in {tmp_path / 'features.tsv'}: "
        "they have no features")
    lines = {(line.get("run"), line["qid"]): line for line in json_lines(result.stdout)}
    assert lines[("x", "u1")]["ild"] == 1  # zz has no features


def test_an_item_in_two_groups_is_an_error_at_its_line(tmp_path):
    options, _ = tiny(tmp_path)
    (tmp_path / "groups.tsv").write_text("item\tprovider\na\tP\nb\tP\na\tQ\n")
    result = run_cli("eval", *options, "-m", "provider", tmp_path / "r", tmp_path / "s")
    assert_one_line_error(result, 1, f"{tmp_path / 'groups.tsv'}:4")


# --- the Python API -----------------------------------------------------------------------------------

def test_the_python_api_takes_dataframes_and_gives_the_values_of_eval(tmp_path):
    """prefeval.evaluate and prefeval.compare with the side inputs as DataFrames: the per-user values and,
    with per_query=False, the summary rows (with the measures of the whole run) of ``eval``."""
    import pandas as pd

    import prefeval

    data = Dataset(tmp_path, 6)
    frames = {"train": pd.DataFrame(data.train, columns=["user_id", "item_id"]),
              "items": pd.DataFrame({"item_id": data.items}),
              "item_features": pd.DataFrame([(i, c) for i in data.items for c in sorted(data.features[i])],
                                            columns=["item_id", "genre"]),
              "item_groups": pd.DataFrame(list(data.groups.items()), columns=["item_id", "provider"])}
    runs = {"a.run": str(tmp_path / "a.run"), "b.run": str(tmp_path / "b.run")}
    qrels = str(tmp_path / "test.qrels")
    measures = ["arp@5", "ild", "gini@5", "gini@5,discount=1", "expshare@5"]
    lines = evaluate(data, [*measures, "provider@5"])
    per_user = prefeval.evaluate(qrels, runs, measures, **frames)
    assert "gini@5" not in per_user.columns  # no per-user value
    expected = {(line["run"], line["qid"]): line for line in lines if "run" in line}
    assert len(per_user) == 2 * len(data.users)
    for row in per_user.to_dict("records"):
        line = expected[(row["run"], row["qid"])]
        assert (row["arp@5"], row["ild"]) == (line["arp@5"], line["ild"])
    summary = prefeval.evaluate(qrels, runs, measures, per_query=False, **frames)
    groups = sorted(set(data.groups.values()))
    keys = ["arp@5", "ild", "gini@5", "gini@5,discount=1", *[f"expshare@5:{g}" for g in groups]]
    assert set(keys) <= set(summary.columns)
    for row in summary.to_dict("records"):
        assert {key: row[key] for key in keys} == {key: expected[(row["run"], "all")][key] for key in keys}
    pairs = prefeval.compare(qrels, runs, ["provider@5"], **frames)
    by_user = {line["qid"]: line["provider@5"] for line in lines if "runi" in line}
    assert dict(zip(pairs["qid"], pairs["provider@5"])) == {q: v for q, v in by_user.items() if q != "all"}
