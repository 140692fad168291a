"""Domain packs: everything that makes Muster about support tickets, or about incidents.

A pack is one folder, `domains/<name>/` (or any folder given by path), holding data and small
plug-ins; the graph, the hub, recovery, approvals and checkpoints stay the same for every
domain (principle 13). `domain.json` names the pack's parts:

```json
{"name": "incidents", "description": "...", "roster": "roster.json", "servers": "servers.json",
 "planner": "planner.json", "eval": {"dataset": "incidents.jsonl", "labels": "labels.jsonl"}}
```

- `roster` (required): the workers, their least-privilege allowlists and the shared facts;
- `servers`: the `mcpServers` file the hub starts (support: `MUSTER_SERVERS`, else the default);
- `planner`: a keyword table for the data-only planner (`graph.planners.keywords`), unless
  the plug-in has its own;
- `plugin.py` (optional), loaded from the folder as a package (a bundled pack as
  `domains.<name>`), may define `plan(request, roster)`, `plan_follow_up(request, roster,
  earlier)` (a follow-up message's packets, `earlier` the thread's `graph.state.Contact`s;
  without it the message is planned by `plan`), `read_request(request) ->
  TicketReading`, `INTENTS` (every intent its reading can produce), `compose_answer(state) ->
  Answer`, `render_answer(answer, state)`, `ANSWER_LABELS` (a `graph.answer_render.AnswerLabels`:
  its wording in the plain layout, for a pack without a layout of its own), `PROPOSAL_RULES`
  (`{tool: (check, suggest)}` or `workers.proposals.ProposalRules`, registered with
  `workers.proposals`), `FALLBACKS`
  (`{worker: Snapshot}`, registered with `graph.fallbacks`), for `graph.approval`:
  `ACTION_SUBJECTS` (`{tool: argument}`: what a write changes, so one such action per
  subject waits for a human at a time), `ACTION_NAMES` (`{tool: "a refund"}`),
  `BEFORE_EXECUTE` (`{tool: check}`, a `graph.approval.BeforeExecute` run right before an
  approved action) and `REQUESTER_TOOLS` (write tools that record the asking thread),
  `SUBJECT_INPUT` (the packet input naming what a request is about: support's `order_id`), then
  for `muster eval`, either `EVAL_FIELDS` (labelled fields the shell's harness scores, a
  `graph.app.eval_fields.LabelledFields`: support's `scoring.py`) or `score(values, labels)`
  and `TARGETS` (a pack that scores itself: incidents), and `RECEIVED_FIELD` (the dataset
  field its lines give their arrival time in, read as `received_at`: incidents' `paged_at`);
  `resolve_facts(declared, subject_ids, *, hub, roster, received_at)` (`graph.facts`) adds
  the pack's own facts before the specialists run.

Proposal rules and fallbacks are registered when a pack loads, and building a run's
`graph.services.Services` loads its roster's pack: a fresh run, a resume that starts in a
worker, at recovery or at approval, the fleet's worker, Studio and replay all meet the
pack's rules. Support is loaded like any other pack (`domains/support/`). Select a pack
with `--domain NAME|PATH` or `MUSTER_DOMAIN`; `support` is the default.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from graph.fallbacks import FALLBACKS
from graph.planners.base import Planner, TicketReading
from graph.planners.keywords import KeywordTable, load_keyword_table
from workers.errors import ConfigError
from workers.proposals import ProposalRules, register_proposal_rule
from workers.roster import Roster, load_roster

DOMAINS_DIR = Path(__file__).resolve().parents[1] / "domains"
"""Where the bundled packs live, one folder each."""
DEFAULT_DOMAIN = "support"
"""The pack used unless `--domain` or `MUSTER_DOMAIN` names another."""
DOMAIN_ENV = "MUSTER_DOMAIN"
"""The environment fallback for `--domain`."""
MANIFEST = "domain.json"
"""The file that makes a folder a pack."""

Reader = Callable[[str], TicketReading]
"""Reads a request into its intents (and what else the rules see)."""


@dataclass(frozen=True)
class DomainPack:
    """One loaded domain pack: its data and its plug-in hooks."""

    name: str
    """The pack's name (`support`, `incidents`)."""
    ref: str
    """How it was selected: a bundled name, or the folder's absolute path."""
    folder: Path
    """The pack's folder."""
    description: str
    """One line for `--help` and the README."""
    roster: Roster
    """Its workers (the roster's `domain` is `ref`, so every stage finds the pack again)."""
    servers_file: Path | None
    """Its `mcpServers` file; None: the default (`MUSTER_SERVERS`, else
    domains/support/servers.json)."""
    planner: Planner
    """Writes the packets for a request."""
    read: Reader
    """Reads a request's intents, for `plan` and the answer."""
    intents: frozenset[str]
    """Every intent `read` can produce: how an answer finds its pack from a thread's state."""
    plugin: ModuleType | None = None
    """The pack's `plugin.py`, if it has one."""
    eval_files: dict[str, Path] = field(default_factory=dict)
    """`dataset` (and `labels`) for `muster eval`, when the pack has an eval set."""

    def hook(self, name: str) -> Any:
        """The plug-in's `name`, or None when the pack does not define it. `name` must be one
        of `HOOKS`: an engine asking for a hook nobody documented is a bug, not a feature
        quietly off."""
        if name not in HOOKS:
            raise KeyError(f"{name!r} is no pack hook; the hooks are {', '.join(sorted(HOOKS))}")
        return getattr(self.plugin, name, None) if self.plugin is not None else None

    @property
    def subject_input(self) -> str | None:
        """The packet input naming what a request is about (the plug-in's `SUBJECT_INPUT`:
        support's `order_id`), or None: `graph.plan` gathers the request's subject ids from
        it too, and recovery fills it from a human's clarification."""
        key = self.hook("SUBJECT_INPUT")
        return str(key) if key else None

    @property
    def received_field(self) -> str:
        """The field a dataset or tickets line gives its arrival time in, besides
        `received_at` (the plug-in's `RECEIVED_FIELD`: incidents' `paged_at`)."""
        return str(self.hook("RECEIVED_FIELD") or "received_at")

    def subject_ids(self, text: str) -> tuple[str, ...]:
        """The ids of what `text` is about, as the pack's reading finds them (its
        `TicketReading.order_ids`: support's order ids; none for a pack that reads none)."""
        return self.read(text).order_ids

    def subject_argument(self, tool: str) -> str | None:
        """The argument naming what write `tool` changes (the plug-in's `ACTION_SUBJECTS`:
        support's refund `order_id`, incidents' rollback `change_id`), or None."""
        subjects: dict[str, str] = self.hook("ACTION_SUBJECTS") or {}
        return subjects.get(tool)

    def action_name(self, tool: str) -> str:
        """How a message names write `tool` (the plug-in's `ACTION_NAMES`: support's refund
        is "a refund"), else its qualified name."""
        names: dict[str, str] = self.hook("ACTION_NAMES") or {}
        return names.get(tool, tool)

    def before_execute(self, tool: str) -> Callable[..., Awaitable[str | None]] | None:
        """The check right before an approved `tool` runs (the plug-in's `BEFORE_EXECUTE`,
        a `graph.approval.BeforeExecute`: support re-reads a refund's order), or None."""
        checks: dict[str, Callable[..., Awaitable[str | None]]] = self.hook("BEFORE_EXECUTE") or {}
        return checks.get(tool)

    def keeps_requester(self, tool: str) -> bool:
        """True when the pack knows write `tool` records the thread that asked (the plug-in's
        `REQUESTER_TOOLS`), without asking its server for the tool's schema."""
        return tool in (self.hook("REQUESTER_TOOLS") or ())


