"""Who may decide on a proposed action, and what a decision needs: approvers and limits as data.

`approvers.json` (next to this module; `MUSTER_APPROVERS` names another file) lists the people
who may answer an approval interrupt, with their roles, and the limits taken from policy: an
action above a limit's threshold needs the role the limit names ("Refunds above $500 need a
team lead", POL-REF-001). The graph's `approve` node checks every resume value with
`check_decision`, so Studio, the notebook and the CLI are held to the same rules; the CLI runs
the same checks first only to fail before anything starts.

A resume value that fails a check is a `Refusal`, not a decision: the action stays pending.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from workers.errors import ConfigError

APPROVERS_ENV = "MUSTER_APPROVERS"
"""Names an approvers file to use instead of the shipped one."""

DEFAULT_APPROVERS_FILE = Path(__file__).resolve().parent / "approvers.json"
"""The approvers and limits shipped with Muster."""

MIN_DIGEST_PREFIX = 8
"""A digest given by hand must carry at least this many hex characters."""

_HEX = re.compile(r"[0-9a-f]+")


class Approver(BaseModel):
    """One person who may answer approval interrupts."""

    roles: tuple[str, ...] = Field(min_length=1)
    """What they may do, e.g. `agent`, `team_lead`; the first is the role a decision is
    recorded under when no limit asks for another."""


class Limit(BaseModel):
    """A policy limit: above `above`, the action needs `role`; a limit without `arg` holds
    for every call of its tool (an incident rollback needs an on-call engineer)."""

    policy: str
    """The policy it comes from, e.g. `POL-REF-001`."""
    rule: str
    """The policy's sentence, quoted in every refusal."""
    tool: str
    """The write tool it applies to, e.g. `orders.issue_refund`."""
    arg: str | None = None
    """The argument that is compared, e.g. `amount_cents`; None: every call."""
    above: int = 0
    """The threshold: a value strictly above it needs `role`."""
    role: str
    """The role an approver needs above the threshold."""

    def applies(self, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether this action is over the limit. A value that is not a number counts as over:
        what cannot be compared needs the stricter role."""
        if tool != self.tool:
            return False
        if self.arg is None:
            return True
        if self.arg not in args:
            return False
        value = args[self.arg]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        return value > self.above


class Edit(BaseModel):
    """An argument an approver may change when approving: lowered, never raised above what
    was proposed nor below `at_least` (a partial refund, not a larger one)."""

    tool: str
    arg: str
    rule: str
    """The policy's sentence, quoted when an edit is refused."""
    at_least: int = 1


class ApproverConfig(BaseModel):
    """Every approver, by name, and the limits their decisions are held to."""

    approvers: dict[str, Approver]
    """Approvers keyed by the name a decision's `by` carries."""
    limits: tuple[Limit, ...] = ()
    """Policy limits, checked on every approval."""
    edits: tuple[Edit, ...] = ()
    """The arguments an approval may change, and how far."""

    def edits_for(self, tool: str) -> list[Edit]:
        """The arguments of `tool` an approver may edit."""
        return [edit for edit in self.edits if edit.tool == tool]

    def edit_problem(
        self, tool: str, proposed: Mapping[str, Any], edited: Mapping[str, Any]
    ) -> str | None:
        """Why `edited` may not replace the `proposed` arguments, or None: the same
        arguments, and only those an `Edit` allows changed, each a whole number from its
        `at_least` up to the proposed value."""
        if set(edited) != set(proposed):
            return (
                f"edited arguments must keep the proposed ones ({', '.join(sorted(proposed))}); "
                "only their values may change"
            )
        allowed = {edit.arg: edit for edit in self.edits_for(tool)}
        for arg, value in edited.items():
            if value == proposed[arg] and type(value) is type(proposed[arg]):
                continue
            edit = allowed.get(arg)
            if edit is None:
                editable = ", ".join(sorted(allowed)) or "none"
                return f"{tool}'s {arg} may not be edited (editable: {editable})"
            was = proposed[arg]
            if isinstance(value, bool) or not isinstance(value, int) or isinstance(was, bool):
                return f"{arg} must be a whole number, not {value!r}"
            if not isinstance(was, int) or not edit.at_least <= value <= was:
                return f"{arg} {value} is outside {edit.at_least}..{was}: {edit.rule}"
        return None

    def names(self) -> str:
        """The known approvers, for error messages."""
        return ", ".join(sorted(self.approvers)) or "(none)"

    def holders(self, role: str) -> list[str]:
        """The approvers who hold `role`."""
        return sorted(name for name, a in self.approvers.items() if role in a.roles)

    def limits_for(self, tool: str, args: Mapping[str, Any]) -> list[Limit]:
        """The limits this action is over."""
        return [limit for limit in self.limits if limit.applies(tool, args)]

    def unknown_approver(self, by: str) -> str | None:
        """Why `by` may not decide, or None when it names a known approver."""
        if by in self.approvers:
            return None
        return f"{by!r} is not a known approver (known: {self.names()})"

    def role_problem(self, by: str, tool: str, args: Mapping[str, Any]) -> str | None:
        """Why `by` may not approve this action, or None when every limit is met."""
        approver = self.approvers[by]
        for limit in self.limits_for(tool, args):
            if limit.role not in approver.roles:
                who = ", ".join(self.holders(limit.role)) or "nobody; fix the approvers file"
                over = (
                    f"{limit.arg} {args[limit.arg]} is above {limit.above}"
                    if limit.arg is not None
                    else f"every {tool}"
                )
                return (
                    f"{by} ({', '.join(approver.roles)}) may not approve this: {limit.rule} "
                    f"({limit.policy}: {over}); "
                    f"it needs an approver with role {limit.role} ({who})"
                )
        return None

    def role_for(self, by: str, tool: str, args: Mapping[str, Any], *, approved: bool) -> str:
        """The role a decision is recorded under: the role the limits asked for when `by`
        approved an action over them, else `by`'s first role."""
        if approved:
            needed = [limit.role for limit in self.limits_for(tool, args)]
            if needed:
                return ",".join(dict.fromkeys(needed))
        return self.approvers[by].roles[0]


def approvers_path(given: str | Path | None = None) -> Path:
    """The approvers file: `given`, else `MUSTER_APPROVERS`, else the shipped one."""
    return Path(given or os.environ.get(APPROVERS_ENV) or DEFAULT_APPROVERS_FILE).expanduser()


def load_approvers(path: str | Path | None = None) -> ApproverConfig:
    """Read and validate an approvers file; a `ConfigError` says what is wrong. Reads a file:
    call it off the event loop where blocking matters (the graph's nodes under Studio)."""
    path = approvers_path(path)
    try:
        config = ApproverConfig.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        raise ConfigError(
            f"approvers file {path} does not exist; set {APPROVERS_ENV} to one that does"
        ) from None
    except (json.JSONDecodeError, ValidationError) as error:
        first = str(error).splitlines()[0]
        raise ConfigError(f"approvers file {path} is malformed: {first}") from None
    for limit in config.limits:
        if not config.holders(limit.role):
            raise ConfigError(
                f"approvers file {path}: limit {limit.policy} needs role {limit.role!r}, "
                "which no approver holds"
            )
    return config


def digest_prefix_problem(given: object) -> str | None:
    """Why `given` cannot name a digest, or None when it is at least `MIN_DIGEST_PREFIX` hex
    characters."""
    if not isinstance(given, str) or not given.strip():
        return (
            "the decision carries no digest; give the pending approval's digest "
            f"(at least {MIN_DIGEST_PREFIX} hex characters)"
        )
    text = given.strip().lower()
    if not _HEX.fullmatch(text):
        return f"digest {given[:20]!r} is not hex; copy it from the pending approval"
    if len(text) < MIN_DIGEST_PREFIX:
        return (
            f"digest {given!r} is too short: give at least {MIN_DIGEST_PREFIX} hex characters "
            "of the pending approval's digest"
        )
    return None


def digest_problem(given: object, digest: str) -> str | None:
    """Why `given` does not name `digest`, or None when it is the digest or a prefix of at
    least `MIN_DIGEST_PREFIX` hex characters."""
    problem = digest_prefix_problem(given)
    if problem is not None or not isinstance(given, str):
        return problem
    text = given.strip().lower()
    if not digest.startswith(text):
        return (
            f"the pending action's digest {digest[:16]}… does not start with {text[:16]!r}: "
            "the approval does not match this action (digest mismatch)"
        )
    return None


def _digest_problem(given: object, digest: str, earlier: Sequence[str]) -> str | None:
    """`digest_problem` against `digest`, unless `given` names one of the `earlier` ones."""
    if any(digest_problem(given, other) is None for other in earlier):
        return None
    return digest_problem(given, digest)


@dataclass(frozen=True)
class Decision:
    """A resume value that holds: who decided what, under which role."""

    decision: Literal["approved", "rejected"]
    """What the human decided."""
    by: str
    """The approver's name."""
    role: str
    """The role the decision was made under."""
    note: str
    """The human's note."""
    args: dict[str, Any] | None = None
    """The arguments approved when the approver edited them (within `ApproverConfig.edits`),
    else None: the action runs as proposed."""


@dataclass(frozen=True)
class Refusal:
    """A resume value that is not a decision: the action stays pending."""

    error: str
    """Why, in one line, with what to do next."""
    by: str
    """Who sent it, as the value said (`unknown` when it did not say)."""
    approved: bool | None
    """What it asked for, when it said."""


def check_decision(
    value: object,
    *,
    digest: str,
    tool: str,
    args: Mapping[str, Any],
    config: ApproverConfig,
    earlier: Sequence[str] = (),
) -> Decision | Refusal:
    """A human's resume value `{"approved": bool, "digest": str, "by": str, "note": str}`
    (and, for an approval with edited arguments, `"args": {...}`) checked against the
    pending action: a known approver, the action's digest, for edited arguments the edits
    the approvers file allows, and for an approval the roles its limits need on the
    arguments that will run. Any approver may reject.

    `earlier`: other digests the same action was shown under, an older Muster's for
    arguments with non-ASCII text (`servers.digests.legacy_action_digest`); a decision that
    names one of them names this action."""
    if not isinstance(value, dict):
        return Refusal(
            error=f'unreadable decision {value!r}; resume with {{"approved": true|false, '
            '"digest": "...", "by": "<approver>", "note": "..."}',
            by="unknown",
            approved=None,
        )
    by = str(value.get("by") or "unknown")
    approved = value.get("approved")
    if not isinstance(approved, bool):
        return Refusal(
            error=f'"approved" must be true or false, not {approved!r}', by=by, approved=None
        )
    edited = value.get("args") if approved else None
    if edited is not None and not isinstance(edited, dict):
        return Refusal(error=f'"args" must be an object, not {edited!r}', by=by, approved=True)
    runs = edited if edited is not None else args
    problem = (
        config.unknown_approver(by)
        or _digest_problem(value.get("digest"), digest, earlier)
        or (config.edit_problem(tool, args, edited) if edited is not None else None)
        or (config.role_problem(by, tool, runs) if approved else None)
    )
    if problem:
        return Refusal(error=problem, by=by, approved=approved)
    note = str(value.get("note") or "")
    return Decision(
        decision="approved" if approved else "rejected",
        by=by,
        role=config.role_for(by, tool, runs, approved=approved),
        note=note if note or approved else "rejected by a human",
        args=dict(edited) if edited is not None and dict(edited) != dict(args) else None,
    )
