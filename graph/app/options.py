"""How a run is set up, and how a command ends: one options object and the exit codes.

`MusterOptions` is validated once, before any server starts, and every entry point builds it
the same way: the CLI and `muster batch` from their flags (`MusterOptions.from_args`), Studio
and the notebook from keywords (`MusterOptions.resolve`). The run's environment fallbacks are
resolved here and nowhere else: `MUSTER_DB` (through `store_location`), `MUSTER_SERVERS`,
`MUSTER_MODEL`, and `MUSTER_ROSTER` (through `load_roster`). Studio's own run-data folder,
`MUSTER_STUDIO_DIR`, is Studio's (graph/app/studio.py).

Input is bounded here too: a ticket is refused when blank or longer than
`MAX_TICKET_CHARS` (`check_ticket`), `--deadline` must be a finite number of seconds above 0
(`positive_seconds`), and a `--db` path that cannot be a database, or a PostgreSQL URL that
cannot be parsed, is a one-line error.

`ExitCode` (the table every command documents and returns, `graph.app.exit_codes`) and the
flags every command shares (`graph.app.flags`) are declared where nothing heavy is imported,
so `muster --help` is instant; they are re-exported here.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from checkpoints.store import CheckpointStore, checkpoint_store, store_location
from graph.app.exit_codes import ExitCode  # re-exported: the codes live with the parser
from graph.app.flags import (  # re-exported: the flags live with the parser
    DEFAULT_MODEL,
    add_run_options,
    add_store_options,
    positive_int,
    positive_seconds,
)
from graph.domains import DEFAULT_DOMAIN, DomainPack, default_planner, load_domain
from graph.limits import RunLimits
from graph.planners import Planner
from graph.planners.llm import make_llm_planner
from workers.errors import ConfigError
from workers.models import ModelFactory, load_model_factory
from workers.roster import Roster, load_roster

if TYPE_CHECKING:  # the servers file's module loads the MCP SDK: only when a run needs it
    from workers.hub import ServersConfig

MAX_TICKET_CHARS = 20_000
"""The longest ticket Muster accepts, in characters (a long support email is ~5,000)."""


@dataclass(frozen=True, kw_only=True)
class MusterOptions:
    """Everything a run is set up with, validated: the same object for every entry point."""

    db: Path | str
    """The checkpoint database: `--db`, else `MUSTER_DB`, else `checkpoints/muster.sqlite`;
    a SQLite file (`Path`) or a PostgreSQL URL (`str`, `postgresql://...`)."""
    servers: ServersConfig
    """The MCP servers to start: `--servers`, else `MUSTER_SERVERS`, else
    `domains/support/servers.json`."""
    models: ModelFactory
    """The chat model for each worker: `--model`, else `MUSTER_MODEL`, else `offline`."""
    roster: Roster
    """Which workers exist and what they may touch (`MUSTER_ROSTER`, else the bundled one)."""
    planner: Planner = field(default_factory=default_planner)
    """Writes the packets (`--planner`): the rules planner, or the model's structured output."""
    limits: RunLimits = field(default_factory=RunLimits)
    """Hard limits for each run (`--max-steps`, `--max-tokens`, `--deadline`)."""
    domain: str = DEFAULT_DOMAIN
    """The domain pack (`--domain`, else `MUSTER_DOMAIN`, else support): its roster,
    servers, planner and answer (graph/domains.py)."""

    @classmethod
    def resolve(
        cls,
        *,
        db: str | Path | None = None,
        servers: ServersConfig | str | Path | None = None,
        model: str | None = None,
        models: ModelFactory | None = None,
        roster: Roster | None = None,
        planner: Planner | None = None,
        limits: RunLimits | None = None,
        domain: str | Path | None = None,
    ) -> MusterOptions:
        """Options from what the caller gave, the environment for the rest; raises a
        `ConfigError` (exit 2) for a malformed servers file or an unknown model. Reads files:
        call it off the event loop where blocking matters (Studio). A domain other than
        support brings its own roster, servers file and planner, unless given here."""
        from workers.hub import ServersConfig

        pack = load_domain(domain)
        bundled_default = pack.name == DEFAULT_DOMAIN and pack.ref == DEFAULT_DOMAIN
        if not isinstance(servers, ServersConfig):
            servers = servers_config(servers, pack=None if bundled_default else pack)
        if models is None:
            models = load_model_factory(model_name(model))
        location = store_location(db)
        checkpoint_store(location).check_location()
        return cls(
            db=location,
            servers=servers,
            models=models,
            roster=roster or (load_roster() if bundled_default else pack.roster),
            planner=planner or pack.planner,
            limits=limits or RunLimits(),
            domain=pack.ref,
        )

    @classmethod
    def from_args(
        cls, args: argparse.Namespace, *, models: ModelFactory | None = None
    ) -> MusterOptions:
        """Options from the flags `add_store_options` and `add_run_options` declare (any may
        be absent); `models` replaces the named model's (a `--scenario` scripts its own).
        A ticket given as `request` is checked first (`check_ticket`)."""
        request = getattr(args, "request", None)
        if request is not None:
            check_ticket(request)
        pack = load_domain(getattr(args, "domain", None))
        given_servers = getattr(args, "servers", None)
        servers = servers_config(given_servers, pack=None if pack.ref == DEFAULT_DOMAIN else pack)
        name = model_name(getattr(args, "model", None))
        named = load_model_factory(name)  # checked even when a scenario scripts the models
        models = models or named
        planner: Planner | None = None
        if getattr(args, "planner", "rules") == "llm":
            if name.startswith("offline"):
                raise ConfigError(
                    "--planner llm needs a provider model, e.g. --model openai:gpt-4o-mini"
                )
            planner = make_llm_planner(models("planner"))
        return cls.resolve(
            db=getattr(args, "db", None),
            servers=servers,
            models=models,
            planner=planner,
            domain=pack.ref,
            limits=RunLimits.from_options(
                max_steps=getattr(args, "max_steps", None),
                max_tokens=getattr(args, "max_tokens", None),
                deadline_s=getattr(args, "deadline", None),
                max_cost_usd=getattr(args, "max_cost", None),
            ),
        )

    @property
    def store(self) -> CheckpointStore:
        """The checkpoint store `db` names: its saver, audit log and thread leases."""
        return checkpoint_store(self.db)


