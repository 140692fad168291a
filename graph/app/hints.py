"""Commands `muster` prints for the next step, carrying the options in force.

A hint such as "Continue with: muster resume t-1" is only useful if it works when pasted: a
run on `--db var/other.sqlite`, another `--servers` file or `--model` must be resumed,
approved or shown on the same ones. `Carried` records what this invocation set, from its
flags or from the environment (`MUSTER_DB`, `MUSTER_SERVERS`, `MUSTER_MODEL`: a hint must also
work in a shell where the variable was set for one command only), and `command` writes a
shell-quoted `muster ...` line with them. `--deadline` is not carried: the thread keeps its
own (graph/limits.py). Output flags (`--json`, `--markdown`) are the reader's choice.

A PostgreSQL URL with a password that came from `MUSTER_DB` is carried as `"$MUSTER_DB"`, so
the password is never printed; one typed on the command line is printed as typed.
"""

from __future__ import annotations

import argparse
import os
import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from graph.app.flags import BATCH_CONCURRENCY, DEFAULT_MODEL, DEFAULT_PLANNER


class Raw(str):
    """A word printed as it is, not shell-quoted: a placeholder such as `"<answer>"`."""


_ENV_DB = Raw('"$MUSTER_DB"')
"""Printed for a PostgreSQL URL with a password that came from the environment."""
ANSWER = Raw('"<answer>"')
"""The placeholder for the answer in a `muster clarify` hint."""


def _word(word: str) -> str:
    return word if isinstance(word, Raw) else shlex.quote(word)


def _has_password(url: str) -> bool:
    try:
        return bool(urlsplit(url).password)
    except ValueError:
        return False


@dataclass(frozen=True)
class Carried:
    """The options in force that a printed `muster` command must repeat to work as printed."""

    store: tuple[str, ...] = ()
    """`--db X` when this invocation did not use the default store."""
    run: tuple[str, ...] = ()
    """`--servers`, `--model`, `--planner`, `--max-steps`, `--max-tokens` when set."""
    batch: tuple[str, ...] = ()
    """`--out` and `--concurrency` of `muster batch`, when set."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Carried:
        """What `args` (and the environment behind their defaults) set."""
        store: list[str] = []
        db = getattr(args, "db", None) or os.environ.get("MUSTER_DB")
        if db:
            from_env = not getattr(args, "db", None)
            shown = _ENV_DB if from_env and _has_password(db) else shlex.quote(str(db))
            store = ["--db", shown]
        run: list[str] = []
        domain = getattr(args, "domain", None) or os.environ.get("MUSTER_DOMAIN")
        if domain and domain != "support":
            run += ["--domain", shlex.quote(str(domain))]
        servers = getattr(args, "servers", None) or os.environ.get("MUSTER_SERVERS")
        if servers:
            run += ["--servers", shlex.quote(str(servers))]
        model = getattr(args, "model", None) or os.environ.get("MUSTER_MODEL")
        if model and model != DEFAULT_MODEL:
            run += ["--model", shlex.quote(model)]
        if getattr(args, "planner", DEFAULT_PLANNER) not in (None, DEFAULT_PLANNER):
            run += ["--planner", shlex.quote(args.planner)]
        for flag in ("max_steps", "max_tokens"):
            value = getattr(args, flag, None)
            if value is not None:
                run += ["--" + flag.replace("_", "-"), str(value)]
        batch: list[str] = []
        if getattr(args, "out", None):
            batch += ["--out", shlex.quote(str(args.out))]
        concurrency = getattr(args, "concurrency", BATCH_CONCURRENCY)
        if str(concurrency).strip() != str(BATCH_CONCURRENCY):
            batch += ["--concurrency", shlex.quote(str(concurrency).strip())]
        return cls(store=tuple(store), run=tuple(run), batch=tuple(batch))

    def command(self, *words: str, run: bool = True, batch: bool = False) -> str:
        """`muster WORDS... [--db ...] [run options]`, each word shell-quoted. `run`: the
        command runs the graph (resume, approve, clarify, batch), so the run options go too;
        `show` and `threads` take only the store. A `Raw` word is printed unquoted."""
        parts = ["muster", *(_word(w) for w in words), *self.store]
        if run:
            parts += self.run
        if batch:
            parts += self.batch
        return " ".join(parts)


NOTHING = Carried()
"""No options carried: the defaults (for callers that do not know the flags)."""
