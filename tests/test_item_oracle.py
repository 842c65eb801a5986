"""The beyond-accuracy measures (prefeval.measures.items) against an independent implementation: plain
Python written from the definitions (Microsoft Recommenders' documented formulas for catalogue
coverage, the Gini index and the entropy of exposure, its novelty; Vargas and Castells' EPC and EFD;
Abdollahpouri et al.'s ARP and APLT), which ranks the runs itself, on generated data with a popularity
skew, tied scores, items nobody trained on, test users without a list and lists shorter than k.

LensKit, which would be the natural oracle, installs torch and does not install here: these formulas
are written out instead, without calling a function of prefeval.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from prefeval.dataframes import compare, evaluate

K = 5
CATALOGUE = [f"i{n:02d}" for n in range(40)]


def generated(seed: int):
    """Training interactions skewed to the first items (Zipf; the last ten never trained on), the
    test users' held-out items (qrels), two runs scoring 0-4 (ties) with lists of 0 to 8 items,
    1-3 genres per item (some none) and three providers (some items in none)."""
    rng = np.random.default_rng(seed)
    train = []
    for user in range(30):
        for _ in range(int(rng.integers(1, 8))):
            train.append((f"t{user}", CATALOGUE[min(int(rng.zipf(1.5)) - 1, 29)]))
    qrels = [(f"u{user}", CATALOGUE[int(item)], 1) for user in range(25)
             for item in rng.choice(40, size=int(rng.integers(1, 4)), replace=False)]
    runs = {}
    for name in ("a", "b"):
        rows = []
        for user in range(25):
            length = 0 if user in (3, 11) and name == "a" else int(rng.integers(1, 9))
            for item in rng.choice(40, size=length, replace=False):
                rows.append((f"u{user}", CATALOGUE[int(item)], float(rng.integers(0, 5))))
        runs[name] = pd.DataFrame(rows, columns=["user", "item", "score"])
    genres = [(item, f"g{int(g)}") for item in CATALOGUE[:36]
              for g in rng.choice(6, size=int(rng.integers(1, 4)), replace=False)]
    providers = [(item, f"p{int(rng.integers(0, 3))}") for item in CATALOGUE[:34]]
    frame = pd.DataFrame
    return {"qrels": frame(qrels, columns=["user", "item", "rating"]), "runs": runs,
            "train": frame(train, columns=["user", "item"]), "items": frame({"item": CATALOGUE}),
            "item_features": frame(genres, columns=["item", "genre"]),
            "item_groups": frame(providers, columns=["item", "provider"])}


def top_k(run: pd.DataFrame, k: int) -> dict[str, list[str]]:
    """Each user's list as trec_eval ranks it: score descending, ties by item id descending; first k."""
    lists = {}
    for user, rows in run.groupby("user"):
        ordered = sorted(zip(rows["score"], rows["item"]), key=lambda pair: (-pair[0], [-b for b in pair[1].encode()]))
        lists[user] = [item for _, item in ordered[:k]]
    return lists