def domain_ref(given: str | Path | None = None) -> str:
    """The pack to use: `given`, else `MUSTER_DOMAIN`, else `support`."""
    return str(given or os.environ.get(DOMAIN_ENV) or DEFAULT_DOMAIN)


def _folder(ref: str) -> Path:
    """The folder a pack reference names: a bundled name or a path."""
    if "/" not in ref and ref not in (".", ".."):
        folder = DOMAINS_DIR / ref
        if (folder / MANIFEST).is_file():
            return folder
        known = ", ".join(bundled_domains())
        raise ConfigError(f"unknown domain {ref!r}; bundled: {known} (or give a pack's folder)")
    folder = Path(ref).expanduser().resolve()
    if not (folder / MANIFEST).is_file():
        raise ConfigError(f"{folder} is not a domain pack: it has no {MANIFEST}")
    return folder


def bundled_domains() -> list[str]:
    """The names of the packs under `domains/`."""
    return sorted(p.parent.name for p in DOMAINS_DIR.glob(f"*/{MANIFEST}"))


HOOKS = frozenset(
    {
        # functions
        "plan", "read_request", "compose_answer", "render_answer", "resolve_facts", "score",
        "plan_follow_up",
        # values
        "INTENTS", "PROPOSAL_RULES", "FALLBACKS", "ACTION_NAMES", "ACTION_SUBJECTS",
        "AFTER_EXECUTE", "BEFORE_ASK", "BEFORE_EXECUTE", "ANSWER_LABELS", "EVAL_DATABASES",
        "EVAL_ENV", "EVAL_FIELDS", "RECEIVED_FIELD", "REQUESTER_TOOLS", "SUBJECT_INPUT", "TARGETS",
    }
)  # fmt: skip
"""Every name the engine looks up in a pack's plug-in (the contract in this docstring)."""


