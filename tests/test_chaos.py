"""Chaos: SIGKILL `muster run`, `muster approve` and `muster batch` at seeded random points,
resume every thread to its end, and find nothing doubled, re-run or refunded twice.

Three trials of `bench/chaos.py` (one per command kind, at once); the benchmark runs thirty
(`python bench/chaos.py --trials 30 --seed 7`, figures in docs/benchmarks.md). Each kill is a seeded
delay after an observed event (the command's first output line, or its first trace line),
every other wait is for an event, with a safety bound only a hang reaches.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/stat").exists(), reason="needs /proc to find the killed CLI's servers"
    ),
    pytest.mark.slow,  # the muster CLI as a subprocess, killed and resumed
    pytest.mark.integration,
]

SEED = 7
"""The seed of the three trials: the same kill points on every run of the suite."""


def load_chaos() -> ModuleType:
    """bench/chaos.py as a module (bench/ is scripts, not a package)."""
    path = PROJECT_ROOT / "bench" / "chaos.py"
    spec = importlib.util.spec_from_file_location("muster_bench_chaos", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_killed_commands_resume_once_each() -> None:
    chaos = load_chaos()  # each trial points every server and store at a folder of its own
    trials = chaos.run_trials(trials=3, seed=SEED, jobs=3)

    assert [t.kind for t in trials] == ["run", "approve", "batch"]
    for trial in trials:
        where = f"trial {trial.index} ({trial.kind}, kill +{trial.delay_s}s): {trial.figures()}"
        assert trial.problems == [], where
        assert trial.completed, where
        assert trial.duplicated_reports == 0, where
        assert trial.rerun_workers == 0, where
        assert trial.unsaved_reruns == 0, f"{where}: the trace called a re-run worker finished"
        assert trial.busy_errors == 0, f"{where}: a dead owner's lease blocked the resume"
        expected = chaos.EXPECTED_REFUNDS[trial.kind]
        assert (trial.refund_rows, trial.over_refunds, trial.missing_refunds) == (
            len(expected),
            0,
            0,
        ), where
        assert trial.orphans == 0, where
        assert trial.leftover_dirs == 0, where
