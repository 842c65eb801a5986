"""The benchmark harness.

    python benchmarks/run.py [--repeat 5] [--scenario NAME ...] [--output benchmarks/results.md]

For every scenario it times, as whole processes and over ``--repeat`` runs (the median is reported):

* the parse floor (``benchmarks/floor.py``): prefeval's tokeniser reading the same files in one
  process, and nothing else;
* ``prefeval eval -q`` with the default measures, written to a file (``--jobs`` default, and
  ``--jobs 1``), with its peak memory;
* ``prefeval aggregate`` on that output, with its peak memory.

The same collection as Parquet (``--scenario recsys-1m-parquet``, ``recsys-10m-parquet``): ``eval -q``
of the text files, of the Parquet files (one per run) and of the partitioned directories (a Parquet
file per 250,000 users), streamed (``--engine stream``), taking turns, with their peak memory; it
checks that all three write the same bytes, and gives the median of the turns' ratios of Parquet to
text.

The 1M-user collection as Parquet (``--scenario recsys-1m-parquet-dask``: a file per run;
``recsys-1m-partitioned-dask``: a directory of a file per 250,000 users per run) is timed as the
text one below, every engine and dask through 1 and 2 workers, without the pandas floor.

Recommender scale (``--scenario recsys-1m``, ``recsys-10m``: 2 runs × 1M or 10M users × 10 items,
``benchmarks/recommender.py``) is timed against its own floor, a plain pandas read of the same files
(``benchmarks/pandas_floor.py``): ``eval -q`` with the default engine (streamed), and with
``--engine dask`` on a local cluster of two workers, whose peak memory is part of the process tree;
it checks that both write the same bytes. ``recsys-10m`` runs once (``--repeat`` is not applied: a
run takes minutes and 9 GB of input), without its floor: pandas would need about 25 GB for the 220
million lines, more than the machine has.

With ``--ties POLICY`` (``expected`` or ``range``) it also times ``prefeval eval -q --ties POLICY
--seed 1`` against the default ``eval -q``, the two commands taking turns run by run (so that other
load on the machine falls on both alike), and reports the medians and their ratio. With
``--against DIR`` (another checkout of prefeval, e.g. ``git worktree add /tmp/before COMMIT``) it
times ``eval -q`` of that code against this one, taking turns, and checks that both write the same
bytes.

prefeval's sources (and those of ``--against DIR``) are compiled to bytecode first, as an installed
package is. Peak memory is the largest resident set of any one process (from ``wait4``) and the
largest sum over the process tree (sampled every 10 ms from /proc). Synthetic collections are
generated once (seeded) into ``benchmarks/cache/``. Results go to a markdown file that docs/performance.md quotes.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from recommender import PARQUET, PARTITIONED, write_recommender  # noqa: E402
from synthetic import Collection, write_collection  # noqa: E402

CACHE = os.path.join(HERE, "cache")
ROBUST03 = os.environ.get("PREFEVAL_ROBUST03", os.path.join(HERE, "..", "..", "shared", "data", "robust03"))


@dataclass
class Scenario:
    name: str
    qrels: str
    runs: list[str]
    lines: int


@dataclass
class Timing:
    wall: float
    max_rss_mib: float
    tree_rss_mib: float
    tree_pss_mib: float = 0.0


def scenarios(names: list[str]) -> list[Scenario]:
    """The scenarios asked for (default: all), generating synthetic data on first use."""
    found = []
    robust = os.path.join(ROBUST03, "qrels.txt")
    if os.path.exists(robust) and _wanted("robust03", names):
        runs = sorted(os.path.join(ROBUST03, "runs", f) for f in os.listdir(os.path.join(ROBUST03, "runs")))
        found.append(Scenario("robust03", robust, runs, 1_510_973))
    growth = Collection(runs=100, queries=100, depth=1000)
    for count in (10, 25, 50, 100):
        if _wanted(f"runs-{count}", names):
            qrels, runs = write_collection(growth, CACHE)
            found.append(Scenario(f"runs-{count}", qrels, runs[:count], count * growth.queries * growth.depth))
    recsys = Collection(runs=2, queries=100_000, depth=100, relevant=5.0, max_grade=1, judged_nonrelevant=0.0,
                        catalogue=50_000)
    if _wanted("recsys", names):
        qrels, runs = write_collection(recsys, CACHE)
        found.append(Scenario("recsys", qrels, runs, recsys.lines))
    return found


LARGE = {"recsys-50k": 50_000, "recsys-200k": 200_000, "recsys-1m": 1_000_000, "recsys-10m": 10_000_000}
"""The recommender-scale scenarios: users (2 runs × 10 items each)."""


LARGE_COLUMNAR = {"recsys-1m-parquet-dask": (1_000_000, PARQUET),
                  "recsys-1m-partitioned-dask": (1_000_000, PARTITIONED)}
"""The 1M-user collection as Parquet (a file per run) and as partitioned directories (a file per 250,000
users), timed as the text one is (every engine, dask through 1 and 2 workers), without the pandas floor."""


def large_scenarios(names: list[str]) -> list[Scenario]:
    """The recommender-scale scenarios asked for (only when named), generated on first use."""
    found = []
    for name, users in LARGE.items():
        if name in names:
            qrels, runs = write_recommender(CACHE, users)
            found.append(Scenario(name, qrels, runs, users * 22))
    for name, (users, form) in LARGE_COLUMNAR.items():
        if name in names:
            qrels, runs = write_recommender(CACHE, users, form=form)
            found.append(Scenario(name, qrels, runs, users * 22))
    return found


COLUMNAR = {"recsys-1m-parquet": 1_000_000, "recsys-10m-parquet": 10_000_000}
"""The recommender-scale scenarios read as text and as Parquet (users)."""


def run_columnar(name: str, users: int, repeat: int) -> dict:
    """``eval -q --engine stream`` of the text, Parquet and partitioned forms of a recommender
    collection, taking turns (one run of each for 10M users)."""
    forms = {"text": write_recommender(CACHE, users), "parquet": write_recommender(CACHE, users, form=PARQUET),
             "partitioned": write_recommender(CACHE, users, form=PARTITIONED)}
    repeat = 1 if users >= 10_000_000 else repeat
    outputs = {form: os.path.join(CACHE, f"{name}.{form}.jsonl") for form in forms}
    commands = {form: [sys.executable, "-m", "prefeval", "eval", "-q", "--engine", "stream", "-R", qrels, *runs,
                       "-o", outputs[form]] for form, (qrels, runs) in forms.items()}
    runs = in_turns(commands, repeat, memory=True, warm_up=False)
    same = all(_same_bytes(outputs["text"], outputs[form]) for form in ("parquet", "partitioned"))
    for path in outputs.values():
        os.unlink(path)
    sizes = {form: sum(_size(path) for path in [qrels, *paths]) for form, (qrels, paths) in forms.items()}
    return {"name": name, "users": users, "repeat": repeat, "same": same, "sizes": sizes,
            "timings": {form: median_timing(timings) for form, timings in runs.items()},
            "ratios": {form: turn_ratio(runs[form], runs["text"]) for form in ("parquet", "partitioned")}}


def _size(path: str) -> int:
    """The bytes of a file, or of every file under a directory."""
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(folder, file)) for folder, _, files in os.walk(path) for file in files)


def columnar_report(results: list[dict]) -> str:
    lines = [
        "",
        "The recommender collection as text and as Parquet, `eval -q --engine stream` (median of the runs shown, "
        "the commands taking turns; ratio: median of the turns' ratios to text; peak memory summed over the process "
        "tree, PSS / RSS):",
        "",
        "| scenario | runs | form | on disk | `eval -q` | ÷ text | memory | same bytes |",
        "|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        for form, timing in r["timings"].items():
            ratio = f"{r['ratios'][form]:.2f}" if form in r["ratios"] else ""
            lines.append(f"| {r['name']} | {r['repeat']} | {form} | {r['sizes'][form] / 2**20:,.0f} MiB "
                         f"| {timing.wall:.1f} s | {ratio} | {_memory(timing)} | {'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def run_large(scenario: Scenario, repeat: int, memory: bool = True) -> dict:
    """The pandas floor, ``eval -q`` with the default engine, ``--engine stream --jobs 1`` and
    ``--jobs 2``, and ``--engine dask`` through a real cluster of one and of two single-threaded
    workers (:class:`ClusterCommand`: a cluster started before each run and stopped after it, untimed,
    as a cluster is long-lived); the dask runs' memory is the client's process tree's plus the
    cluster's processes'. ``recsys-10m``: once, the default engine and dask on two workers only.
    ``memory`` False: wall times alone (sampling the trees' memory takes a share of the cores, the
    more so the more processes: a cluster's)."""
    huge = scenario.name == "recsys-10m"
    floor = not huge and scenario.name in LARGE  # the pandas floor reads text
    repeat = 1 if huge else repeat
    python = sys.executable
    names = ["eval", "dask2"] if huge else ["eval", "stream1", "stream2", "dask1", "dask2"]
    outputs = {name: os.path.join(CACHE, f"{scenario.name}.{name}.jsonl") for name in names}
    base = [python, "-m", "prefeval", "eval", "-q", "-R", scenario.qrels, *scenario.runs]
    commands: dict = {"eval": base + ["-o", outputs["eval"]]}
    for name in names[1:]:
        if name.startswith("stream"):
            commands[name] = base + ["--engine", "stream", "--jobs", name[-1], "-o", outputs[name]]
        else:
            commands[name] = ClusterCommand(base + ["--engine", "dask", "-o", outputs[name]], int(name[-1]))
    if floor:
        commands["floor"] = [python, os.path.join(HERE, "pandas_floor.py"), scenario.qrels, *scenario.runs]
    runs = in_turns(commands, repeat, memory=memory, warm_up=False, outputs=outputs)
    timings = {name: median_timing(timings) for name, timings in runs.items()}
    ratios = {name: turn_ratio(runs[name], runs["floor"]) for name in names} if floor else {}
    if "dask1" in runs:
        ratios["dask1/dask2"] = turn_ratio(runs["dask1"], runs["dask2"])
        ratios["stream2/dask2"] = turn_ratio(runs["stream2"], runs["dask2"])
    same = all(_same_bytes(outputs["eval"], outputs[name]) for name in names[1:])
    for path in outputs.values():
        os.unlink(path)
    return {"scenario": scenario, "floor": timings.get("floor"), **{name: timings[name] for name in names},
            "names": names, "ratios": ratios, "same": same, "repeat": repeat}


@contextlib.contextmanager
def dask_cluster(workers: int):
    """A Dask cluster as the README starts one: ``dask scheduler`` on 127.0.0.1 and ``workers``
    single-threaded ``dask worker`` processes, each in a process group of its own; yields (the
    scheduler's address, the process ids of the scheduler and workers, whose memory is the cluster's),
    and stops them (SIGTERM to each group) when done."""
    import json
    import signal
    import tempfile

    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    folder = tempfile.mkdtemp(prefix="prefeval-cluster-")
    scheduler_file = os.path.join(folder, "scheduler.json")
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder, start_new_session=True)
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", scheduler_file], **quiet)]
    try:
        while not os.path.exists(scheduler_file):
            time.sleep(0.2)
        time.sleep(0.2)
        with open(scheduler_file) as handle:
            address = json.load(handle)["address"]
        processes += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard"], **quiet)
                      for _ in range(workers)]
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
            client.run(exec, WARM_IMPORTS)  # a long-lived cluster's workers have imported what a task needs
        yield address, [process.pid for process in processes]
    finally:
        for process in reversed(processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


WARM_IMPORTS = """
import contextlib, importlib
for name in ("prefeval.engine.partitioned", "prefeval.engine.dask", "prefeval.report.eval_lines",
             "prefeval.io.columnar", "pandas", "pyarrow.parquet"):
    with contextlib.suppress(ImportError):
        importlib.import_module(name)
"""
"""What a worker of a long-lived cluster has imported after its first evaluation (prefeval's
partitioned reader, pandas, pyarrow where installed): a cluster started for one timed run would
otherwise time those imports too. Run on the workers by the builtin ``exec``, which pickles by name
whichever script imports this module (a function of this module would pickle as ``run.<name>``,
which the workers cannot import)."""


def run_engines(scenario: Scenario, repeat: int) -> list[dict]:
    """``eval`` with ``--engine memory``, ``--engine stream`` and the default (``auto``), taking turns,
    with ``-q`` and without (the summary alone); and the engine ``auto`` chose (asked of
    :func:`prefeval.engine.auto_engine` in this process, on the same inputs): whether it is within
    10% of the fastest. ``recsys-10m`` is not run (memory does not fit)."""
    python = sys.executable
    output = os.path.join(CACHE, f"{scenario.name}.engines.jsonl")
    found = []
    for per_query in (True, False):
        base = [python, "-m", "prefeval", "eval", *(["-q"] if per_query else []), "-R", scenario.qrels,
                "-o", output, *scenario.runs]
        commands = {"memory": base + ["--engine", "memory"], "stream": base + ["--engine", "stream"], "auto": base}
        medians = median_walls(commands, repeat)
        chosen = _auto_choice(scenario, per_query)
        best = min(medians["memory"], medians["stream"])
        found.append({"scenario": scenario, "per_query": per_query, **medians, "chosen": chosen,
                      "ratio": medians[chosen] / best, "auto_ratio": medians["auto"] / best})
        print(engines_report(found[-1:], repeat).splitlines()[-1], file=sys.stderr, flush=True)
    os.unlink(output)
    return found


def _auto_choice(scenario: Scenario, per_query: bool) -> str:
    """The engine ``eval`` (``-q`` or not) chooses on the scenario's files, by default."""
    from prefeval.engine import auto_engine

    return auto_engine(scenario.qrels, scenario.runs, per_query=per_query)


def engines_report(results: list[dict], repeat: int) -> str:
    lines = [
        "",
        f"`--engine auto` against `memory` and `stream` (median of {repeat} runs each, the three commands taking "
        "turns after a warm-up; whole processes; the default `--jobs`):",
        "",
        "| scenario | lines | output | `memory` | `stream` | `auto` | auto chose | its engine ÷ the fastest | "
        "`auto` ÷ the fastest |",
        "|---|---:|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in results:
        output = "per query" if r["per_query"] else "summary"
        lines.append(f"| {r['scenario'].name} | {r['scenario'].lines:,} | {output} "
                     f"| {r['memory']:.2f} s | {r['stream']:.2f} s | {r['auto']:.2f} s | {r['chosen']} "
                     f"| {r['ratio']:.2f} | {r['auto_ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def _same_bytes(first: str, second: str, size: int = 1 << 24) -> bool:
    with open(first, "rb") as one, open(second, "rb") as other:
        while True:
            a, b = one.read(size), other.read(size)
            if a != b:
                return False
            if not a:
                return True


def _memory(timing: Timing) -> str:
    """The tree's peak memory, or a dash where it was not sampled (``--no-memory``)."""
    if not timing.tree_rss_mib:
        return "—"
    return f"{timing.tree_pss_mib:,.0f} / {timing.tree_rss_mib:,.0f} MiB"


def _ratio(ratios: dict[str, float], name: str) -> str:
    return f"{ratios[name]:.2f}" if name in ratios else "—"


def large_report(results: list[dict]) -> str:
    lines = [
        "",
        "Recommender scale (median of the runs shown, the commands taking turns; ratios: median of the turns' "
        "ratios; whole processes; peak memory summed over the process tree, sampled every 10 ms, as proportional "
        "set sizes (PSS: a page that forked processes share counts once) and, after the slash, resident set sizes "
        "(RSS: counted in every process that maps it); `dask` runs go through a real cluster of `dask scheduler` "
        "and N single-threaded `dask worker` processes, whose memory is added to the tree's, and the client's "
        "peak RSS is given apart; the pandas floor is `benchmarks/pandas_floor.py`):",
        "",
        "| scenario | command | runs | wall | ÷ floor | memory, PSS / RSS | client peak RSS "
        "| same bytes as `eval -q` |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    labels = {"floor": "pandas floor", "eval": "`eval -q` (default engine)", "stream1": "`--engine stream --jobs 1`",
              "stream2": "`--engine stream --jobs 2`", "dask1": "`--engine dask`, 1 worker",
              "dask2": "`--engine dask`, 2 workers"}
    for r in results:
        s = r["scenario"]
        for name in ["floor", *r["names"]]:
            timing = r.get(name)
            if timing is None and s.name in LARGE_COLUMNAR:
                continue  # no pandas floor for Parquet
            if timing is None:
                lines.append(f"| {s.name} | {labels[name]} | | (does not fit) | | | | |")
                continue
            same = "" if name in ("floor", "eval") else ("yes" if r["same"] else "NO")
            lines.append(f"| {s.name} | {labels[name]} | {r['repeat']} | {timing.wall:.1f} s | "
                         f"{_ratio(r['ratios'], name)} | {_memory(timing)} | {timing.max_rss_mib:,.0f} MiB | {same} |")
        for key, text in (("dask1/dask2", "dask, 1 worker ÷ 2 workers"), ("stream2/dask2", "stream --jobs 2 ÷ dask, "
                                                                                              "2 workers")):
            if key in r["ratios"]:
                lines.append(f"| {s.name} | {text} | | {r['ratios'][key]:.2f} | | | | |")
    return "\n".join(lines) + "\n"


def compiled(*folders: str) -> None:
    """Compile the Python sources under ``folders`` to bytecode before anything is timed, as ``pip
    install`` does for an installed package. A checkout run in place with PYTHONDONTWRITEBYTECODE set
    (as on this machine) is otherwise compiled again by every process: 0.15 s of each prefeval run
    here, which no installed copy pays."""
    for folder in folders:
        compileall.compile_dir(folder, quiet=1)


def _wanted(name: str, names: list[str]) -> bool:
    return not names or name in names


def measure(command: list[str], repeat: int, memory: bool = True) -> Timing:
    """Median wall time and peak memory of ``command`` over ``repeat`` runs (after one warm-up);
    ``memory`` False: the wall time alone (see :func:`_run_once`)."""
    return median_timing(in_turns({"command": command}, repeat, memory=memory)["command"])


def median_walls(commands: dict[str, list[str] | tuple[list[str], dict | None]], repeat: int) -> dict[str, float]:
    """The median wall time of each command, the commands taking turns (:func:`in_turns`)."""
    return {name: median_timing(runs).wall for name, runs in in_turns(commands, repeat).items()}


class ClusterCommand(NamedTuple):
    """A command run through a Dask cluster of ``workers`` single-threaded workers (:func:`dask_cluster`),
    started and warmed before the run, untimed (a cluster is long-lived), and stopped after it, so that no other
    cluster's processes are up while it runs (an idle worker and its nanny take 6% of a core: on 2
    cores, a second cluster kept up for the turns slowed the first one's runs by a second)."""

    command: list[str]
    workers: int


def in_turns(commands: dict[str, list[str] | tuple[list[str], dict | None] | ClusterCommand], repeat: int,
             memory: bool = False, warm_up: bool = True, outputs: dict[str, str] | None = None
             ) -> dict[str, list[Timing]]:
    """Each command's timings, run by run: ``repeat`` runs of every command (a command, a command and
    its environment, or a :class:`ClusterCommand`), the commands taking turns (A B C A B C ...) after a
    warm-up turn (unless not ``warm_up``), so that other load on the machine falls on all of them
    alike; with ``memory``, the peaks of each run's process tree too (see :func:`_run_once`).
    ``outputs``: the file each command writes, removed before each of its runs, untimed: a run that
    replaced the file of the turn before would time the file system freeing it (0.2 to 0.5 s for the
    700 MB of lines of 2 runs x 1M users, the same for every command, which brings ratios nearer 1)."""
    runs: dict[str, list[Timing]] = {name: [] for name in commands}
    for turn in range(repeat + warm_up):
        for name, command in commands.items():
            if outputs is not None and name in outputs:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(outputs[name])
            if isinstance(command, ClusterCommand):
                with dask_cluster(command.workers) as (address, pids):
                    timing = _run_once(command.command + ["--scheduler", address], memory=memory, others=pids)
                if turn or not warm_up:
                    runs[name].append(timing)
                continue
            command, env, others = (command + (None,) * (3 - len(command)) if isinstance(command, tuple)
                                    else (command, None, None))
            timing = _run_once(command, env, memory=memory, others=others)
            if turn or not warm_up:
                runs[name].append(timing)
    return runs


def median_timing(timings: list[Timing]) -> Timing:
    """The median wall time of the runs, and the largest of their memory peaks."""
    return Timing(wall=statistics.median(t.wall for t in timings),
                  max_rss_mib=max(t.max_rss_mib for t in timings),
                  tree_rss_mib=max(t.tree_rss_mib for t in timings),
                  tree_pss_mib=max(t.tree_pss_mib for t in timings))


def turn_ratio(timings: list[Timing], others: list[Timing]) -> float:
    """The median over the turns of the ratio of the two commands' wall times in the same turn: it
    holds when the machine's speed drifts between turns, which a ratio of medians does not."""
    return statistics.median(one.wall / other.wall for one, other in zip(timings, others))


def _run_once(command: list[str], env: dict[str, str] | None = None, memory: bool = True,
              others: list[int] | None = None) -> Timing:
    """One whole-process run: its wall time, the peak resident set of the process itself, and, with
    ``memory``, the peaks of its process tree's memory (and of the trees of the processes ``others``, a
    cluster's), sampled every 10 ms. Sampling the trees reads ``/proc`` (``smaps_rollup`` walks the
    page tables), which takes a share of a 2-core machine from the command it measures: timings alone
    are taken without it. The process's own peak is its ``VmHWM``, read every 50 ms (a line of
    ``/proc/PID/status``: cheap) and not ``wait4``'s ``ru_maxrss``, which Linux carries over an
    ``exec`` from the process that forked it: the harness's own size, 1.1 GB once it has generated
    the 1M-user collection."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak = [0, 0]
    own_peak = [0]
    done = threading.Event()
    samplers = [threading.Thread(target=_sample_own_peak, args=(process.pid, own_peak, done), daemon=True)]
    if memory:
        samplers.append(threading.Thread(target=_sample_tree, args=([process.pid, *(others or ())], peak, done),
                                         daemon=True))
    for sampler in samplers:
        sampler.start()
    _, status, _ = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    for sampler in samplers:
        sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    process.stderr.close()
    return Timing(wall=wall, max_rss_mib=own_peak[0] / 1024, tree_rss_mib=peak[0] / 1024,
                  tree_pss_mib=peak[1] / 1024)


def _sample_own_peak(pid: int, peak: list[int], done: threading.Event) -> None:
    """The last ``VmHWM`` (peak resident set, KiB) of process ``pid`` read before it ended: it only grows."""
    while True:
        peak[0] = max(peak[0], _memory_kib(pid, "status", "VmHWM:"))
        if done.wait(0.05):
            return


def _sample_tree(pids: list[int], peak: list[int], done: threading.Event) -> None:
    """The peaks of the sums over the process trees of ``pids`` of the resident sets (which count a page
    that forked processes share once in each) and of the proportional sets (which share it out among
    them: the memory the tree takes)."""
    while not done.wait(0.01):
        tree = [member for pid in pids for member in _tree(pid)]
        peak[0] = max(peak[0], sum(_memory_kib(p, "status", "VmRSS:") for p in tree))
        peak[1] = max(peak[1], sum(_memory_kib(p, "smaps_rollup", "Pss:") for p in tree))


def _tree(pid: int) -> list[int]:
    pids, index = [pid], 0
    while index < len(pids):
        try:  # every thread's children: a Dask nanny starts its worker from a thread of its own
            for thread in os.listdir(f"/proc/{pids[index]}/task"):
                with open(f"/proc/{pids[index]}/task/{thread}/children") as handle:
                    pids += [int(child) for child in handle.read().split()]
        except OSError:
            pass
        index += 1
    return pids


def _memory_kib(pid: int, table: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/{table}") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_scenario(scenario: Scenario, repeat: int) -> dict:
    output = os.path.join(CACHE, f"{scenario.name}.eval.jsonl")
    python = sys.executable
    floor = measure([python, os.path.join(HERE, "floor.py"), scenario.qrels, *scenario.runs], repeat)
    evaluate = measure([python, "-m", "prefeval", "eval", "-q", "-R", scenario.qrels, "-o", output, *scenario.runs],
                       repeat)
    sequential = measure([python, "-m", "prefeval", "eval", "-q", "--jobs", "1", "-R", scenario.qrels, "-o", output,
                          *scenario.runs], repeat)
    aggregate = measure([python, "-m", "prefeval", "aggregate", "-P", output, "-o", output + ".agg"], repeat)
    return {"scenario": scenario, "floor": floor, "eval": evaluate, "eval1": sequential, "aggregate": aggregate}


def run_ties(scenario: Scenario, repeat: int, ties: str) -> dict:
    """Median wall times of ``eval -q`` and ``eval -q --ties TIES --seed 1``, taking turns."""
    output = os.path.join(CACHE, f"{scenario.name}.ties.jsonl")
    base = [sys.executable, "-m", "prefeval", "eval", "-q", "-R", scenario.qrels, "-o", output, *scenario.runs]
    commands = {"docid": (base, None), ties: (base[:5] + ["--ties", ties, "--seed", "1"] + base[5:], None)}
    return {"scenario": scenario, **median_walls(commands, repeat)}


def run_against(scenario: Scenario, repeat: int, other: str) -> dict:
    """Median wall times of ``eval -q`` by the code in ``other`` and by this code, taking turns; and
    whether they wrote the same bytes."""
    os.makedirs(CACHE, exist_ok=True)
    outputs = {name: os.path.join(CACHE, f"{scenario.name}.{name}.jsonl") for name in ("before", "after")}
    commands = {}
    for name, path in (("before", os.path.abspath(other)), ("after", os.path.join(HERE, ".."))):
        env = dict(os.environ, PYTHONPATH=path)
        commands[name] = ([sys.executable, "-m", "prefeval", "eval", "-q", "-R", scenario.qrels, "-o", outputs[name],
                           *scenario.runs], env)
    medians = median_walls(commands, repeat)
    same = _same_bytes(outputs["before"], outputs["after"])
    for path in outputs.values():
        os.unlink(path)
    return {"scenario": scenario, **medians, "same": same}


def against_report(results: list[dict], repeat: int, other: str) -> str:
    lines = [
        "",
        f"`eval -q` of the code in `{other}` against this code (median of {repeat} runs each, taking turns, after a "
        "warm-up; whole processes):",
        "",
        "| scenario | before | after | after / before | same bytes |",
        "|---|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(f"| {r['scenario'].name} | {r['before']:.2f} s | {r['after']:.2f} s | "
                     f"{r['after'] / r['before']:.2f} | {'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def ties_report(results: list[dict], repeat: int, ties: str) -> str:
    lines = [
        "",
        f"`eval -q` against `eval -q --ties {ties} --seed 1` (median of {repeat} runs each, taking turns, after a "
        "warm-up; whole processes):",
        "",
        f"| scenario | `eval -q` | `eval -q --ties {ties}` | ratio |",
        "|---|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['scenario'].name} | {r['docid']:.2f} s | {r[ties]:.2f} s | {r[ties] / r['docid']:.2f} |")
    return "\n".join(lines) + "\n"


def report(results: list[dict], repeat: int, command: str) -> str:
    import numpy
    import orjson
    import pandas

    lines = [
        f"Command: `{command}` (median of {repeat} runs after a warm-up; whole processes).",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}; "
        f"Python {platform.python_version()}, numpy {numpy.__version__}, pandas {pandas.__version__}, "
        f"orjson {orjson.__version__}.",
        "",
        "| scenario | lines | parse floor | `eval -q` | ratio | `eval -q --jobs 1` | ratio "
        "| eval peak RSS (largest / tree) | `aggregate` | aggregate / eval | aggregate peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        s, floor, ev, ev1, agg = r["scenario"], r["floor"], r["eval"], r["eval1"], r["aggregate"]
        lines.append(
            f"| {s.name} | {s.lines:,} | {floor.wall:.2f} s | {ev.wall:.2f} s | {ev.wall / floor.wall:.2f} "
            f"| {ev1.wall:.2f} s | {ev1.wall / floor.wall:.2f} | {ev.max_rss_mib:.0f} / {ev.tree_rss_mib:.0f} MiB "
            f"| {agg.wall:.2f} s | {agg.wall / ev.wall:.2f} | {agg.max_rss_mib:.0f} MiB |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenario", action="append", default=[],
                        help="robust03, runs-10, runs-25, runs-50, runs-100, recsys; recsys-1m, recsys-10m, "
                             "recsys-1m-parquet, recsys-10m-parquet, recsys-1m-parquet-dask and "
                             "recsys-1m-partitioned-dask only when named")
    parser.add_argument("--output", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--ties", choices=["expected", "range"],
                        help="Also time eval -q --ties TIES against eval -q, taking turns.")
    parser.add_argument("--engines", action="store_true",
                        help="Time --engine memory, stream and auto (the default) instead, taking turns, with -q and "
                             "without, and check auto's choice against the fastest.")
    parser.add_argument("--no-memory", action="store_true",
                        help="Recommender scale: time the commands without sampling their memory.")
    parser.add_argument("--against", metavar="DIR",
                        help="Time eval -q of the prefeval code in DIR against this code instead, taking turns.")
    args = parser.parse_args()
    compiled(os.path.join(HERE, "..", "prefeval"), *([os.path.join(args.against, "prefeval")] if args.against else []))
    if args.against:
        paired = []
        small = [name for name in args.scenario if name not in LARGE and name not in COLUMNAR
                 and name not in LARGE_COLUMNAR]
        for scenario in [*large_scenarios(args.scenario), *(scenarios(small) if small or not args.scenario else [])]:
            paired.append(run_against(scenario, args.repeat, args.against))
            print(against_report(paired[-1:], args.repeat, args.against).splitlines()[-1], file=sys.stderr, flush=True)
        text = against_report(paired, args.repeat, args.against)
        with open(args.output, "w") as handle:
            handle.write(text)
        print(text)
        return
    if args.engines:
        chosen = []
        small = [name for name in args.scenario if name not in LARGE]
        for scenario in [*(scenarios(small) if small or not args.scenario else []),
                         *(s for s in large_scenarios(args.scenario) if s.name != "recsys-10m")]:
            print(f"{scenario.name}: {len(scenario.runs)} runs, {scenario.lines:,} lines", file=sys.stderr, flush=True)
            chosen += run_engines(scenario, args.repeat)
        text = engines_report(chosen, args.repeat)
        with open(args.output, "w") as handle:
            handle.write(text)
        print(text)
        return
    command = "python benchmarks/run.py" + "".join(f" --scenario {s}" for s in args.scenario) + (
        f" --repeat {args.repeat}" if args.repeat != 5 else "") + (f" --ties {args.ties}" if args.ties else "") + (
        " --no-memory" if args.no_memory else "")
    results, tied, large, columnar = [], [], [], []
    for name in args.scenario:
        if name in COLUMNAR:
            print(f"{name}: text, Parquet and partitioned", file=sys.stderr, flush=True)
            columnar.append(run_columnar(name, COLUMNAR[name], args.repeat))
            print(columnar_report(columnar[-1:]), file=sys.stderr, flush=True)
    for scenario in large_scenarios(args.scenario):
        print(f"{scenario.name}: {len(scenario.runs)} runs, {scenario.lines:,} lines", file=sys.stderr, flush=True)
        large.append(run_large(scenario, args.repeat, memory=not args.no_memory))
        print(large_report(large[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    small = [name for name in args.scenario if name not in {**LARGE, **COLUMNAR, **LARGE_COLUMNAR}]
    for scenario in scenarios(small) if small or not args.scenario else []:
        print(f"{scenario.name}: {len(scenario.runs)} runs, {scenario.lines:,} lines", file=sys.stderr, flush=True)
        results.append(run_scenario(scenario, args.repeat))
        print(report(results[-1:], args.repeat, command).splitlines()[-1], file=sys.stderr, flush=True)
        if args.ties:
            tied.append(run_ties(scenario, args.repeat, args.ties))
            print(ties_report(tied[-1:], args.repeat, args.ties).splitlines()[-1], file=sys.stderr, flush=True)
    text = report(results, args.repeat, command) if results else f"Command: `{command}`.\n"
    if large:
        text += large_report(large)
    if columnar:
        text += columnar_report(columnar)
    if tied:
        text += ties_report(tied, args.repeat, args.ties)
    with open(args.output, "w") as handle:
        handle.write(text)
    print(text)


if __name__ == "__main__":
    main()
