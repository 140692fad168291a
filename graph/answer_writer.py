"""A provider model writes the answer's prose; code checks every claim before it is kept.

With a real model (not Muster's offline or scripted ones), `synthesize` asks it, through
structured output (`AnswerDraft`), for the summary and the reply to the customer, from the
reports only: the findings with their citations, the workers' conclusions, and the
resolution steps code already decided (actions, approval states, open points stay code's:
a model never decides what is done with money). Then the same checks `verify` applies to a
worker's note apply here (`graph.verify.is_supported`): a summary claim must cite findings
that exist, and every id, amount and date it states must be in those findings; a claim that
fails is removed and named in `degraded_reasons`. Claims about a subject's state (shipped,
refunded, cancelled, rolled back, healthy) are held to what was observed and done
(`graph.prose_claims`): a contradicted claim is removed the same way. A reply that states a
number no finding or step supports, or a state they contradict, is replaced by the composed
one. If the model fails, the composed answer stands and says so. `MUSTER_ANSWER_WRITER=
composed` keeps every answer composed by code, whatever the model.

The model may name fallbacks (`MUSTER_WRITER_FALLBACKS`): it and they are asked through a
`ModelChain` (`workers.model_chain`), behind the run's per-model breakers, as a worker's
model is; the thread's `supervisor_calls` record which model wrote (`fallback_for`: the one
it stood in for), and when every one fails the composed answer names each.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from graph.prose_claims import evidence_of, prose_problems
from graph.reply_guard import guard_reply
from graph.supervisor_spend import note_call
from graph.trace import TraceWriter, record_model_call, structured_request
from graph.verify import checkable_tokens, is_supported
from workers.contracts import Answer, Claim, Report
from workers.errors import ConfigError
from workers.model_chain import ModelChain, chain_of, off_schema, provider_error, run_health
from workers.model_errors import PERMANENT_PROVIDER_REASONS
from workers.model_health import ModelHealth
from workers.models import fallbacks_of, model_label, writes_prose

WRITER_PROMPT = """You write the answer a support agent reads, from specialists' reports only.
Return JSON with:
- summary: what happened, one sentence per item, each with `cites`: the ids of the findings
  it rests on (exactly as given, e.g. "billing-1/F1"). State only facts those findings show.
- customer_reply: a short, friendly reply to the customer that follows the resolution steps
  (never promise anything they do not list) and uses the knowledge-base wording.
Never invent order ids, amounts or dates."""


class DraftClaim(BaseModel):
    """One summary sentence and the findings it cites."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="One sentence of what happened.")
    cites: list[str] = Field(description="Finding ids it rests on, e.g. billing-1/F1.")


class AnswerDraft(BaseModel):
    """What the model writes: the summary and the reply, nothing that decides an action."""

    model_config = ConfigDict(extra="forbid")

    summary: list[DraftClaim] = Field(description="What happened, a cited sentence each.")
    customer_reply: str = Field(description="The reply to send to the customer.")


def composed_only(environ: Mapping[str, str] | None = None) -> bool:
    """True when `MUSTER_ANSWER_WRITER=composed`: no model writes any answer's prose (the
    default, `model`, lets a provider model write it, checked as above)."""
    setting = (os.environ if environ is None else environ).get("MUSTER_ANSWER_WRITER", "model")
    if setting not in ("model", "composed"):
        raise ConfigError(f"MUSTER_ANSWER_WRITER={setting!r}: use 'model' or 'composed'")
    return setting == "composed"


def writer_input(answer: Answer, reports: list[Report]) -> str:
    """The model's whole view: findings (cited), conclusions and the decided steps."""
    findings = [
        {"id": f"{r.packet_id}/{f.id}", "tool": f.tool, "observation": f.observation[:2000]}
        for r in reports
        if r.status == "ok"
        for f in r.findings
    ]
    return json.dumps(
        {
            "intents": answer.intents,
            "findings": findings,
            "conclusions": {r.packet_id: r.conclusion for r in reports if r.conclusion},
            "resolution": [
                s.model_dump(include={"intent", "kind", "text"}) for s in answer.resolution
            ],
            "open_questions": answer.open_questions,
        },
        ensure_ascii=False,
    )


def _draft(out: dict[str, Any]) -> AnswerDraft:
    """The draft in a structured-output result taken with its raw reply (`include_raw`)."""
    if out.get("parsing_error") is not None:
        raise out["parsing_error"]
    parsed = out.get("parsed")
    return parsed if isinstance(parsed, AnswerDraft) else AnswerDraft.model_validate(parsed)


def _composed(answer: Answer, error: BaseException, why: str = "") -> Answer:
    """The composed answer, degraded because the model could not write it (`why`: which
    models failed and how, when more than one was asked)."""
    cause = why or type(error).__name__
    reason = f"the model could not write the answer ({cause}); composed instead"
    return answer.model_copy(
        update={"degraded": True, "degraded_reasons": [*answer.degraded_reasons, reason]}
    )


