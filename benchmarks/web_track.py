"""A TREC Web-track-sized diversity collection for the benchmarks (``compare.py --scenario diversity``).

The qrels: the TREC 2012 Web track's public ``qrels-for-ndeval`` when a copy is given
(https://trec.nist.gov/data/web/12/qrels-for-ndeval: 50 topics, 59,736 judgments of 2 to 6 subtopics
each, 9,368 of them relevant), else synthetic ones shaped like them (seeded): 50 topics of 2 to 6
subtopics, 1,200 judged documents a topic judged on every subtopic, each relevant to a subtopic with
probability 0.05 (a document relevant to several now and then). The runs (seeded, whatever the
qrels): ``depth`` documents a topic (10,000 by default, the depth of the track's risk-sensitive
baselines), each topic's judged documents among unjudged ones, scored by a run's skill at finding the
relevant ones plus noise, ranks written in score order. Files are cached under ``benchmarks/cache``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class WebTrack:
    runs: int = 4
    depth: int = 10_000
    topics: int = 50
    judged: int = 1_200
    seed: int = 1

    def name(self, real: bool) -> str:
        source = "web2012" if real else f"synthetic{self.topics}t-{self.judged}j"
        return f"web-track-v1-{source}-{self.runs}runs-{self.depth}d-seed{self.seed}"


def write_web_track(spec: WebTrack, folder: str, qrels: str | None = None) -> tuple[str, list[str]]:
    """Write the collection once under ``folder`` (with the qrels file ``qrels`` when given); return
    the paths of its qrels and runs."""
    target = os.path.join(folder, spec.name(qrels is not None))
    qrels_path = os.path.join(target, "qrels-for-ndeval.txt")
    run_paths = [os.path.join(target, f"run{r}.txt") for r in range(spec.runs)]
    done = os.path.join(target, "complete")
    if os.path.exists(done):
        return qrels_path, run_paths
    os.makedirs(target, exist_ok=True)
    rng = np.random.default_rng(spec.seed)
    if qrels is not None:
        shutil.copyfile(qrels, qrels_path)
    else:
        _write_qrels(spec, rng, qrels_path)
    judged: dict[str, dict[str, bool]] = {}
    with open(qrels_path) as lines:
        for line in lines:
            topic, _, doc, grade = line.split()[:4]
            judged.setdefault(topic, {})
            judged[topic][doc] = judged[topic].get(doc, False) or int(grade) > 0
    for number, path in enumerate(run_paths):
        skill = 0.5 + number
        with open(path, "w") as out:
            for topic, documents in sorted(judged.items(), key=lambda item: int(item[0])):
                docs = np.array(list(documents), dtype=object)
                relevant = np.fromiter(documents.values(), dtype=bool, count=len(docs))
                filler = np.array([f"filler-{number}-{topic}-{d:05d}" for d in range(spec.depth)], dtype=object)
                pool = np.concatenate((docs, filler))
                scores = rng.normal(0.0, 1.0, len(pool))
                scores[: len(docs)] += np.where(relevant, skill, 0.5)
                order = np.argsort(-scores, kind="stable")[: spec.depth]
                out.write("".join(f"{topic} Q0 {pool[i]} {rank} {scores[i]:.6f} run{number}\n"
                                  for rank, i in enumerate(order.tolist(), start=1)))
    open(done, "w").close()
    return qrels_path, run_paths


def _write_qrels(spec: WebTrack, rng: np.random.Generator, path: str) -> None:
    with open(path, "w") as out:
        for topic in range(151, 151 + spec.topics):
            subtopics = int(rng.integers(2, 7))
            relevant = rng.random((spec.judged, subtopics)) < 0.05
            out.write("".join(f"{topic} {s + 1} clueweb09-en{topic:04d}-{d:05d} {int(relevant[d, s])}\n"
                              for d in range(spec.judged) for s in range(subtopics)))
