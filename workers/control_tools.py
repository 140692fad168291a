"""Control tools: how a worker's model says something other than "call an MCP tool".

They are bound next to the worker's MCP tools but never reach the hub; the worker loop
handles them. Their names carry no dot, so they cannot collide with a hub tool, whose names
are always `server.tool`.

- `ask_clarification(question)`: the packet is ambiguous → `Report.reason == "ambiguous"`.
- `decline_task(reason)`: the worker will not do this → `Report.reason == "refused"`.
- `propose_action(tool, args, reason)`: ask the graph to perform a write after human
  approval (only offered to workers whose roster entry lists what they may propose).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field

from workers.contracts import ProposedAction

ASK_CLARIFICATION = "ask_clarification"
DECLINE_TASK = "decline_task"
PROPOSE_ACTION = "propose_action"
CONTROL_TOOL_NAMES = frozenset({ASK_CLARIFICATION, DECLINE_TASK, PROPOSE_ACTION})


class _Question(BaseModel):
    question: str = Field(description="One clear question for the human, naming what is missing.")


class _Decline(BaseModel):
    reason: str = Field(description="Why this task should not be done by you.")


class _Proposal(BaseModel):
    tool: str = Field(description="Qualified name of the write tool, e.g. orders.issue_refund.")
    args: dict[str, Any] = Field(description="The action's arguments.")
    reason: str = Field(description="The evidence for the action, citing findings.")


def _not_executable(**_: Any) -> str:
    # The worker loop intercepts these calls before any tool runs; reaching here is a bug.
    raise RuntimeError("control tools are handled by the worker loop")


@cache
def control_tool_schemas(*, can_propose: bool) -> tuple[dict[str, Any], ...]:
    """The control tools as OpenAI-format function schemas, built once: converting the
    pydantic argument models costs about a millisecond per worker otherwise."""
    return tuple(convert_to_openai_tool(tool) for tool in control_tools(can_propose=can_propose))


def control_tools(*, can_propose: bool) -> list[BaseTool]:
    """The control tools a worker's model is offered."""
    tools: list[BaseTool] = [
        StructuredTool.from_function(
            func=_not_executable,
            name=ASK_CLARIFICATION,
            args_schema=_Question,
            description="Ask the human a clarifying question when the packet lacks a fact "
            "you need (for example, which order). Ends your turn.",
        ),
        StructuredTool.from_function(
            func=_not_executable,
            name=DECLINE_TASK,
            args_schema=_Decline,
            description="Decline a task you must not or cannot do. Ends your turn.",
        ),
    ]
    if can_propose:
        tools.append(
            StructuredTool.from_function(
                func=_not_executable,
                name=PROPOSE_ACTION,
                args_schema=_Proposal,
                description="Propose a side effect (such as a refund) for a human to approve. "
                "You cannot perform it yourself.",
            )
        )
    return tools


@dataclass(frozen=True)
class ControlStop:
    """A control call that ends the worker's run, as the report's failure reason and note."""

    reason: Literal["ambiguous", "refused"]
    """`ambiguous` for a clarifying question, `refused` for a declined task."""
    note: str
    """The question for the human, or why the task was declined."""


def read_control_call(call: ToolCall) -> ControlStop | ProposedAction:
    """What a control call (one named in `CONTROL_TOOL_NAMES`) means, as a value the worker
    loop acts on: a question or a refusal stops the run; a proposal goes to review."""
    args = call["args"]
    if call["name"] == ASK_CLARIFICATION:
        return ControlStop("ambiguous", str(args.get("question", "")))
    if call["name"] == DECLINE_TASK:
        return ControlStop("refused", str(args.get("reason", "")))
    return ProposedAction(
        tool=str(args.get("tool", "")),
        args=dict(args.get("args") or {}),
        reason=str(args.get("reason", "")),
    )