class Oracle:
    """The definitions, item by item (docstrings of prefeval.analyses.beyond_accuracy)."""

    def __init__(self, data, head_share: float = 0.2):
        train = data["train"]
        self.phi = Counter(train["item"])  # training interactions per item
        self.seen_by = {item: len(set(rows["user"])) for item, rows in train.groupby("item")}
        self.training_users = train["user"].nunique()
        ordered = sorted(CATALOGUE, key=lambda item: (-self.phi[item], item))
        total, running, head = sum(self.phi.values()), 0, set()
        for item in ordered:  # the fewest most popular items whose interactions reach the share
            head.add(item)
            running += self.phi[item]
            if running >= head_share * total:
                break
        self.head = head
        self.genres = {}
        for item, genre in zip(data["item_features"]["item"], data["item_features"]["genre"]):
            self.genres.setdefault(item, set()).add(genre)
        self.num_genres = data["item_features"]["genre"].nunique()
        self.provider = dict(zip(data["item_groups"]["item"], data["item_groups"]["provider"]))

    def pop_rank(self, item: str) -> float:
        above = sum(self.phi[other] > self.phi[item] for other in CATALOGUE)
        equal = sum(self.phi[other] == self.phi[item] for other in CATALOGUE)
        return above + (equal + 1) / 2

    def per_list(self, items: list[str]) -> dict[str, float]:
        if not items:
            return dict.fromkeys(("arp", "aplt", "epc", "efd", "poprank", "ild", "ild_jaccard", "catcov", "ucov"), 0.0)
        mean = lambda values: sum(values) / len(items)  # noqa: E731
        values = {
            "arp": mean([self.phi[item] for item in items]),
            "aplt": mean([item not in self.head for item in items]),
            "epc": mean([1 - self.seen_by.get(item, 0) / self.training_users for item in items]),
            "efd": mean([-math.log2(max(self.seen_by.get(item, 0), 1) / self.training_users) for item in items]),
            "poprank": mean([self.pop_rank(item) for item in items]),
            "catcov": len(set().union(*(self.genres.get(item, set()) for item in items))) / self.num_genres,
            "ucov": 1.0,
        }
        pairs = list(combinations(items, 2))
        for name, similarity in (("ild", self.cosine), ("ild_jaccard", self.jaccard)):
            values[name] = sum(1 - similarity(x, y) for x, y in pairs) / len(pairs) if pairs else 0.0
        return values

    def cosine(self, x: str, y: str) -> float:
        a, b = self.genres.get(x, set()), self.genres.get(y, set())
        return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0

    def jaccard(self, x: str, y: str) -> float:
        a, b = self.genres.get(x, set()), self.genres.get(y, set())
        return len(a & b) / len(a | b) if a | b else 0.0

    @staticmethod
    def exposure(lists: dict[str, list[str]], discount: bool) -> dict[str, float]:
        exposure = dict.fromkeys(CATALOGUE, 0.0)
        for items in lists.values():
            for rank, item in enumerate(items, start=1):
                exposure[item] += 1 / math.log2(1 + rank) if discount else 1.0
        return exposure

    @staticmethod
    def gini(exposure: dict[str, float]) -> float:
        """Microsoft Recommenders' gini: (1 / (n - 1)) Σ_j (2j − n − 1) p_j over the shares sorted ascending."""
        shares = sorted(value / sum(exposure.values()) for value in exposure.values())
        n = len(shares)
        return sum((2 * j - n - 1) * p for j, p in enumerate(shares, start=1)) / (n - 1)

    @staticmethod
    def entropy(exposure: dict[str, float]) -> float:
        total = sum(exposure.values())
        return -sum(v / total * math.log2(v / total) for v in exposure.values() if v > 0)

    def shares(self, exposure: dict[str, float]) -> dict[str, float]:
        total = sum(exposure.values())
        groups = sorted(set(self.provider.values()))
        return {group: sum(v for item, v in exposure.items() if self.provider.get(item) == group) / total
                for group in groups}

    def provider_preference(self, x: list[str], y: list[str]) -> int:
        """Worst-off provider first: each group's DCG exposure in a list, sorted ascending, compared
        lexicographically."""
        def sorted_exposure(items):
            exposure = dict.fromkeys(sorted(set(self.provider.values())), 0.0)
            for rank, item in enumerate(items, start=1):
                if item in self.provider:
                    exposure[self.provider[item]] += 1 / math.log2(1 + rank)
            return sorted(exposure.values())
        for a, b in zip(sorted_exposure(x), sorted_exposure(y)):
            if abs(a - b) > 1e-9:
                return 1 if a > b else -1
        return 0


PER_LIST = ["arp", "aplt", "epc", "efd", "poprank", "ild", "ild_jaccard", "catcov", "ucov"]


