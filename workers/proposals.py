"""Proposed actions: what a worker may ask the graph to do, and the review every proposal
passes before a human ever sees it.

Deny by default: a tool with no rule here cannot be proposed. The rules are a domain's: a
pack registers them when it loads (`PROPOSAL_RULES` in its plug-in, graph/domains.py calls
`register_proposal_rule`; support's refund and cancellation rules are in
`domains/support/proposals.py`, incidents' rollback rule in its plug-in). Every place that
builds a run's `Services` loads its roster's pack first, so a resumed thread's proposals
meet the same rules as a fresh run's. Workers never import a pack: they see only this
registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from workers.contracts import Finding, Handoff, ProposedAction, canonical_json

ProposalRule = Callable[[ProposedAction, Handoff, Sequence[Finding]], str | None]
"""Why a proposal of a tool is refused, or None when it may go to a human."""
Suggester = Callable[[Handoff, Sequence[Finding]], list[ProposedAction]]
"""A domain's rule for what to propose from a packet and its findings (reviewed like any
proposal)."""
Binder = Callable[[ProposedAction, Sequence[Finding]], ProposedAction]
"""A passed proposal as it goes to a human: its arguments normalised and bound to the state
the worker observed (support's refund: `expected_refunded_cents`)."""


class ProposalRules(NamedTuple):
    """What a domain says about one write tool (a pack's `PROPOSAL_RULES` values; a plain
    `(check, suggest)` pair is one too)."""

    check: ProposalRule
    """Reviews every proposal of the tool."""
    suggest: Suggester | None = None
    """Proposes the tool from a worker's findings, if the domain does."""
    bind: Binder | None = None
    """Normalises a passed proposal and binds it to the observed state."""
    state_args: Iterable[str] = ()
    """Arguments `bind` adds that bind the state the approver saw rather than say what is
    done (left out by `decided_args`)."""


RULES: dict[str, ProposalRule] = {}
"""The tools that can be proposed at all, each with its check."""
SUGGESTERS: dict[str, Suggester] = {}
"""What each domain proposes on its own, by tool."""
BINDERS: dict[str, Binder] = {}
"""How a passed proposal of a tool is normalised, by tool."""
STATE_BINDING_ARGS: set[str] = set()
"""Arguments that bind the state the approver saw rather than say what is done."""


def register_proposal_rule(
    tool: str,
    check: ProposalRule,
    suggest: Suggester | None = None,
    bind: Binder | None = None,
    state_args: Iterable[str] = (),
) -> None:
    """Let a domain pack make `tool` proposable: `check` reviews every proposal of it,
    `suggest`, if given, proposes it from a worker's findings, and `bind` normalises one that
    passed (graph/domains.py calls this when it loads a pack). Registering a tool again
    replaces its rule."""
    RULES[tool] = check
    if suggest is not None:
        SUGGESTERS[tool] = suggest
    if bind is not None:
        BINDERS[tool] = bind
    STATE_BINDING_ARGS.update(state_args)


def decided_args(args: dict[str, Any]) -> dict[str, Any]:
    """What an action does (tool arguments without the state binding), e.g. for scoring."""
    return {k: v for k, v in args.items() if k not in STATE_BINDING_ARGS}


def review_proposal(
    action: ProposedAction, packet: Handoff, findings: Sequence[Finding], allowed: Sequence[str]
) -> ProposedAction | str:
    """The normalised action when it passes, else why it was refused."""
    if action.tool not in allowed:
        return f"{packet.recipient} may not propose {action.tool}"
    rule = RULES.get(action.tool)
    if rule is None:
        return f"{action.tool} has no proposal rule; it cannot be proposed"
    problem = rule(action, packet, findings)
    if problem is not None:
        return problem
    reviewed = action.model_copy(update={"proposed_by": packet.recipient})
    bind = BINDERS.get(action.tool)
    return bind(reviewed, findings) if bind is not None else reviewed


class Reviewed(NamedTuple):
    """The outcome of reviewing a worker's proposals."""

    accepted: list[ProposedAction]
    """What may go to a human, normalised, each digest once."""
    rejected: list[str]
    """One line per refused proposal: the action and why, for the report's note."""


def suggested_actions(
    packet: Handoff, findings: Sequence[Finding], allowed: Sequence[str]
) -> list[ProposedAction]:
    """What the domains' rules propose for the tools the worker may propose (each rule
    asked once, in the order the packs registered them)."""
    suggesters: list[Suggester] = []
    for tool, suggest in SUGGESTERS.items():
        if tool in allowed and suggest not in suggesters:
            suggesters.append(suggest)
    return [a for suggest in suggesters for a in suggest(packet, findings) if a.tool in allowed]


def review_proposals(
    proposed: Sequence[ProposedAction],
    packet: Handoff,
    findings: Sequence[Finding],
    allowed: Sequence[str],
) -> Reviewed:
    """Review what the model proposed plus what the domain's rules suggest (for the tools
    the worker may propose), so a model that forgets to propose still gets a checked
    refund or rollback."""
    accepted: list[ProposedAction] = []
    rejected: list[str] = []
    for action in [*proposed, *suggested_actions(packet, findings, allowed)]:
        reviewed = review_proposal(action, packet, findings, allowed)
        if isinstance(reviewed, str):
            rejected.append(f"{action.tool}({canonical_json(action.args)}): {reviewed}")
        elif reviewed.short_digest() not in {p.short_digest() for p in accepted}:
            accepted.append(reviewed)
    return Reviewed(accepted, rejected)
