"""Reading a JSON-lines file of objects (tickets for `batch`, labelled tickets for `eval`).

One reader, so both files fail the same way: a missing, unreadable or non-UTF-8 file, a line
that is not JSON or not an object, each a one-line error naming the file and the line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workers.errors import ConfigError


def read_objects(
    path: Path, *, what: str, error: type[ConfigError], shape: str
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """`(line number, "file line N", object)` for each non-blank line of `path`; `error`
    (naming `what` file, and `shape` as the expected object) for anything else."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # tolerate a BOM
    except FileNotFoundError:
        raise error(f"{what} file {path} not found") from None
    except IsADirectoryError:
        raise error(f"{what} file {path} is a directory, not a JSONL file") from None
    except UnicodeDecodeError as problem:
        raise error(f"{what} file {path} is not UTF-8 text ({problem.reason})") from None
    except OSError as problem:
        raise error(f"cannot read {what} file {path}: {problem.strerror}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path} line {number}"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as problem:
            raise error(f"{where}: not valid JSON ({problem.msg})") from None
        if not isinstance(data, dict):
            raise error(f"{where}: expected an object {shape}")
        yield number, where, data
