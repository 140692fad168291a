"""Which code, pack and state schema a thread started on, and what a resume under others does.

A thread paused for an approval may resume days later under newly deployed code, a changed
pack (another policy table, another roster) or a state schema with new fields. `plan` records
the versions the thread starts on (`MusterState.versions`); a resume compares them with the
running ones (`changed_versions`) and, by `MUSTER_VERSION_POLICY`, warns (the default: one
line saying what changed, then it resumes) or refuses (`refuse`: a `MusterError`, exit 2,
unless `MUSTER_VERSION_POLICY=force` for that one command).

- code: Muster's package version (`importlib.metadata`);
- pack: the pack's name and a digest of its files that shape a run (manifest, roster,
  servers file, planner table, plug-in);
- schema: `STATE_SCHEMA_VERSION`, raised whenever a state field changes meaning.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from typing import Any

from workers.errors import MusterError

STATE_SCHEMA_VERSION = 3
"""The state's schema: 3 since `effects`, `handoffs`, `domain` and `versions` (2026-12-02)."""
POLICY_ENV = "MUSTER_VERSION_POLICY"
PACK_FILES = ("domain.json", "roster.json", "servers.json", "planner.json", "plugin.py")


def code_version() -> str:
    """Muster's installed package version."""
    try:
        return metadata.version("muster")
    except metadata.PackageNotFoundError:
        return "unknown"


@cache
def pack_version(folder: str, name: str) -> str:
    """`name@<digest of the pack's run-shaping files>`."""
    digest = hashlib.sha256()
    for file in PACK_FILES:
        path = os.path.join(folder, file)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                digest.update(file.encode() + b"\0" + handle.read())
    return f"{name}@{digest.hexdigest()[:12]}"


def current_versions(folder: str, name: str) -> dict[str, Any]:
    """The versions a thread starting now records."""
    return {
        "code": code_version(),
        "pack": pack_version(folder, name),
        "schema": STATE_SCHEMA_VERSION,
    }


def changed_versions(recorded: Mapping[str, Any] | None, now: Mapping[str, Any]) -> list[str]:
    """What differs between a thread's recorded versions and the running ones, in words
    (a thread from before versions were recorded: nothing can be compared, nothing said)."""
    if not recorded:
        return []
    return [
        f"{key} {recorded.get(key)} -> {now.get(key)}"
        for key in ("code", "pack", "schema")
        if recorded.get(key) != now.get(key)
    ]


def resume_check(thread_id: str, changes: list[str]) -> str | None:
    """The warning line for a resume under other versions, or raise under `refuse`."""
    if not changes:
        return None
    policy = os.environ.get(POLICY_ENV, "warn")
    what = "; ".join(changes)
    if policy == "refuse":
        raise MusterError(
            f"thread {thread_id} started on other versions ({what}); refusing to resume it "
            f"({POLICY_ENV}=refuse; {POLICY_ENV}=force resumes it anyway)"
        )
    return f"note: thread {thread_id} started on other versions ({what}); resuming under these"
