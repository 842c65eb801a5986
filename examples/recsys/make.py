"""The small recommender dataset of docs/recommender.md, made from a seed (run from the repository
root: python examples/recsys/make.py).

120 users interact with 200 items whose popularity is skewed (Zipf-like); each user's last two
interactions are the test set (test.qrels, TREC qrels: user 0 item 1), the rest the training data
(train.tsv: user_id, item_id). Three recommenders give each user a top-10 of items it has not
trained on: popular (the most popular items), cooc (items co-occurring with the user's items in
training) and random. users.tsv puts each user in a group: cold (at most 3 training interactions)
or active.

The items' side tables come from a generator of their own (seeded by SEED and 1), so that they leave
the files above as they were: items.tsv, the catalogue (all 200 items, whether or not anyone trained
on them); genres.tsv, each item's one to three genres (item_id, genre), drawn near the genre of its
popularity band (the ten most popular items lean to drama, the next ten to comedy, ..., the items
beyond the hundredth to documentary), so that a list of popular items spans few genres; and
providers.tsv, each item's provider (item_id, provider): major, studio or indie, major the more likely
the more popular the item, indie the less.
"""

from pathlib import Path

import numpy as np

SEED, USERS, ITEMS, K = 28, 120, 200, 10
GENRES = ("drama", "comedy", "action", "thriller", "romance", "horror", "scifi", "animation", "musical",
          "documentary")
BAND = 10
"""Items per popularity band: band b (items b*BAND to (b+1)*BAND - 1) leans to genre b."""
PROVIDERS = ("major", "studio", "indie")
HERE = Path(__file__).parent


def main() -> None:
    rng = np.random.default_rng(SEED)
    weights = 1.0 / np.arange(1, ITEMS + 1) ** 0.9
    weights /= weights.sum()
    histories = [rng.choice(ITEMS, size=int(rng.integers(3, 16)), replace=False, p=weights) for _ in range(USERS)]
    train = {user: list(items[:-2]) for user, items in enumerate(histories)}
    test = {user: list(items[-2:]) for user, items in enumerate(histories)}
    counts = np.bincount([item for items in train.values() for item in items], minlength=ITEMS)
    together = np.zeros((ITEMS, ITEMS))
    for items in train.values():
        together[np.ix_(items, items)] += 1
    np.fill_diagonal(together, 0)
    scorers = {
        "popular": lambda user: counts.astype(float),
        "cooc": lambda user: together[train[user]].sum(axis=0) + counts / (counts.max() + 1),
        "random": lambda user: rng.random(ITEMS),
    }
    for name, score in scorers.items():
        lines = []
        for user in range(USERS):
            scores = score(user)
            scores[train[user]] = -np.inf
            top = np.argsort(-scores, kind="stable")[:K]
            lines += [f"u{user} Q0 i{item} {rank} {K - rank + 1} {name}\n" for rank, item in enumerate(top, 1)]
        (HERE / f"{name}.run").write_text("".join(lines))
    (HERE / "test.qrels").write_text("".join(f"u{user} 0 i{item} 1\n" for user in range(USERS) for item in test[user]))
    (HERE / "train.tsv").write_text("user_id\titem_id\n" + "".join(
        f"u{user}\ti{item}\n" for user in range(USERS) for item in train[user]))
    (HERE / "users.tsv").write_text("user_id\tgroup\n" + "".join(
        f"u{user}\t{'cold' if len(train[user]) <= 3 else 'active'}\n" for user in range(USERS)))
    write_items()


def write_items() -> None:
    """items.tsv, genres.tsv and providers.tsv; item i's popularity falls with i (the weights above),
    so head = 1 - i / ITEMS is 1 for the most popular item and near 0 in the tail. A genre g's weight
    is exp(-|g - band| / 1.5)."""
    rng = np.random.default_rng((SEED, 1))
    head = 1 - np.arange(ITEMS) / ITEMS
    genres, providers = [], []
    for item in range(ITEMS):
        lean = np.exp(-np.abs(np.arange(len(GENRES)) - min(item // BAND, len(GENRES) - 1)) / 1.5)
        chosen = rng.choice(len(GENRES), size=int(rng.integers(1, 4)), replace=False, p=lean / lean.sum())
        genres += [f"i{item}\t{GENRES[genre]}\n" for genre in sorted(chosen)]
        major = head[item] ** 4
        provider = rng.choice(len(PROVIDERS), p=[major, (1 - major) / 2, (1 - major) / 2])
        providers.append(f"i{item}\t{PROVIDERS[provider]}\n")
    (HERE / "items.tsv").write_text("item_id\n" + "".join(f"i{item}\n" for item in range(ITEMS)))
    (HERE / "genres.tsv").write_text("item_id\tgenre\n" + "".join(genres))
    (HERE / "providers.tsv").write_text("item_id\tprovider\n" + "".join(providers))


if __name__ == "__main__":
    main()
