"""Abstention: an answer may be `complete` with no human only when the reading of the request
accounted for all of it.

A pack's reader reports the parts of a request it could not attribute to an intent, a subject
or known filler (`TicketReading.unaccounted`; `plan` keeps them in the state). Whatever the
pack's answer says, those parts were not answered, so the engine, for every pack, marks the
answer `partial`, asks a human and names each part (principle 10: not understanding a request
is never `complete`). A reading that accounts for everything but is not sure of it (its
`confidence` below `REVIEW_BELOW`) keeps its status and asks a person to check it
(`review`). Two readers that disagree (the LLM planner's intents and the pack's
reading) are a part nobody accounts for too (`disagreement`).
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.contracts import Answer

MAX_QUOTED = 160
"""How much of an unaccounted part the answer quotes."""
REVIEW_BELOW = 0.85
"""A reading less sure than this (`TicketReading.confidence`) is checked by a person before
its answer goes out: the answer keeps its status and needs a human."""


def _quoted(part: str) -> str:
    text = " ".join(part.split())
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…"


def abstain(answer: Answer, unaccounted: Sequence[str]) -> Answer:
    """The answer with the request's unaccounted parts named, `partial` (a `failed` answer
    stays failed) and needing a human; unchanged when the reading accounted for everything."""
    if not unaccounted:
        return answer
    questions = [
        f'Not understood: "{_quoted(part)}". A human should read it and answer it.'
        for part in unaccounted
    ]
    return answer.model_copy(
        update={
            "status": "partial" if answer.status == "complete" else answer.status,
            "needs_human": True,
            "open_questions": [*answer.open_questions, *questions],
        }
    )


def review(answer: Answer, confidence: float | None) -> Answer:
    """The answer needing a human when the reading behind it is less sure than
    `REVIEW_BELOW`, saying so; unchanged otherwise (or when no confidence is known)."""
    if confidence is None or confidence >= REVIEW_BELOW or answer.needs_human:
        return answer
    why = f"The request was read with confidence {confidence:.2f}: a human should check it."
    return answer.model_copy(
        update={"needs_human": True, "open_questions": [*answer.open_questions, why]}
    )


def disagreement(
    planned: Sequence[str], read: Sequence[str], required: Sequence[str] = ()
) -> list[str]:
    """When the LLM planner's intents and the pack's reading differ (the planner names one the
    reader did not read, or leaves out one the reader says its packets need), the difference
    as one part to hand a human; nothing when they agree or the planner named none."""
    if not planned:
        return []
    extra = sorted(set(planned) - set(read))
    missing = sorted(set(required) - set(planned))
    if not extra and not missing:
        return []
    return [
        f"the planner read intents {sorted(planned)} but the pack's reader read {sorted(read)}"
    ]
