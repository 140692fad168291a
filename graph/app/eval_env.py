"""An eval run's environment: fresh databases for what the pack's servers write, and the
environment its labels assume, restored afterwards (one helper for `muster eval` on any pack:
graph/app/eval_dataset.py and graph/app/eval_domain.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def isolated_environment(
    workdir: Path, *, databases: Sequence[str] = (), pinned: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Point each database variable the servers read (`databases`, a pack's `EVAL_DATABASES`)
    at a fresh file in `workdir` and set `pinned` (a pack's `EVAL_ENV`); restore the
    environment afterwards. The call log is switched off so evals never append to the user's."""
    wanted: dict[str, str | None] = {
        **{name: str(workdir / f"{name.lower()}.sqlite") for name in databases},
        **(pinned or {}),
        "MUSTER_CALL_LOG": None,
    }
    saved = {name: os.environ.get(name) for name in wanted}
    try:
        _set_environment(wanted)
        yield
    finally:
        _set_environment(saved)


def _set_environment(values: Mapping[str, str | None]) -> None:
    """Set each variable; None unsets it."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