def servers_config(
    given: str | Path | None = None, *, pack: DomainPack | None = None
) -> ServersConfig:
    """The servers config: `given`, else the domain pack's (for a pack other than support),
    else `MUSTER_SERVERS`, else `domains/support/servers.json`."""
    from workers.hub import DEFAULT_SERVERS_FILE, load_servers_config

    if not given and pack is not None and pack.servers_file is not None:
        given = pack.servers_file
    return load_servers_config(
        Path(given or os.environ.get("MUSTER_SERVERS") or DEFAULT_SERVERS_FILE)
    )


def model_name(given: str | None = None) -> str:
    """The model to use: `given`, else `MUSTER_MODEL`, else `offline`."""
    return given or os.environ.get("MUSTER_MODEL") or DEFAULT_MODEL


def ticket_problem(text: str) -> str | None:
    """What is wrong with a ticket's text, or None: blank, or over `MAX_TICKET_CHARS`."""
    if not text.strip():
        return 'the ticket is blank; give the ticket text, e.g. muster run "Order #12345 ..."'
    if len(text) > MAX_TICKET_CHARS:
        return (
            f"the ticket is {len(text):,} characters; the limit is {MAX_TICKET_CHARS:,}: "
            "shorten it to the customer's message"
        )
    return None


def check_ticket(text: str) -> str:
    """`text` if it is a ticket Muster accepts; else a `ConfigError` (exit 2) saying why."""
    problem = ticket_problem(text)
    if problem is not None:
        raise ConfigError(problem)
    return text


__all__ = [
    "DEFAULT_MODEL",
    "MAX_TICKET_CHARS",
    "ExitCode",
    "MusterOptions",
    "add_run_options",
    "add_store_options",
    "check_ticket",
    "model_name",
    "positive_int",
    "positive_seconds",
    "servers_config",
    "ticket_problem",
]
