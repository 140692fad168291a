"""The benchmarks' one switch on the garbage collector: run as the `muster` command runs.

`muster` freezes what its imports built out of the cyclic collector before a command runs
(`graph.app.cli.freeze_imports`); a benchmark timing a command's work in its own process
does the same by default, or not with `--no-freeze` (a notebook's process, where Muster
leaves the caller's collector alone)."""

from __future__ import annotations

import argparse

from graph.app.cli import freeze_imports


def add_freeze_flag(parser: argparse.ArgumentParser) -> None:
    """The `--no-freeze` flag every such benchmark takes (read by `freeze_note`)."""
    parser.add_argument(
        "--no-freeze",
        action="store_true",
        help="leave the imports in the garbage collector's sight (a notebook's process); by "
        "default they are frozen after import, as the `muster` command does",
    )


def freeze_note(no_freeze: bool) -> str:
    """Freeze the imports unless `no_freeze`; the line the benchmark prints about it."""
    if no_freeze:
        return "imports left in the garbage collector's sight (--no-freeze, as in a notebook)"
    freeze_imports()
    return "imports frozen out of the garbage collector, as the `muster` command does"
