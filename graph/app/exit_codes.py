"""`ExitCode`: what a `muster` command returns, and the table `--help` prints.

Like `graph.app.flags`, this module imports nothing but the standard library, so `muster
--help` (which prints the table) answers at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workers.contracts import Answer


class ExitCode(IntEnum):
    """What a `muster` command returns; `--help` prints this table (see also docs/operations.md)."""

    meaning: str
    """One line for the help text."""

    def __new__(cls, value: int, meaning: str) -> ExitCode:
        member = int.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    OK = 0, "the answer is complete (or there was nothing to do)"
    INTERNAL = 1, "an unexpected internal error"
    BAD_INPUT = (
        2,
        "bad input: unknown thread, unreadable database, malformed servers file, unknown model",
    )
    DEGRADED = 3, "the answer is partial or degraded, or a person must pick the ticket up"
    FAILED = 4, "the answer failed"
    WAITING = 5, "the thread waits for a human (an approval or a clarification)"
    DRAINED = (
        6,
        "stopped cleanly by SIGINT/SIGTERM: state is checkpointed, "
        "`muster resume THREAD` continues",
    )
    PROVIDER_AUTH = 7, "the model provider refused the API key (the message says which to fix)"
    PROVIDER_QUOTA = 8, "the model provider says the account's quota is used up"
    UNKNOWN_MODEL = 9, "the model provider does not serve the model --model names"
    PROVIDER_UNREACHABLE = 10, "the model provider's endpoint could not be reached"
    INTERRUPTED = 130, "interrupted (Ctrl-C) before a run could drain"

    @classmethod
    def for_answer(cls, answer: Answer | None, *, waiting: bool) -> ExitCode:
        """The code for a thread's outcome: waiting, failed, degraded or complete."""
        if waiting:
            return cls.WAITING
        if answer is None or answer.status == "failed":
            return cls.FAILED
        return cls.DEGRADED if answer.degraded or answer.needs_human else cls.OK

    @classmethod
    def for_provider(cls, reason: str) -> ExitCode | None:
        """The code for a provider failure that ends a command (its reason), if it has one."""
        return {
            "provider_auth": cls.PROVIDER_AUTH,
            "provider_quota": cls.PROVIDER_QUOTA,
            "unknown_model": cls.UNKNOWN_MODEL,
            "provider_unreachable": cls.PROVIDER_UNREACHABLE,
        }.get(reason)

    @classmethod
    def for_run(cls, values: Mapping[str, Any], *, waiting: bool) -> ExitCode:
        """The code for a thread's state: a provider code when a worker's model was refused
        or could not be reached (the answer and one line name it; fix it and resume), else as
        `for_answer`."""
        failed = {r.packet_id: r.reason for r in values.get("reports") or []}
        if not waiting:
            for reason in failed.values():
                code = cls.for_provider(str(reason))
                if code is not None:
                    return code
        return cls.for_answer(values.get("answer"), waiting=waiting)

    @classmethod
    def help_table(cls) -> str:
        """The table as `--help` shows it."""
        return "Exit codes:\n" + "".join(f"  {code.value}  {code.meaning}\n" for code in cls)