def check_hook_names(plugin: ModuleType, folder: Path) -> None:
    """Refuse a plug-in name that is a near miss of a hook it does not define (`BEFORE_ASKS`,
    `compose_anwser`): misspelt, the hook would silently be off."""
    names = [n for n in vars(plugin) if not n.startswith("_") and n not in HOOKS]
    for name in names:
        close = [
            h for h in get_close_matches(name, HOOKS, n=1, cutoff=0.85) if h not in vars(plugin)
        ]
        if close:
            raise ConfigError(
                f"domain pack {folder}: plugin.py defines {name!r}, which is no hook; did you "
                f"mean {close[0]!r}? (the hooks: graph/domains.py HOOKS)"
            )


def _load_plugin(folder: Path, name: str) -> ModuleType | None:
    """`plugin.py` imported as `<package>.plugin`, the folder being a package, so its sibling
    modules import with relative imports (`from .triage import diagnose`). A bundled pack is
    the package `domains.<name>`, so a module of it imported directly (a test's
    `domains.support.rules`) is the one the plug-in uses; a folder elsewhere becomes a
    package of its own."""
    if not (folder / "plugin.py").is_file():
        return None
    if folder.parent == DOMAINS_DIR and (folder / "__init__.py").is_file():
        bundled = importlib.import_module(f"{DOMAINS_DIR.name}.{folder.name}.plugin")
        check_hook_names(bundled, folder)
        return bundled
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:8]
    package = f"muster_domain_{''.join(c if c.isalnum() else '_' for c in name)}_{tag}"
    if package not in sys.modules:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        module = importlib.util.module_from_spec(spec)
        module.__path__ = [str(folder)]
        sys.modules[package] = module
    plugin = importlib.import_module(f"{package}.plugin")
    check_hook_names(plugin, folder)
    return plugin


_LOADED: dict[str, DomainPack] = {}
"""Every pack loaded in this process, by ref."""


def load_domain(given: str | Path | None = None) -> DomainPack:
    """The pack `given` names (see `domain_ref`), loaded once per process; a `ConfigError`
    (exit 2) says what is wrong with a pack that does not load."""
    ref = domain_ref(given)
    if ref in _LOADED:  # a bundled name, or the folder a loaded roster names (`Roster.domain`)
        return _LOADED[ref]  # no file-system call: nodes look packs up on the event loop
    folder = _folder(ref)
    key = ref if "/" not in ref else str(folder)
    if key in _LOADED:
        return _LOADED[key]
    pack = _read_pack(folder, key)
    _LOADED[key] = pack
    # The bundled packs' intents too, now (they are read from files): `pack_for_intents`
    # runs in nodes, where Studio's server refuses blocking file-system calls.
    _bundled_intents()
    return pack


