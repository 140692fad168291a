"""Back-pressure on a failing server: a circuit breaker and a cap on calls in flight.

Without it, a dead or broken backend was asked by every worker of every ticket, each
retrying within its steps and again when the supervisor retried the packet (182 calls to a
broken policy server for a 40-ticket batch). The hub is shared by every ticket a runtime
runs, so it is where "this server is failing" can be remembered across tickets:

- **Circuit breaker** (per server): after `threshold` failed calls in a row (a tool error, a
  timeout, a dead session; never a caller's mistake such as a refused tool or bad
  arguments), the circuit opens: calls are answered `unavailable` at once, without reaching
  the server, for a cooldown that doubles each time it reopens (capped), with jitter so the
  tickets waiting on it do not all come back at the same instant. After the cooldown one
  call goes through as a probe: a success closes the circuit, a failure reopens it.
- **In-flight cap** (per server): at most `max_in_flight` calls at once; the rest wait
  their turn, so a burst of tickets cannot pile hundreds of calls on one slow backend.
- **Rate limit** (per server, only where the servers file sets `requests_per_s`): at most
  that many calls start a second, `burst` at once after a quiet spell, through LangChain's
  token bucket (`InMemoryRateLimiter`, as a model's `rate_limiter`; `rate_limiter_for`). A
  call waits for its turn before it waits for an in-flight slot (`pace`, then `gate`), so a
  call held back by the rate holds no slot. It is per process, like the in-flight cap.

**Across processes** (`board`, checkpoints/breakers.py): with the store's breaker board set
(`open_services` does), a circuit that opens here is written to the store, every process
on it reads the board before calling a server (`admit`, cached for `BOARD_TTL_S`) and
skips one another process has opened, and the half-open probe is claimed on the board, so
one call per cool-down reaches the server from the whole fleet. The models' breakers
(`workers.model_health`) are the same `SharedBreakers`, on the same board as `model:<label>`.

Hand-written because the hub's calls are already values (`CallOutcome`), not exceptions:
the breaker libraries on the index (pybreaker, aiobreaker) count raised exceptions around
a callable, which would mean raising and catching every failed call to feed them.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.rate_limiters import InMemoryRateLimiter

from workers.hub.outcomes import COUNTED_FAILURES, CallOutcome

BOARD_TTL_S = 1.0
"""How long a read of the board is trusted (`checkpoints.breakers.BOARD_TTL_S`)."""


class SharedOpen(Protocol):
    """A server's open circuit as the board holds it (`checkpoints.breakers.SharedOpen`;
    the hub knows the board only by these shapes: workers never import the store)."""

    @property
    def remaining_s(self) -> float: ...

    @property
    def reopened(self) -> int: ...

    @property
    def last_failure(self) -> str: ...


class BreakerBoard(Protocol):
    """Where open circuits are shared (`checkpoints.breakers`: SQLite or PostgreSQL)."""

    def available(self) -> bool: ...

    async def read(self, server: str) -> SharedOpen | None: ...

    async def publish(
        self, server: str, *, cooldown_s: float, reopened: int, last_failure: str
    ) -> None: ...

    async def claim_probe(self, server: str, holder: str) -> bool: ...

    async def release_probe(self, server: str, holder: str) -> None: ...

    async def close_circuit(self, server: str) -> None: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BackpressureSettings:
    """How the hub protects a failing server (environment overrides in `from_env`)."""

    threshold: int = 5
    """Failed calls in a row that open a server's circuit."""
    cooldown_s: float = 2.0
    """The first open period; it doubles each time the circuit reopens."""
    max_cooldown_s: float = 60.0
    """The longest open period."""
    jitter: float = 0.2
    """Each open period is stretched or shrunk by up to this fraction, at random."""
    max_in_flight: int = 16
    """Calls to one server at once."""

    @classmethod
    def from_env(cls) -> BackpressureSettings:
        """`MUSTER_BREAKER_FAILURES`, `MUSTER_BREAKER_COOLDOWN_S` and
        `MUSTER_SERVER_MAX_IN_FLIGHT` over the defaults; a bad value keeps the default."""
        defaults = cls()

        def number(name: str, default: float) -> float:
            try:
                value = float(os.environ.get(name, default))
            except ValueError:
                return default
            return value if value > 0 else default

        return cls(
            threshold=int(number("MUSTER_BREAKER_FAILURES", defaults.threshold)),
            cooldown_s=number("MUSTER_BREAKER_COOLDOWN_S", defaults.cooldown_s),
            max_in_flight=int(number("MUSTER_SERVER_MAX_IN_FLIGHT", defaults.max_in_flight)),
        )


