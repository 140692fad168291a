"""A failed model call, named by kind: what the worker loop reports instead of `unavailable`.

A provider error is a value at the worker boundary (principle 2), but "unavailable" for
every one of them hid the cause: a wrong API key, an exhausted quota, a model name the
server does not know and a server that cannot be reached each need a different fix, and
only some heal with a retry. The kind is read from what every provider client exposes
(an HTTP `status_code`, an error `code`, the exception's class name), so no provider
package is imported here.
"""

from __future__ import annotations

import asyncio

from workers.contracts import FailureReason

PERMANENT_PROVIDER_REASONS: tuple[FailureReason, ...] = (
    "provider_auth",
    "provider_quota",
    "unknown_model",
)
"""Provider failures no retry heals: the run stops asking that model and says how to fix it."""

FIXES: dict[FailureReason, str] = {
    "provider_auth": "the provider refused the API key: check OPENAI_API_KEY (or the "
    "provider's key variable) and the base URL",
    "provider_quota": "the provider says the quota is used up: check the account's billing",
    "unknown_model": "the provider does not serve this model: check --model's name",
    "provider_unreachable": "the provider's endpoint could not be reached: check the base URL "
    "(OPENAI_BASE_URL) and that the server runs",
    "model_timeout": "the model did not answer within the call timeout (MUSTER_MODEL_TIMEOUT_S)",
    "model_refused": "the model refused the request",
    "bad_arguments": "the model wrote a tool call the provider could not parse",
}
"""One line per named model failure: what it means and what to do."""

_TIMEOUT_NAMES = ("Timeout", "TimedOut")
_CONNECT_NAMES = ("APIConnectionError", "ConnectError", "ConnectionError")


def _status(error: BaseException) -> int | None:
    for source in (error, getattr(error, "response", None)):
        status = getattr(source, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def _code(error: BaseException) -> str:
    code = getattr(error, "code", None)
    body = getattr(error, "body", None)
    if not isinstance(code, str) and isinstance(body, dict):
        inner = body.get("error")
        inner = inner if isinstance(inner, dict) else body
        code = inner.get("code") or inner.get("type")
    return code if isinstance(code, str) else ""


def model_failure(error: BaseException) -> FailureReason:
    """The failure reason for a model call that raised `error`."""
    name, status, code = type(error).__name__, _status(error), _code(error).lower()
    text = str(error).lower()
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)) or any(
        t in name for t in _TIMEOUT_NAMES
    ):
        return "model_timeout"
    if status in (401, 403) or "authentication" in name.lower() or code == "invalid_api_key":
        return "provider_auth"
    if code == "insufficient_quota" or "quota" in text and status == 429:
        return "provider_quota"
    if code == "model_not_found" or status == 404 and "model" in text:
        return "unknown_model"
    if "refusal" in name.lower() or "contentfilter" in name.lower() or code == "content_filter":
        return "model_refused"
    if "tool call" in text and "pars" in text:  # llama.cpp: "Failed to parse tool call ..."
        return "bad_arguments"
    if any(n in name for n in _CONNECT_NAMES) or isinstance(error, ConnectionError):
        return "provider_unreachable"
    return "unavailable"  # a 5xx, a 429 rate limit, a dropped stream: these may heal


def describe(reason: FailureReason, error: BaseException) -> str:
    """One line for a report's note: the kind, what to do, and the provider's own words."""
    detail = " ".join(str(error).split())[:300]
    fix = FIXES.get(reason)
    lead = f"model call failed ({reason}): {fix}" if fix else f"model call failed ({reason})"
    return f"{lead}; {type(error).__name__}: {detail}"
