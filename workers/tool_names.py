"""Provider-safe tool names: the aliases a model is offered, and the way back.

Hub tools are qualified as ``server.tool``, but OpenAI and Anthropic accept function names
matching ``^[a-zA-Z0-9_-]{1,64}$`` only (no dot). So the worker loop offers each tool under
an alias (``orders.find_order`` → ``orders__find_order``) and maps the model's calls back to
the exact qualified name *before* the hub's allowlist check.

The way back is exact and never fuzzy (docs/architecture.md principle 4): an alias is
resolved only when it is precisely the alias of one of the names that were offered. Anything
else (a typo, a dotted name, an alias of a tool that was not offered, an alias shared by two
offered names) resolves to nothing, so the caller passes the model's name on unchanged and
the hub refuses it. Names already safe and dot-free (the control tools) are their own alias.

Two different names that would share one alias are a configuration error, reported by
`check_aliases` when the tools are bound, never silently resolved to either of them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache

from workers.errors import ConfigError

MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
"""What OpenAI and Anthropic accept as a function name."""

MAX_MODEL_NAME = 64
"""The longest function name both providers accept."""

SEPARATOR = "__"
"""What the dot between server and tool becomes."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LEN = 8


class ToolNameCollisionError(ConfigError):
    """Two different tool names would be offered to a model under one alias."""


def to_model_name(qualified: str) -> str:
    """The provider-safe alias of a tool name.

    The dot becomes ``__``. A name that is still not provider-safe after that (characters
    outside ``[A-Za-z0-9_-]``, or longer than 64) has those characters replaced by ``_``, is
    cut to length and gets a short digest of the original name as a suffix, so the alias is
    always valid and stays distinct in practice; `check_aliases` catches any collision.
    """
    if not isinstance(qualified, str) or not qualified:
        raise ValueError(f"a tool name must be a non-empty string, not {qualified!r}")
    alias = qualified.replace(".", SEPARATOR)
    if MODEL_NAME.match(alias):
        return alias
    suffix = "_" + hashlib.sha256(qualified.encode()).hexdigest()[:_HASH_LEN]
    safe = _UNSAFE.sub("_", alias)
    return safe[: MAX_MODEL_NAME - len(suffix)] + suffix


def _groups(names: Iterable[str]) -> dict[str, list[str]]:
    """Alias → the distinct names that map to it, in first-seen order."""
    groups: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        groups.setdefault(to_model_name(name), []).append(name)
    return groups


def check_aliases(names: Iterable[str]) -> None:
    """Raise `ToolNameCollisionError` if two different names share one alias.

    The same name listed twice is not a collision. Pass every name one model is offered,
    hub tools and control tools together.
    """
    clashes = {alias: group for alias, group in _groups(names).items() if len(group) > 1}
    if clashes:
        described = "; ".join(
            f"{' and '.join(repr(n) for n in group)} all become {alias!r}"
            for alias, group in sorted(clashes.items())
        )
        raise ToolNameCollisionError(
            f"tool names collide under provider-safe aliases: {described}; "
            "rename one of the tools or do not grant both to one worker"
        )


def alias_map(names: Iterable[str]) -> dict[str, str]:
    """Alias → exact name for every offered name; raises like `check_aliases` on a clash.

    Build it once per bound tool set and resolve calls with ``mapping.get(call_name)``.
    """
    return dict(_alias_map(tuple(names)))


@lru_cache(maxsize=512)
def _alias_map(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # Cached: every dispatch of a worker offers the same tool set.
    groups = _groups(names)
    check_aliases(name for group in groups.values() for name in group)
    return tuple((alias, group[0]) for alias, group in groups.items())


def from_model_name(name: str, known: Iterable[str]) -> str | None:
    """The exact name in `known` whose alias is `name`, or None.

    `known` holds the names that were offered (qualified hub names and control tool names).
    No trimming, no case folding, no guessing: only an exact alias match resolves, and an
    alias that two known names share resolves to nothing.
    """
    if not isinstance(name, str):
        return None
    matches = [k for k in dict.fromkeys(known) if to_model_name(k) == name]
    return matches[0] if len(matches) == 1 else None
