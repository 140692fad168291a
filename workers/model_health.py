"""What Muster has learnt about its models' providers during a runtime: the faults no retry
heals, so nothing asks again.

A wrong API key, an exhausted quota or a model name the provider does not serve fails
every call the same way. Without this, each worker, each retry and each escalation asked the
provider again (and waited out the client's retries), and the cause drowned in a list of
failed packets. The first such failure is recorded here, keyed by the model's label; every
later turn on that model ends at once with the same reason and note, without a request.
One `ModelHealth` lives in the runtime's services, so a batch's later tickets learn from
its first (the same memory the hub keeps of a server that is down).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workers.contracts import FailureReason
from workers.model_errors import PERMANENT_PROVIDER_REASONS


@dataclass(frozen=True)
class ModelFault:
    """A provider fault that will not heal by asking again."""

    model: str
    reason: FailureReason
    note: str
    """The first failure's one line: the kind, what to do, the provider's words."""


@dataclass
class ModelHealth:
    """Permanent provider faults, by model label (see the module docstring)."""

    faults: dict[str, ModelFault] = field(default_factory=dict)

    def fault(self, model: str) -> ModelFault | None:
        """The fault recorded for `model`, if any."""
        return self.faults.get(model)

    def record(self, model: str, reason: FailureReason, note: str) -> None:
        """Remember a failed call's reason if it is one no retry heals (the first wins)."""
        if reason in PERMANENT_PROVIDER_REASONS and model not in self.faults:
            self.faults[model] = ModelFault(model, reason, note)
