"""How a lifecycle case is scored: the servers' data before and after, the final answer and
the stops."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graph.app.eval_lifecycle_cases import Drive, LifecycleCase
from graph.state import latest_actions
from workers.contracts import ActionRecord, Answer

# --- the servers' data ----------------------------------------------------------------------

Tables = dict[str, list[dict[str, Any]]]
"""Every row of every table of one database, by table."""


def read_tables(path: Path) -> Tables:
    """Every user table of a SQLite file (read-only), or nothing if there is no file."""
    if not path.is_file():
        return {}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        conn.row_factory = sqlite3.Row
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            name: [dict(row) for row in conn.execute(f'SELECT * FROM "{name}"')]
            for name in sorted(names)
        }
    finally:
        conn.close()


def _frozen(row: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), json.dumps(v, default=str)) for k, v in row.items()))


def _difference(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows added, rows removed) between two readings of a table, as multisets."""
    old, new = Counter(_frozen(r) for r in before), Counter(_frozen(r) for r in after)
    added = [r for r in after if new[_frozen(r)] > old[_frozen(r)]]
    removed = [r for r in before if old[_frozen(r)] > new[_frozen(r)]]
    return added, removed


def _row_text(row: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(row.items())) + "}"


def score_data(
    before: Mapping[str, Tables], after: Mapping[str, Tables], labelled: Tables
) -> tuple[bool, str, str]:
    """Compare the rows the thread added with the labelled ones, table by table (all
    databases together). A labelled table may lose a row only to an update in place (a row
    added with the same first column); any other table must be unchanged."""
    added: dict[str, list[dict[str, Any]]] = {}
    removed: dict[str, list[dict[str, Any]]] = {}
    for database, tables in after.items():
        for table in sorted(set(tables) | set(before.get(database, {}))):
            earlier = before.get(database, {}).get(table, [])
            plus, minus = _difference(earlier, tables.get(table, []))
            if plus:
                added.setdefault(table, []).extend(plus)
            if minus:
                removed.setdefault(table, []).extend(minus)
    problems: list[str] = []
    got_parts: list[str] = []
    for table in sorted(set(added) | set(removed) | set(labelled)):
        want = labelled.get(table)
        rows = added.get(table, [])
        if want is None:
            problems.append(table)
            got_parts.append(f"{table}: {len(rows)} added, {len(removed.get(table, []))} removed")
            continue
        columns = sorted({key for row in want for key in row})
        projected = [{c: row.get(c) for c in columns} for row in rows] if columns else rows
        shown = "; ".join(_row_text(r) for r in projected) or "(none)"
        got_parts.append(f"{table}: {shown}")
        wanted = Counter(_frozen({c: row.get(c) for c in columns}) for row in want)
        if Counter(_frozen(r) for r in projected) != wanted:
            problems.append(table)
            continue
        keys = {next(iter(r.values()), None) for r in rows}
        if any(next(iter(r.values()), None) not in keys for r in removed.get(table, [])):
            problems.append(table)
    expected = (
        "; ".join(
            f"{t}: {'; '.join(_row_text(r) for r in rows) or '(none)'}"
            for t, rows in sorted(labelled.items())
        )
        or "no change"
    )
    return not problems, expected, "; ".join(got_parts) or "no change"


# --- the final answer ------------------------------------------------------------------------


def args_text(args: Mapping[str, Any]) -> str:
    """A proposal's arguments as the stops and misses show them: `k=v, ...`, sorted."""
    return ", ".join(f"{k}={v}" for k, v in sorted(args.items()))


def _agrees(status: str, approval: str | None) -> bool:
    """Whether a step's approval wording agrees with its action record's status."""
    said = (approval or "").lower()
    if status in ("executed", "rejected", "refused", "failed"):
        return said.startswith(status)
    if status == "held":
        return bool(said) and not said.startswith(("pending", "executed"))
    return False  # approved and never executed, or still pending, at a thread's end


def score_answer(
    values: Mapping[str, Any],
    case: LifecycleCase,
    drive: Drive,
) -> tuple[bool, str, str]:
    """Does the final answer agree with every decided action, and with the labels?"""
    final = case.final
    expected = f"done, {final.status}, needs_human={str(final.needs_human).lower()}"
    answer = values.get("answer")
    if not drive.finished or not isinstance(answer, Answer):
        return False, expected, drive.error or "the thread did not reach its end"
    problems: list[str] = []
    if answer.status != final.status:
        problems.append(f"status {answer.status}")
    if answer.needs_human != final.needs_human:
        problems.append(f"needs_human={str(answer.needs_human).lower()}")
    steps = [s for s in answer.resolution if s.kind == "action"]
    records: list[ActionRecord] = list(latest_actions(values).values())  # type: ignore[arg-type]
    for record in records:
        named = [s for s in steps if s.tool == record.tool and s.args == record.args]
        what = f"{record.tool}({args_text(record.args)})"
        if len(named) != 1:
            problems.append(f"{what} named {len(named)} times")
        elif not _agrees(record.status, named[0].approval):
            problems.append(f"{what} {record.status} but the answer says {named[0].approval!r}")
        label = next(
            (d for d in case.answers.approvals if d.matches(record.tool, record.args)), None
        )
        if label is not None and record.status != label.expected:
            problems.append(f"{what} {record.status}, labelled {label.expected}")
    for step in steps:
        if not any(r.tool == step.tool and r.args == step.args for r in records):
            problems.append(f"{step.tool}({args_text(step.args)}) {step.approval} never decided")
    text = answer.text
    problems += [f"does not say {p!r}" for p in final.answer_says if p not in text]
    problems += [f"says {p!r}" for p in final.answer_lacks if p in text]
    got = f"done, {answer.status}, needs_human={str(answer.needs_human).lower()}"
    return not problems, expected, got + (f" ({'; '.join(problems)})" if problems else "")


def score_stops(case: LifecycleCase, drive: Drive) -> tuple[bool, str, str]:
    labelled = [f"{d.decision} {d.tool}({args_text(d.args)})" for d in case.answers.approvals] + [
        f"clarify {reply!r}" for reply in case.answers.clarifications
    ]
    wrong = drive.unexpected + [f"unused: {u}" for u in drive.unused]
    got = "; ".join(drive.stops) or "(no stop)"
    if wrong:
        got += f" ({'; '.join(wrong)})"
    return not wrong, "; ".join(labelled) or "(no stop)", got