def check_draft(
    draft: AnswerDraft, answer: Answer, reports: list[Report]
) -> tuple[list[Claim], str | None, list[str]]:
    """The claims that hold, the reply if it holds, and one reason per thing removed."""
    observations = {
        f"{r.packet_id}/{f.id}": f.observation
        for r in reports
        if r.status == "ok"
        for f in r.findings
    }
    kept: list[Claim] = []
    removed: list[str] = []
    steps = [s.text for s in answer.resolution]
    for claim in draft.summary:
        cited = [observations[c] for c in claim.cites if c in observations]
        missing = [t for t in checkable_tokens(claim.text) if not is_supported(t, cited)]
        # A state claim is held to everything observed and done, not only what it cites: a
        # model that cites the order record and says "not shipped" is wrong either way.
        states = prose_problems(claim.text, evidence_of([*observations.values(), *steps]))
        if not cited:
            removed.append(f"unverified claim removed: {claim.text!r} cites no finding we have")
        elif missing:
            removed.append(
                f"unverified claim removed: {claim.text!r} states {', '.join(missing)}, "
                "which its findings do not"
            )
        elif states:
            removed.append(f"contradicted claim removed: {'; '.join(states)}")
        else:
            kept.append(Claim(text=claim.text, cites=claim.cites))
    support = [*observations.values(), *steps]
    unsupported = [
        t for t in checkable_tokens(draft.customer_reply) if not is_supported(t, support)
    ]
    contradictions = prose_problems(draft.customer_reply, evidence_of(support))
    reply: str | None = draft.customer_reply
    if unsupported:
        removed.append(
            f"the model's reply stated {', '.join(unsupported)}, which no finding supports; "
            "the composed reply is used instead"
        )
        reply = None
    elif contradictions:
        removed.append(
            f"the model's reply contradicts the findings ({'; '.join(contradictions)}); "
            "the composed reply is used instead"
        )
        reply = None
    else:
        guarded = guard_reply(draft.customer_reply)
        if guarded.dropped:
            shown = "; ".join(repr(d[:120]) for d in guarded.dropped)
            removed.append(
                f"the model's reply held text unfit for a customer (instructions, links or "
                f"markup), kept out: {shown}"
            )
            reply = guarded.text or None
    return kept, reply, removed


async def write_with_model(
    model: BaseChatModel,
    answer: Answer,
    reports: list[Report],
    *,
    trace: TraceWriter | None = None,
    health: ModelHealth | None = None,
) -> Answer:
    """`answer` with the model's checked summary and reply in place of the composed ones.

    With a `trace`, the model call is recorded for `muster replay` as a worker's model turn
    is (request digest, reply, tokens; node `synthesize`). `health`: the model health to
    ask the model and its fallbacks behind (by default the run's, shared with its workers).
    """
    if composed_only():
        return answer
    refused = next((r.reason for r in reports if r.reason in PERMANENT_PROVIDER_REASONS), None)
    if refused is not None and not fallbacks_of(model):
        # One `--model` serves workers and writer: it would refuse again. (With fallbacks,
        # the run's model health skips the refused model and asks them.)
        why = f"the model provider refused for good ({refused}); the answer is composed"
        return answer.model_copy(
            update={"degraded": True, "degraded_reasons": [*answer.degraded_reasons, why]}
        )
    messages = [SystemMessage(WRITER_PROMPT), HumanMessage(writer_input(answer, reports))]
    digest = structured_request(messages, AnswerDraft)
    started = time.monotonic()
    chain: ModelChain | None = None
    try:
        # The model, then each of its fallbacks while the one before is unavailable.
        chain = ModelChain(
            chain_of(model, lambda m: m.with_structured_output(AnswerDraft, include_raw=True)),
            health=(health or run_health() or ModelHealth()) if writes_prose(model) else None,
            answers=off_schema,  # a reply off the schema: the model answered, composed
        )
        out = await chain.ainvoke(messages)
    except Exception as error:  # the model is outside our control; the composed answer stands
        cause = provider_error(error)
        first = chain.first if chain is not None else model_label(model)
        record_model_call(
            trace, digest, node="synthesize", error=cause, started=started, model=first
        )
        # One model's failure is named by its kind, as ever; several, or one not asked (a
        # fault remembered, its circuit open), by the chain's note naming each model.
        failures = chain.failures if chain is not None else []
        named = len(failures) > 1 or (len(failures) == 1 and cause is error)
        return _composed(answer, cause, chain.failure()[1][:300] if chain and named else "")
    label = chain.answered_by or chain.first
    record_model_call(
        trace, digest, node="synthesize", reply=out["raw"], started=started, model=label
    )
    # Its cost, in the thread's totals, and which model wrote if a fallback did.
    note_call("synthesize", label, out["raw"], fallback_for=chain.fallback_for)
    try:
        draft = _draft(out)
    except Exception as error:  # a reply that is no `AnswerDraft`
        return _composed(answer, error)
    if not draft.summary and not draft.customer_reply.strip():
        return answer  # the model added nothing: the composed answer stands as it is
    kept, reply, removed = check_draft(draft, answer, reports)
    if not draft.customer_reply.strip():
        reply = None
    return answer.model_copy(
        update={
            "summary": kept or answer.summary,
            "customer_reply": reply if reply is not None else answer.customer_reply,
            "degraded": answer.degraded or bool(removed),
            "degraded_reasons": [*answer.degraded_reasons, *removed],
            "written_by": "model",
        }
    )
