"""One small error tree. Callers catch `MusterError`; the CLI turns it into a one-line message.

`ConfigError` means the caller or a config file is wrong: it is raised, and its message says
what to do next. A model that misbehaves (calls a tool it was not given, loops) is *not* an
exception: the worker loop feeds it back as text and reports it as a typed `Report.reason`.
"""

from __future__ import annotations


class MusterError(Exception):
    """Root of every error Muster raises on purpose."""


class ConfigError(MusterError):
    """The caller or a configuration file is wrong; the message says how to fix it."""


class UnknownModelError(ConfigError):
    """`--model` names no model Muster can build."""


class PlanError(ConfigError):
    """A plan failed validation (unknown worker, dependency cycle…) before anything ran."""


class BadPlanError(PlanError):
    """A model wrote a plan that is not one (unparseable, off its schema, invalid): the plan
    node asks once more, then plans with the pack's rules; never the end of a ticket."""


class PlannerCallError(PlanError):
    """The planner's model call itself failed (provider down, key refused): nothing was
    planned, so nothing else plans in its place."""


class RosterError(ConfigError):
    """The roster file is malformed or grants a worker a write tool."""


class ProviderError(PlannerCallError):
    """The model provider refused for a reason no retry heals (a bad API key, no quota, an
    unknown model) or could not be reached: the message is one line naming the kind and the
    fix; `muster` exits with the kind's own code (7 to 10)."""

    def __init__(self, message: str, *, reason: str = "provider_auth") -> None:
        super().__init__(message)
        self.reason = reason
        """The failure's reason (`provider_auth`, `provider_quota`, `unknown_model`,
        `provider_unreachable`)."""