def measured(data, measures, per_query=True, **options):
    side = {name: data[name] for name in ("train", "items", "item_features", "item_groups")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes (runs' items nobody trained on)
        return evaluate(data["qrels"], data["runs"], measures, per_query=per_query, **side, **options)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_list_measures_agree_with_the_oracle_user_by_user(seed):
    data = generated(seed)
    oracle = Oracle(data)
    names = [f"{name}@{K}" if name != "ucov" else name for name in PER_LIST]
    frame = measured(data, names)
    users = sorted(set(data["qrels"]["user"]))
    for run_id, run in data["runs"].items():
        lists = top_k(run, K)
        rows = frame[frame["run"] == run_id].set_index("qid")
        assert sorted(rows.index) == users
        for user in users:
            expected = oracle.per_list(lists.get(user, []))
            for name, column in zip(PER_LIST, names):
                assert rows.loc[user, column] == pytest.approx(expected[name], rel=1e-12, abs=1e-12), \
                    (run_id, user, name)
    assert (frame[(frame["run"] == "a") & frame["qid"].isin(["u3", "u11"])][names] == 0).all().all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measures_of_the_whole_run_agree_with_the_oracle(seed):
    data = generated(seed)
    oracle = Oracle(data)
    measures = [f"icov@{K}", f"gini@{K}", f"gini@{K},discount=1", f"entropy@{K}", f"entropy@{K},discount=1",
                f"expshare@{K},discount=1", f"disparity@{K}", "gini"]
    frame = measured(data, measures, per_query=False).set_index("run")
    for run_id, run in data["runs"].items():
        lists, whole = top_k(run, K), top_k(run, 1000)
        plain, discounted = oracle.exposure(lists, False), oracle.exposure(lists, True)
        row = frame.loc[run_id]
        assert row[f"icov@{K}"] == sum(value > 0 for value in plain.values()) / len(CATALOGUE)
        assert row[f"gini@{K}"] == pytest.approx(oracle.gini(plain), rel=1e-12)
        assert row[f"gini@{K},discount=1"] == pytest.approx(oracle.gini(discounted), rel=1e-12)
        assert row["gini"] == pytest.approx(oracle.gini(oracle.exposure(whole, False)), rel=1e-12)
        assert row[f"entropy@{K}"] == pytest.approx(oracle.entropy(plain), rel=1e-12)
        assert row[f"entropy@{K},discount=1"] == pytest.approx(oracle.entropy(discounted), rel=1e-12)
        shares = oracle.shares(discounted)
        for group, share in shares.items():
            assert row[f"expshare@{K},discount=1:{group}"] == pytest.approx(share, rel=1e-12)
        counted = oracle.shares(plain)
        assert row[f"disparity@{K}"] == pytest.approx(max(counted.values()) - min(counted.values()), rel=1e-12)


def test_provider_preference_agrees_with_the_oracle():
    data = generated(4)
    oracle = Oracle(data)
    side = {name: data[name] for name in ("train", "items", "item_features", "item_groups")}
    frame = compare(data["qrels"], data["runs"], [f"provider@{K}"], **side).set_index("qid")
    a, b = top_k(data["runs"]["a"], K), top_k(data["runs"]["b"], K)
    signs = [oracle.provider_preference(a.get(user, []), b.get(user, [])) for user in frame.index]
    assert frame[f"provider@{K}"].tolist() == signs
    assert set(signs) == {-1, 0, 1} or len(set(signs)) > 1  # the data exercises both directions


# --- bad side inputs: one line, at the line, or a note ----------------------------------------------

RECSYS = "examples/recsys"


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def recsys_eval(*args):
    from conftest import run_cli

    return run_cli("eval", "--qrels", f"{RECSYS}/test.qrels", f"{RECSYS}/popular.run", f"{RECSYS}/random.run", *args)


def test_a_catalogue_smaller_than_the_runs_items_is_an_error_at_the_run_line(tmp_path):
    from contract import assert_one_line_error

    catalogue = write(tmp_path, "items.csv", "item\n" + "\n".join(f"i{n}" for n in range(150)) + "\n")
    output = tmp_path / "out.jsonl"
    result = recsys_eval("-m", "gini@10", "--items", catalogue, "-o", output)
    message = assert_one_line_error(result, 1, "is not in the catalogue")
    assert message.startswith(f"{RECSYS}/random.run:") and "item 'i1" in message
    assert not output.exists()


def test_a_user_in_two_groups_is_an_error_at_its_line(tmp_path):
    from contract import assert_one_line_error

    groups = write(tmp_path, "users.tsv", "user\tgroup\nu0\tcold\nu1\tactive\nu0\tactive\n")
    assert_one_line_error(recsys_eval("-m", "arp@10", "--train", f"{RECSYS}/train.tsv", "--user-groups", groups), 1,
                          f"{groups}:4:")


def test_items_without_features_and_a_training_file_of_other_items_are_noted(tmp_path):
    features = write(tmp_path, "genres.tsv", "item\tgenre\ni1\tdrama\ni2\tcomedy\n")
    result = recsys_eval("-m", "ild@10", "--item-features", features)
    assert result.exit_code == 0, result.stderr
    assert "entries of the runs' lists" in result.stderr and "are items not in" in result.stderr
    assert "they have no features" in result.stderr and "trained" not in result.stderr
    train = write(tmp_path, "train.tsv", "user\titem\nt1\tz1\nt2\tz2\n")
    result = recsys_eval("-m", "arp@10", "--train", train)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("holds none of its items") == 2  # each run


def test_a_measure_without_its_side_input_is_a_usage_error():
    from contract import assert_one_line_error

    for measure, option in (("arp@10", "--train"), ("ild", "--item-features"), ("provider@10", "--item-groups"),
                            ("gini@10", "--items")):
        assert_one_line_error(recsys_eval("-m", measure), 2, f"give {option} FILE")


# --- every engine, the same bytes --------------------------------------------------------------------

def write_recommender_files(tmp_path, users: int = 3000, seed: int = 5):
    """A collection large enough for several chunks and partitions: ``users`` test users, two runs of
    10 items from 300 (tied scores), training data, the catalogue, genres, providers, user groups."""
    rng = np.random.default_rng(seed)
    names = [f"i{n}" for n in range(300)]
    qrels = "".join(f"u{u} 0 {names[int(i)]} 1\n" for u in range(users) for i in rng.choice(300, 2, replace=False))
    files = {"qrels.txt": qrels}
    for run in ("a", "b"):
        files[run] = "".join(f"u{u} Q0 {names[int(i)]} {r} {float(rng.integers(0, 6))} {run}\n" for u in range(users)
                             for r, i in enumerate(rng.choice(300, 10, replace=False), start=1))
    files["train.tsv"] = "user\titem\n" + "".join(f"t{n % 50}\t{names[min(int(rng.zipf(1.4)) - 1, 250)]}\n"
                                                  for n in range(4000))
    files["items.tsv"] = "item\n" + "\n".join(names) + "\n"
    files["genres.tsv"] = "item\tgenre\n" + "".join(f"{name}\tg{(n * 7 + j) % 9}\n" for n, name in enumerate(names)
                                                    for j in range(n % 3))
    files["providers.tsv"] = "item\tprovider\n" + "".join(f"{name}\tp{n % 4}\n" for n, name in enumerate(names[:280]))
    files["users.tsv"] = "user\tgroup\n" + "".join(f"u{u}\t{'cold' if u % 5 == 0 else 'active'}\n"
                                                 for u in range(users))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return {name: str(tmp_path / name) for name in files}


def test_every_engine_writes_the_same_bytes_with_item_measures(tmp_path):
    """memory, stream (chunks of 64 KiB, one and two reading processes) and dask (partitions on a local
    cluster of two workers): the same per-query, summary and group lines, the whole-run measures'
    exposure counts added over chunks and partitions."""
    import subprocess
    import sys

    pytest.importorskip("distributed")
    paths = write_recommender_files(tmp_path)
    measures = ["ndcg@10", "arp@10", "ild@10", "catcov", "ucov", "icov@10", "gini@10,discount=1", "entropy",
                "expshare@10,discount=1", "disparity", "provider@10", "lexirecall"]
    args = ["eval", "-q", "-R", paths["qrels.txt"], paths["a"], paths["b"], *sum((["-m", m] for m in measures), []),
            "--train", paths["train.tsv"], "--items", paths["items.tsv"], "--item-features", paths["genres.tsv"],
            "--item-groups", paths["providers.tsv"], "--user-groups", paths["users.tsv"]]
    code = ("import sys\nimport prefeval.io.source\nprefeval.io.source.BLOCK_BYTES = 1 << 16\n"
            "from prefeval.cli import main\nmain(sys.argv[1:], prog_name='prefeval')\n")
    outputs = {}
    for engine, jobs in (("memory", "1"), ("stream", "1"), ("stream", "2"), ("dask", "2")):
        done = subprocess.run([sys.executable, "-c", code, *args, "--engine", engine, "--jobs", jobs],
                              capture_output=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs[engine, jobs] = done.stdout
    first = outputs["memory", "1"]
    assert first.count(b'"group":"cold"') > 0 and b'"gini@10,discount=1"' in first
    for key, output in outputs.items():
        assert output == first, key


def test_the_table_formats_show_the_measures_of_the_whole_run():
    """--format table and markdown: a column per measure of the whole run after the metrics, the best
    marked as for any column (the smallest Gini index), and a note that they are not means."""
    from conftest import run_cli

    result = run_cli("eval", "-R", f"{RECSYS}/test.qrels", "-m", "ndcg@10", "-m", "gini@10", "-m", "expshare",
                     "--items", f"{RECSYS}/items.tsv", "--item-groups", f"{RECSYS}/providers.tsv",
                     "--format", "markdown", f"{RECSYS}/popular.run", f"{RECSYS}/random.run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "| run | ndcg@10 | gini@10 | expshare:indie | expshare:major | expshare:studio |"
    assert lines[3].startswith("| random.run | 0.0244 | **0.2257** |")
    assert "gini@10, expshare:indie, expshare:major, expshare:studio: of the whole run" in result.stdout