def _read_pack(folder: Path, ref: str) -> DomainPack:
    try:
        manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigError(f"domain pack {folder}: {MANIFEST} is unreadable: {error}") from None
    name = str(manifest.get("name") or folder.name)
    plugin = _load_plugin(folder, name)

    def path(key: str) -> Path | None:
        value = manifest.get(key)
        return (folder / str(value)).resolve() if value else None

    roster_file = path("roster")
    roster = load_roster(roster_file) if roster_file else load_roster()
    roster = roster.model_copy(update={"domain": ref})
    table: KeywordTable | None = None
    planner_file = path("planner")
    if planner_file is not None:
        table = load_keyword_table(planner_file)
    planner = getattr(plugin, "plan", None) or (table.plan if table else None)
    reader = getattr(plugin, "read_request", None) or (table.read if table else None)
    if planner is None or reader is None:
        raise ConfigError(
            f"domain pack {folder} has no planner: give {MANIFEST} a `planner` keyword table "
            "or define plan() and read_request() in its plugin.py"
        )
    intents = getattr(plugin, "INTENTS", None) or (table.intent_names if table else ())
    for tool, rules in (getattr(plugin, "PROPOSAL_RULES", None) or {}).items():
        register_proposal_rule(tool, *ProposalRules(*rules))
    for worker, snapshot in (getattr(plugin, "FALLBACKS", None) or {}).items():
        FALLBACKS.setdefault(worker, snapshot)
    evals = manifest.get("eval") or {}
    return DomainPack(
        name=name,
        ref=ref,
        folder=folder,
        description=str(manifest.get("description") or ""),
        roster=roster,
        servers_file=path("servers"),
        planner=planner,
        read=reader,
        intents=frozenset(intents),
        plugin=plugin,
        eval_files={k: (folder / str(v)).resolve() for k, v in evals.items()},
    )


def default_planner() -> Planner:
    """The default pack's planner (support's rules planner): what a run uses when its caller
    names none."""
    return load_domain(DEFAULT_DOMAIN).planner


def pack_of(roster: Roster) -> DomainPack:
    """The pack a run's roster came from."""
    return load_domain(roster.domain)


def read_request(request: str, roster: Roster) -> TicketReading:
    """What the rules of the roster's domain read from a request (its intents first)."""
    return pack_of(roster).read(request)


@cache
def _bundled_intents() -> dict[str, str]:
    """Intent -> bundled pack name, for packs other than support (read from their files)."""
    found: dict[str, str] = {}
    for name in bundled_domains():
        if name != DEFAULT_DOMAIN:
            for intent in load_domain(name).intents:
                found.setdefault(intent, name)
    return found


def pack_for_state(state: Mapping[str, Any]) -> DomainPack:
    """The pack a thread runs under: the one `plan` recorded (`MusterState.domain`), so two
    packs sharing an intent name never answer each other's threads; a thread planned before
    the pack was recorded (or whose pack cannot load now) is found from its intents."""
    ref = state.get("domain")
    if isinstance(ref, str) and ref:
        try:
            return load_domain(ref)
        except ConfigError:
            pass
    return pack_for_intents(state.get("intents") or [])


def pack_for_intents(intents: Iterable[str]) -> DomainPack:
    """The pack whose reading produced these intents (a thread's state names no domain, its
    intents do): a loaded pack first, then a bundled one, else support."""
    wanted = set(intents)
    if wanted:
        for pack in list(_LOADED.values()):
            if pack.name != DEFAULT_DOMAIN and wanted <= pack.intents:
                return pack
        for intent in wanted:
            name = _bundled_intents().get(intent)
            if name is not None:
                return load_domain(name)
    return load_domain(DEFAULT_DOMAIN)
