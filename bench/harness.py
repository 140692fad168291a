"""What the benchmarks share: CPU clocks, a sandbox, /proc, interleaved pairs, CPU phases.

`bench/` is scripts, not a package: a script run as `python bench/X.py` has `bench/` first on
`sys.path` and imports this as `import harness`; one loaded by file (tests/test_chaos.py loads
bench/chaos.py with `spec_from_file_location`) puts `BENCH` on `sys.path` itself first.
Importing this puts the project (`CODE`: this checkout unless `MUSTER_BENCH_CODE` names
another) first on `sys.path`, as every script did on its own, so `python bench/X.py`
measures the checkout it lives in, not the editable install's.

This module imports nothing of Muster's: a script sets its environment (`sandbox`) before it
imports the code that reads it.

- `process_cpu`: user + system CPU seconds of this process and of its reaped children
  (`resource.getrusage`), and `timed` for one command's wall and CPU seconds.
- `store_env` / `sandbox`: a temporary folder that every store, server database, trace and
  call log of a run points into.
- `proc_table`, `descendants`, `children`: processes from /proc (for CPU not reaped yet).
- `pairs` / `apairs`: two measurements run as interleaved pairs (A B A B ...), each pair's
  ratio and their median: a change in the machine's load touches both sides of a pair alike.
- `phase_of`, `Attribution`: where cProfile's CPU goes, by the module a function lives in.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CODE = Path(os.environ.get("MUSTER_BENCH_CODE") or ROOT).resolve()
"""The project code a benchmark imports: this checkout, or another one named by
`MUSTER_BENCH_CODE` (a `--baseline` run of bench/cpu_profile.py: the same script and inputs,
another checkout's code, e.g. `git archive REF | tar -x -C DIR`)."""
if str(CODE) not in sys.path[:1]:
    sys.path.insert(0, str(CODE))

T = TypeVar("T")


def verdict(ok: bool, met: str = "met") -> str:
    """How a target line ends: `met` (or the word given), or MISSED."""
    return met if ok else "MISSED"


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as the benchmarks print them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- CPU ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cpu:
    """User + system CPU seconds: this process (every thread) and its children that ended
    and were waited for (`RUSAGE_CHILDREN`: a child still running counts only once reaped)."""

    own: float
    children: float

    @property
    def total(self) -> float:
        return self.own + self.children

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(self.own - other.own, self.children - other.children)


def process_cpu() -> Cpu:
    """This process's CPU so far (`getrusage`, self and children); subtract two readings."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Cpu(own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime)


def timed(
    argv: list[str], env: Mapping[str, str] | None = None, *, cwd: Path = ROOT
) -> tuple[float, float]:
    """Run `argv` to its end (output dropped, a failure raises): wall seconds and its CPU
    seconds (user + system, the command and the children it reaped)."""
    before = process_cpu()
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    return wall, (process_cpu() - before).children


# --- the sandbox ----------------------------------------------------------------------------


def store_env(root: Path, *, db: Path | None = None) -> dict[str, str]:
    """The variables that point a run's stores into `root`: the orders database, the call
    log, the traces, the default checkpoint file (`db`, else root/default.sqlite) and the
    policy server's mode (healthy)."""
    return {
        "MUSTER_ORDERS_DB": str(root / "orders.sqlite"),
        "MUSTER_CALL_LOG": str(root / "calls.jsonl"),
        "MUSTER_TRACE_DIR": str(root / "traces"),
        "MUSTER_DB": str(db if db is not None else root / "default.sqlite"),
        "MUSTER_POLICY_MODE": "healthy",
    }


def sandbox(prefix: str) -> Path:
    """A fresh temporary folder, with this process's environment pointed into it
    (`store_env`): call it before any server starts or store opens. Kept after the run, for
    a look at what it left (the scripts print where)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(store_env(work))
    return work


def sqlite_file_bytes(db: Path) -> int:
    """Bytes of a SQLite file and its WAL."""
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


# --- processes from /proc -------------------------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Proc:
    pid: int
    comm: str
    ppid: int
    own: float
    """utime + stime, seconds (every thread of the process)."""
    children: float
    """cutime + cstime, seconds (children that ended and were waited for)."""
    started: int
    """starttime, in ticks since boot: tells a pid reused from the one seen before."""


def proc_table() -> dict[int, Proc]:
    """Every process this user can read in /proc, by pid."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:  # it ended meanwhile
            continue
        head, _, tail = text.rpartition(")")
        rest = tail.split()
        table[int(entry)] = Proc(
            pid=int(entry),
            comm=head.partition("(")[2],
            ppid=int(rest[1]),
            own=(int(rest[11]) + int(rest[12])) / TICKS,
            children=(int(rest[13]) + int(rest[14])) / TICKS,
            started=int(rest[19]),
        )
    return table


def descendants(roots: Iterable[int], table: dict[int, Proc]) -> set[int]:
    """The pids below `roots` (not the roots)."""
    kids: dict[int, list[int]] = {}
    for proc in table.values():
        kids.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for kid in kids.get(todo.pop(), []):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def children(pid: int) -> list[int]:
    """The direct children of `pid` (a command's MCP servers)."""
    return [proc.pid for proc in proc_table().values() if proc.ppid == pid]


# --- interleaved pairs ----------------------------------------------------------------------


@dataclass
class Pairs(Generic[T]):
    """Runs of A and B taken as pairs, A then B, and each pair's ratio."""

    a: list[T] = field(default_factory=list)
    b: list[T] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    def summary(self, digits: int = 2) -> str:
        """`median 10.20x of 3 pairs: 10.1, 10.2, 10.4` (ratios in the order they ran)."""
        each = ", ".join(f"{r:.{digits}f}" for r in self.ratios)
        return f"median {self.median:.{digits}f}x of {len(self.ratios)} pairs: {each}"


def pairs(
    a: Callable[[], T],
    b: Callable[[], T],
    n: int,
    *,
    ratio: Callable[[T, T], float],
    each: Callable[[int, T, T, float], None] | None = None,
) -> Pairs[T]:
    """Run A then B, `n` times (A B A B ...); `ratio(a_run, b_run)` of each pair, and
    `each(index, a_run, b_run, ratio)` as each pair ends (to print it)."""
    if n < 1:
        raise ValueError("pairs: n must be at least 1")
    found: Pairs[T] = Pairs()
    for index in range(n):
        first = a()
        second = b()
        _record(found, index, first, second, ratio, each)
    return found


async def apairs(
    a: Callable[[], Awaitable[T]],
    b: Callable[[], Awaitable[T]],
    n: int,
    *,
    ratio: Callable[[T, T], float],
    each: Callable[[int, T, T, float], None] | None = None,
) -> Pairs[T]:
    """`pairs` for coroutines, on the running event loop."""
    if n < 1:
        raise ValueError("apairs: n must be at least 1")
    found: Pairs[T] = Pairs()
    for index in range(n):
        first = await a()
        second = await b()
        _record(found, index, first, second, ratio, each)
    return found


def _record(
    found: Pairs[T],
    index: int,
    first: T,
    second: T,
    ratio: Callable[[T, T], float],
    each: Callable[[int, T, T, float], None] | None,
) -> None:
    value = ratio(first, second)
    found.a.append(first)
    found.b.append(second)
    found.ratios.append(value)
    if each is not None:
        each(index, first, second, value)


# --- where cProfile's CPU goes --------------------------------------------------------------

Func = tuple[str, int, str]
"""A function as pstats names it: (filename, line, name); a builtin's filename is "~"."""

PROJECT = str(CODE) + os.sep
SITE = f"site-packages{os.sep}"

# One table for bench/cpu_profile.py and bench/fleet.py, each of which had its own copy (and
# its own `phase_of`). Patterns: a project path prefix ("@graph/plan.py"), a library path part
# ("langgraph/checkpoint/", matched against "/" + the path under site-packages, so "/mcp/"
# is not "langchain_mcp_adapters/"), or a part of a builtin's name ("msgpack"). The first
# match wins, so the more specific patterns come first. Every phase either copy knew is here;
# where they differed:
# - fleet.py had job queue, thread lease and audit log; cpu_profile.py counted the lease and
#   the audit log as "checkpoint" and had no job queue (it runs in one process).
# - cpu_profile.py's "checkpoint" is split into fleet.py's "checkpoint serializer" and
#   "checkpoint saver"; it also named aiosqlite (saver) and ormsgpack/msgpack (serializer).
# - cpu_profile.py split the project's graph and workers into planning, dispatch and worker
#   loop, model calls, verify, synthesis and trace; fleet.py had one "Muster graph, workers"
#   (kept: what of @graph/ and @workers/ none of those takes) and no "muster, other" (kept:
#   project code of no phase, domains/ and servers/ mostly).
# - fleet.py's "MCP hub and client" is cpu_profile.py's "hub and MCP"; it gains the adapters.
# - fleet.py's "LangGraph pregel, LangChain, pydantic" is split in two: "LangGraph pregel"
#   (cpu_profile.py's "langgraph pregel") and "LangChain, pydantic", which cpu_profile.py
#   left to the callers (a pydantic validation called from workers/loop.py was the worker
#   loop; it is its own phase now). LangChain's model layers stay "model calls".
# - Builtins: fleet.py passed every builtin to its callers; cpu_profile.py also named
#   builtins: "sqlite3." (checkpoint) and "_asyncio.Future" (hub). Those two now go to their
#   callers (fleet.py's rule): a lease's own SQLite statements are the lease's, a future the
#   database driver or the job queue resolves is theirs. Only ormsgpack/msgpack, which
#   nothing but the checkpoint serializer calls, are still named.
# - The leftover: cpu_profile.py's "other (event loop, root)", fleet.py's "event loop, other".
PHASES: list[tuple[str, tuple[str, ...]]] = [
    (
        "job queue (Procrastinate, fleet_worker)",
        (
            "/procrastinate/",
            "@graph/app/fleet_worker.py",
            "@graph/app/fleet_procrastinate.py",
            "@graph/app/fleet_retry.py",
            "@graph/app/fleet_sweep.py",
            "@graph/app/fleet_queue.py",
        ),
    ),
    ("thread lease", ("@checkpoints/lease.py", "@checkpoints/postgres_lease.py")),
    ("audit log", ("@checkpoints/audit.py", "@checkpoints/postgres_audit.py")),
    (
        "planning",
        (
            "@graph/plan.py",
            "@graph/plan_validation.py",
            "@graph/planners/",
            "@graph/facts.py",
            "@domains/support/order_record.py",
            "@domains/support/rules.py",
            "@domains/support/intents.py",
        ),
    ),
    (
        "dispatch and worker loop",
        (
            "@graph/dispatch.py",
            "@workers/loop.py",
            "@workers/worker_run.py",
            "@workers/run_report.py",
            "@workers/packet_prompt.py",
            "@workers/proposals.py",
            "@domains/support/proposals.py",
        ),
    ),
    (
        "model calls",
        ("@workers/models.py", "@workers/local_models.py", "langchain_core/language_models/"),
    ),
    ("MCP hub and client", ("@workers/hub/", "/mcp/", "/anyio/", "langchain_mcp_adapters/")),
    (
        "checkpoint serializer",
        ("langgraph/checkpoint/serde/", "@checkpoints/compression.py", "ormsgpack", "msgpack"),
    ),
    ("checkpoint saver", ("langgraph/checkpoint/", "/aiosqlite/", "@checkpoints/")),
    ("verify", ("@graph/verify.py",)),
    (
        "synthesis",
        (
            "@graph/synthesize.py",
            "@graph/degradation.py",
            "@domains/support/answer.py",
            "@domains/support/resolve.py",
            "@domains/support/facts_read.py",
            "@graph/answer",
        ),
    ),
    ("trace", ("@graph/trace.py",)),
    ("LangGraph pregel", ("/langgraph/",)),
    ("LangChain, pydantic", ("/langchain_core/", "/pydantic")),
    ("Muster graph, workers", ("@graph/", "@workers/")),
    ("muster, other", ("@",)),
]
OTHER = "other (event loop, root)"
"""Time no phase claims on any call path: the event loop itself, the profiler's root."""
PHASE_NAMES = [name for name, _ in PHASES] + [OTHER]
BY_MODULE = ("Muster graph, workers", "muster, other")
"""The project's catch-all phases: `phase_of(..., modules=True)` names their module too."""
MODULE_SEP = " | "


def _where(func: Func) -> str | None:
    """Where `func` lives, as the patterns of `PHASES` read it, or None (the stdlib)."""
    filename, _, name = func
    if SITE in filename:  # first: the virtualenv may live inside the project
        return "/" + filename.split(SITE, 1)[1].replace(os.sep, "/")
    if filename.startswith(PROJECT):
        return "@" + filename[len(PROJECT) :].replace(os.sep, "/")
    if filename == "~":
        return name  # a builtin: "<method 'packb' of 'ormsgpack' objects>"
    return None  # the standard library: asyncio, json, re, ...


def phase_of(func: Func, *, modules: bool = False) -> str | None:
    """The phase a function belongs to by where it lives, or None (it takes its callers').
    `modules`: a catch-all phase (`BY_MODULE`) comes as "phase | module/path.py"."""
    where = _where(func)
    if where is None:
        return None
    for phase, patterns in PHASES:
        for pattern in patterns:
            if where.startswith(pattern) if pattern.startswith("@") else pattern in where:
                if modules and phase in BY_MODULE:
                    return f"{phase}{MODULE_SEP}{where[1:]}"
                return phase
    return None


def split_label(label: str) -> tuple[str, str | None]:
    """(phase, module or None) of a label `phase_of(..., modules=True)` gave."""
    phase, _, module = label.partition(MODULE_SEP)
    return phase, module or None


def short(func: Func) -> str:
    """A function's name for a table: under site-packages, the project, or stdlib/."""
    filename, line, name = func
    if SITE in filename:
        filename = filename.split(SITE, 1)[1]
    elif filename.startswith(PROJECT):
        filename = filename[len(PROJECT) :]
    elif filename != "~":
        filename = "stdlib/" + Path(filename).name
    return name if filename == "~" else f"{filename}:{line}({name})"


class Attribution:
    """Own time of every function, passed up the call graph to the innermost phase.

    A function of no phase (a library helper, the standard library, a builtin) passes its
    time to its callers in proportion to what each caller spent in it, until it reaches a
    function that has one: json.loads called from domains/support/facts_read.py is
    synthesis, psycopg called by the saver is the saver's and by the lease the lease's. A
    coroutine is called by whatever resumed it, so a node's own time lands in its own module;
    what no phase claims on any path is `OTHER`. `modules`: see `phase_of`."""

    def __init__(self, stats: Any, *, modules: bool = False) -> None:
        self.stats: dict[Func, Any] = stats.stats
        self.modules = modules
        self._inclusive: dict[Func, dict[str, float]] = {}
        self._busy: set[Func] = set()

    def _phase(self, func: Func) -> str | None:
        return phase_of(func, modules=self.modules)

    def inclusive(self, func: Func) -> dict[str, float]:
        """Where time spent inside `func` belongs: {phase: fraction}."""
        own = self._phase(func)
        if own is not None:
            return {own: 1.0}
        if func in self._inclusive:
            return self._inclusive[func]
        if func in self._busy:  # recursion: the outer call decides
            return {}
        self._busy.add(func)
        callers = self.stats[func][4] if func in self.stats else {}
        share = self._split(callers, index=3)
        self._busy.discard(func)
        self._inclusive[func] = share
        return share

    def _split(self, callers: dict[Func, tuple[Any, ...]], *, index: int) -> dict[str, float]:
        total = sum(edge[index] for edge in callers.values())
        if total <= 0:
            return {OTHER: 1.0}
        share: dict[str, float] = defaultdict(float)
        for caller, edge in callers.items():
            weight = edge[index] / total
            for phase, fraction in self.inclusive(caller).items():
                share[phase] += weight * fraction
        spread = sum(share.values())
        if spread <= 0:
            return {OTHER: 1.0}
        return {phase: value / spread for phase, value in share.items()}

    def phases(self) -> tuple[dict[str, float], dict[Func, tuple[str, float]]]:
        """Seconds of own time per phase, and each function's own time with its main phase."""
        totals: dict[str, float] = defaultdict(float)
        per_function: dict[Func, tuple[str, float]] = {}
        for func, (_, _, own_s, _, callers) in self.stats.items():
            phase = self._phase(func)
            share = {phase: 1.0} if phase is not None else self._split(callers, index=2)
            for name, fraction in share.items():
                totals[name] += own_s * fraction
            main = max(share.items(), key=lambda item: item[1])[0]
            per_function[func] = (main, own_s)
        return dict(totals), per_function

    def shares(self) -> dict[str, float]:
        """Each phase's share of the profiled time (module labels folded into their phase;
        with `modules`, each "phase | module" label is kept beside it too)."""
        totals, _ = self.phases()
        whole = sum(totals.values()) or 1.0
        found: dict[str, float] = defaultdict(float)
        for label, seconds in totals.items():
            phase, module = split_label(label)
            found[phase] += seconds / whole
            if module is not None:
                found[label] += seconds / whole
        return dict(found)
