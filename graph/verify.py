"""`verify`: check each report's claims against that report's own observations, and find
facts that two reports disagree on.

A claim is a line of a report's note that states an order id, an amount or a date. It must
cite a finding (its id such as `F1`, its tool-call id, or its tool name) and every id,
amount and date in it must appear in a cited observation. Claims that fail are flagged in
`unverified`, and the answer lists them. Fallback reports are exempt (they are already
marked as substitutes), and so are lines that restate the objective or quote a tool error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from graph.recover import current_reports
from graph.services import Services, services_for
from graph.state import MusterState
from workers.contracts import Finding, Report
from workers.tool_names import to_model_name

ORDER_ID = re.compile(r"(?<![\d.$])\d{4,8}(?![\d.])")
AMOUNT = re.compile(r"\$\d[\d,]*(?:\.\d{2})?")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def checkable_tokens(claim: str) -> list[str]:
    """The ids, amounts and dates a claim states (dates first, so their digits are not
    mistaken for ids)."""
    dates = DATE.findall(claim)
    rest = DATE.sub(" ", claim)
    amounts = AMOUNT.findall(rest)
    rest = AMOUNT.sub(" ", rest)
    return dates + amounts + ORDER_ID.findall(rest)


def _supported(token: str, observations: Sequence[str]) -> bool:
    if any(token in text for text in observations):
        return True
    if token.startswith("$"):  # $129.00 may be stored as 12900 cents
        cents = str(round(float(token[1:].replace(",", "")) * 100))
        return any(cents in text for text in observations)
    return False


def cited_findings(claim: str, findings: Sequence[Finding]) -> list[Finding]:
    """The findings a claim cites by finding id, tool-call id or tool name."""
    return [
        f
        for f in findings
        if re.search(rf"\b{re.escape(f.id)}\b", claim)
        or (f.call_id and f.call_id in claim)
        or f.tool in claim
        or to_model_name(f.tool) in claim  # a model cites the name it was offered
    ]


def unsupported_claims(report: Report) -> list[str]:
    """One line per claim in `report.note` that its cited observations do not support."""
    if report.fallback or report.status != "ok" or not report.tool_calls:
        return []  # substitutes are marked already; a tool-less note only restates its packet
    problems = []
    for claim in (line.strip() for line in report.note.splitlines()):
        tokens = checkable_tokens(claim)
        if not tokens or report.objective in claim or "ERROR:" in claim:
            continue  # restating the task or quoting an error is not a claim about the world
        cited = cited_findings(claim, report.findings)
        short = claim if len(claim) <= 120 else claim[:119] + "…"
        if not cited:
            problems.append(f"{report.worker}: claim cites no finding: {short!r}")
            continue
        observations = [f.observation for f in cited]
        missing = [t for t in tokens if not _supported(t, observations)]
        if missing:
            problems.append(
                f"{report.worker}: {', '.join(missing)} in {short!r} appear in no cited observation"
            )
    return problems


def _facts(report: Report) -> dict[tuple[str, str], Any]:
    """Scalar fields of JSON observations that describe one order, keyed (order, field)."""
    facts: dict[tuple[str, str], Any] = {}
    for finding in report.findings:
        try:
            data = json.loads(finding.observation)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and "order_id" in data:
            for key, value in data.items():
                if key != "order_id" and isinstance(value, str | int | float | bool):
                    facts[(str(data["order_id"]), key)] = value
    return facts


def find_conflicts(reports: Sequence[Report]) -> list[str]:
    """Facts that two reports state differently, each with the ruling: a live observation
    beats a fallback, and otherwise the first report that observed it stands. The
    disagreement is always recorded, so no last writer wins silently."""
    seen: dict[tuple[str, str], tuple[Any, Report]] = {}
    conflicts = []
    ordered = sorted(reports, key=lambda r: r.fallback)  # live reports rule first
    for report in ordered:
        for key, value in _facts(report).items():
            if key not in seen:
                seen[key] = (value, report)
                continue
            ruled, source = seen[key]
            if ruled != value:
                why = "live observation over fallback" if report.fallback else "first observation"
                conflicts.append(
                    f"order {key[0]} {key[1]}: {source.worker} says {ruled!r}, "
                    f"{report.worker} says {value!r}; ruled {ruled!r} ({why})"
                )
    return conflicts


async def verify(state: MusterState, runtime: Runtime[Services]) -> dict[str, Any]:
    """Flag unsupported claims and record conflicting facts."""
    reports = list(current_reports(state.get("reports") or []).values())
    unverified = [problem for report in reports for problem in unsupported_claims(report)]
    conflicts = find_conflicts(reports)
    services = await services_for(runtime)
    services.trace_node(
        "verify",
        outcome="flagged" if unverified else "ok",
        unverified=len(unverified),
        conflicts=len(conflicts),
    )
    return {"unverified": unverified, "conflicts": conflicts}
