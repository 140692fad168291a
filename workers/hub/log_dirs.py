"""The hub's temporary folder for server stderr logs, and reaping the ones dead hubs left.

Each hub makes `muster-hub-<pid>-<random>` in the system temp folder and removes it when it
closes. A SIGKILLed process cannot remove its own, so every new hub first removes those whose
pid is no longer alive on this host: a kill leaks at most one folder, until the next start.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from workers.processes import pid_alive

PREFIX = "muster-hub-"
"""Name prefix of every hub log folder."""
_OWNED = re.compile(rf"^{PREFIX}(\d+)-")


def reap_dead_log_dirs(parent: Path | None = None) -> list[Path]:
    """Remove the hub log folders in `parent` (default: the temp folder) whose owner pid is
    dead; return what was removed. Folders without a pid in their name are left alone."""
    base = Path(parent or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _OWNED.match(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or pid_alive(int(match.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def make_log_dir(parent: Path | None = None) -> Path:
    """A new log folder for this process's hub, after reaping dead hubs' folders (blocking:
    call it off the event loop)."""
    reap_dead_log_dirs(parent)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