@dataclass
class Breaker:
    """One server's circuit (see the module docstring)."""

    settings: BackpressureSettings
    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    """Failed calls in a row."""
    reopened: int = 0
    """How many times the circuit opened without a success in between."""
    open_until: float = 0.0
    probing: bool = False
    """True while the one probe call after a cooldown is out."""
    last_failure: str = ""
    shed: int = 0
    """Calls answered without reaching the server, for `health()`."""

    @property
    def is_open(self) -> bool:
        return self.reopened > 0

    def refusal(self) -> str | None:
        """Why a call may not go to the server now, or None (it may; maybe as the probe)."""
        if not self.is_open:
            return None
        if self.clock() >= self.open_until and not self.probing:
            self.probing = True
            return None
        self.shed += 1
        return self._why()

    def waiting(self) -> str | None:
        """`refusal` without taking the probe: why a call would be refused now, or None when
        it may go (maybe as the probe, which the caller that makes the call then claims). A
        pre-check that claimed the probe would leave the call itself refused for good."""
        if not self.is_open or (self.clock() >= self.open_until and not self.probing):
            return None
        return self._why()

    def _why(self) -> str:
        wait = max(0.0, self.open_until - self.clock())
        return (
            f"circuit open after {self.failures} failed calls in a row "
            f"(last: {self.last_failure[:160]}); next try in {wait:.1f}s"
        )

    def adopt(self, shared: SharedOpen, read_at: float | None = None) -> None:
        """Take on another process's open circuit, read from the board: open for the
        cool-down it has left, its reopen count kept, so a failed probe here doubles it.
        `read_at` is when the read began (`clock`): the cool-down left counts from then, so a
        slow or cached read never keeps this process closed longer than the board says."""
        self.reopened = max(self.reopened, shared.reopened, 1)
        self.failures = max(self.failures, self.settings.threshold)
        self.last_failure = shared.last_failure or self.last_failure
        since = self.clock() if read_at is None else read_at
        self.open_until = since + max(0.0, shared.remaining_s)
        self.probing = False

    def record(self, outcome: CallOutcome, text: str) -> None:
        """Count one call's outcome."""
        if outcome is CallOutcome.OK:
            self.failures, self.reopened, self.probing = 0, 0, False
            return
        if outcome not in COUNTED_FAILURES:
            if self.probing:  # the probe told nothing about the server: let another try
                self.probing = False
            return
        self.failures += 1
        self.last_failure = " ".join(text.split())
        if self.probing or self.failures >= self.settings.threshold:
            self.probing = False
            self.reopened += 1
            cooldown = min(
                self.settings.cooldown_s * 2 ** (self.reopened - 1), self.settings.max_cooldown_s
            )
            spread = 1 + self.settings.jitter * (2 * random.random() - 1)
            self.open_until = self.clock() + cooldown * spread


def rate_limiter_for(requests_per_s: float, burst: int = 1) -> InMemoryRateLimiter:
    """LangChain's token bucket for `requests_per_s`, `burst` requests at once: a chat
    model's `rate_limiter` (`MUSTER_MODEL_REQUESTS_PER_S`, `workers.model_settings`) and a
    server's (`requests_per_s` in the servers file). Its bucket starts full, so the first
    `burst` requests go at once (LangChain's starts empty: a first request would wait), and
    it is checked often enough that a request waits little past its turn."""
    limiter = InMemoryRateLimiter(
        requests_per_second=requests_per_s,
        check_every_n_seconds=max(0.005, min(0.1, 0.25 / requests_per_s)),
        max_bucket_size=burst,
    )
    limiter.available_tokens = float(burst)
    return limiter


@dataclass
class SharedBreakers:
    """Circuit breakers by name, shared with every process on the store when there is a
    board: the one mechanism behind the hub's per-server breakers (`Backpressure`) and the
    per-model ones (`workers.model_health.ModelHealth`, on the board as `model:<label>`)."""

    settings: BackpressureSettings = field(default_factory=BackpressureSettings.from_env)
    clock: Callable[[], float] = time.monotonic
    breakers: dict[str, Breaker] = field(default_factory=dict)
    board: BreakerBoard | None = None
    """The store's breaker board, shared with every process on the store (None: this
    process's breakers only)."""
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    """Names this process's probe claims on the board."""
    prefix: str = ""
    """Put before a name to make its key on the board (servers: none; models: `model:`)."""
    _seen: dict[str, tuple[float, SharedOpen | None]] = field(default_factory=dict)
    """Per name: when the board was last read (`clock`) and what it said."""

    def __post_init__(self) -> None:
        self.holder = f"{self.holder}:{id(self):x}"

    def breaker(self, server: str) -> Breaker:
        if server not in self.breakers:
            self.breakers[server] = Breaker(self.settings, self.clock)
        return self.breakers[server]

    async def _shared(self, server: str, *, fresh: bool = False) -> SharedOpen | None:
        """The board's row for `server` (read again once `BOARD_TTL_S` old, or `fresh`)."""
        assert self.board is not None
        seen = self._seen.get(server)
        if not fresh and seen is not None and self.clock() - seen[0] < BOARD_TTL_S:
            return seen[1]
        started = self.clock()
        row = await self.board.read(self.prefix + server)
        self._seen[server] = (started, row)
        return row

    def _read_at(self, server: str) -> float | None:
        seen = self._seen.get(server)
        return None if seen is None else seen[0]

    async def refresh(self, servers: Iterable[str]) -> None:
        """Take on the board's open circuits for `servers`, so `is_open` sees them (a
        worker's tools are chosen with it before any call)."""
        if self.board is None:
            return
        for server in servers:
            breaker = self.breaker(server)
            if breaker.is_open and breaker.clock() < breaker.open_until:
                continue  # open here already
            shared = await self._shared(server)
            if shared is not None and shared.remaining_s > 0:
                breaker.adopt(shared, self._read_at(server))

    async def admit(self, server: str) -> str | None:
        """Why a read call may not go to `server` now, or None: `Breaker.refusal`, with the
        board's open circuits and its one probe per cool-down when there is a board."""
        breaker = self.breaker(server)
        if self.board is None or (breaker.is_open and breaker.clock() < breaker.open_until):
            return breaker.refusal()
        before = (breaker.reopened, breaker.open_until)
        shared = await self._shared(server, fresh=breaker.is_open)
        if not self.board.available():  # the store is away: this process's breaker alone
            return breaker.refusal()
        if shared is None:
            # Not open anywhere else (or closed by another process's successful probe). A
            # circuit that opened here while the board was being read is not closed by that
            # older read: its opening is on its way to the board.
            if breaker.is_open and not breaker.probing and (
                breaker.reopened,
                breaker.open_until,
            ) == before:
                breaker.record(CallOutcome.OK, "")  # closed elsewhere: closed here too
            return breaker.refusal()
        if shared.remaining_s > 0:
            breaker.adopt(shared, self._read_at(server))
            return breaker.refusal()
        if await self.board.claim_probe(self.prefix + server, self.holder):
            breaker.adopt(shared)
            breaker.probing = True  # this call is the fleet's probe
            return None
        breaker.shed += 1
        self._seen.pop(server, None)  # read again next time: the probe's outcome decides
        return f"circuit open (last: {shared.last_failure[:160]}); its one probe is out"

    async def settle(self, server: str, outcome: CallOutcome, text: str) -> None:
        """Count one call's outcome (`Breaker.record`), and tell the board: a success on an
        open (or probed) circuit closes it for every process, a circuit that opened here
        opens it for them, a probe that told nothing frees the claim."""
        breaker = self.breaker(server)
        probing, reopened = breaker.probing, breaker.reopened
        breaker.record(outcome, text)
        if self.board is None:
            return
        if outcome is CallOutcome.OK:
            seen = self._seen.get(server)
            if probing or reopened or (seen is not None and seen[1] is not None):
                await self.board.close_circuit(self.prefix + server)
                self._seen[server] = (self.clock(), None)
        elif breaker.reopened > reopened:
            await self.board.publish(
                self.prefix + server,
                cooldown_s=max(0.0, breaker.open_until - breaker.clock()),
                reopened=breaker.reopened,
                last_failure=breaker.last_failure,
            )
            self._seen.pop(server, None)
        elif probing and not breaker.probing:
            await self.board.release_probe(self.prefix + server, self.holder)

    def is_open(self, server: str) -> bool:
        """True while `server`'s circuit refuses calls (a probe is not yet due)."""
        breaker = self.breakers.get(server)
        return breaker is not None and breaker.is_open and breaker.clock() < breaker.open_until


@dataclass
class Backpressure(SharedBreakers):
    """Every server's breaker (`SharedBreakers`), rate limit and in-flight cap, for one
    hub."""

    limits: dict[str, int] = field(default_factory=dict)
    """Per-server in-flight caps from the servers file (`maxInFlight`), over the default."""
    rates: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Per-server rate limits from the servers file (`requests_per_s`, `burst`); a server
    not named here is not rate-limited."""
    _pacers: dict[str, InMemoryRateLimiter] = field(default_factory=dict)
    _gates: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    async def pace(self, server: str) -> None:
        """Wait for `server`'s rate limit to let one more call start (at once when it has
        none)."""
        rate = self.rates.get(server)
        if rate is None:
            return
        if server not in self._pacers:
            self._pacers[server] = rate_limiter_for(*rate)
        await self._pacers[server].aacquire()

    def gate(self, server: str) -> asyncio.Semaphore:
        """The server's in-flight cap (created on the running loop at first use)."""
        if server not in self._gates:
            limit = self.limits.get(server, self.settings.max_in_flight)
            self._gates[server] = asyncio.Semaphore(limit)
        return self._gates[server]
