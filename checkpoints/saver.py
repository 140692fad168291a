"""Opening the checkpointer: the real `AsyncSqliteSaver` on a file.

The default file lives in this folder and is gitignored. A path that is not a SQLite
database, or a folder that cannot be written, is refused with a one-line error before any
run starts, so nothing is lost to a half-opened store.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import ormsgpack
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from checkpoints.announce import AnnouncesSavedWrites
from checkpoints.compression import DamagedCheckpointError
from checkpoints.inline_sqlite import connect_inline
from checkpoints.serde import compressed
from workers.errors import ConfigError

DEFAULT_DB = Path(__file__).resolve().parent / "muster.sqlite"
"""Where checkpoints go unless `--db` or `MUSTER_DB` says otherwise."""

BUSY_TIMEOUT_S = 30.0
"""How long a connection to the checkpoint file waits for SQLite's write lock."""


class CheckpointStoreError(ConfigError):
    """The checkpoint database cannot be opened; the message says which file and why."""


def resolve_db_path(path: str | Path | None = None) -> Path:
    """`path`, else `MUSTER_DB`, else the default file."""
    return Path(path or os.environ.get("MUSTER_DB") or DEFAULT_DB).expanduser()


def check_db_location(path: Path) -> None:
    """Refuse, without touching the disk, a path that no file can have (a NUL byte, a name
    too long, a parent that is a file); `check_db_path` does the rest when the store opens."""
    if "\0" in str(path):
        raise CheckpointStoreError(f"cannot use checkpoint database {path!r}: it has a null byte")
    try:
        path.exists()
        path.parent.exists()
    except (OSError, ValueError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise CheckpointStoreError(f"cannot use checkpoint database {path!s:.200}: {why}") from None
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise CheckpointStoreError(
                    f"cannot create checkpoint database {path}: {parent} is not a folder"
                )
            break


def check_db_path(path: Path, *, must_exist: bool = False) -> None:
    """Refuse a path that is not (or cannot become) a SQLite database."""
    check_db_location(path)
    if path.exists():
        if not path.is_file():
            raise CheckpointStoreError(f"cannot open checkpoint database {path}: not a file")
        _check_not_empty(path)
        _check_header(path)
        if not os.access(path, os.R_OK | os.W_OK):
            raise CheckpointStoreError(f"cannot open checkpoint database {path}: permission denied")
    elif must_exist:
        raise CheckpointStoreError(
            f"checkpoint database {path} does not exist; start a run with `muster run` first"
        )
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CheckpointStoreError(f"cannot create {path.parent}: {error.strerror}") from None
        if not os.access(path.parent, os.W_OK):
            raise CheckpointStoreError(
                f"cannot create checkpoint database in {path.parent}: permission denied"
            )
        _probe_create(path)


EMPTY_GRACE_S = 5.0
"""How long a store file may stay empty while the process creating it writes its header."""


def _check_not_empty(path: Path) -> None:
    """Refuse an empty file (0 bytes) that is not a store being created right now. SQLite
    takes an empty file for a new database, so Muster would silently start a new store in
    it; but a store Muster made always has its header (written as the store is set up, a
    few milliseconds after the file appears), so an empty one is a truncated store, or a
    file made by hand, and its threads, if it had any, are gone."""
    try:
        stat = path.stat()
    except OSError:
        return  # gone meanwhile: whoever opens it next decides
    if stat.st_size > 0 or time.time() - stat.st_mtime < EMPTY_GRACE_S:
        return
    raise CheckpointStoreError(
        f"cannot open checkpoint database {path}: it is an empty file, not a store Muster "
        "made (if it held threads, they are gone); remove it to start a new store there, "
        "or give another --db"
    )


def _check_header(path: Path) -> None:
    """Refuse a file that is not a SQLite database, read through SQLite itself.

    Not with `open()`: closing any descriptor of a file drops every POSIX lock the process
    holds on it, SQLite's too. A check made while a connection of this process is open (a
    batch opening its checkpoint lanes one after another, a lease taken beside the saver)
    dropped that connection's shared lock; another process closing its last connection
    could then take the file as its own and remove the WAL file under ours, writes and all
    (seen: an approval's audit row lost). SQLite's own closes keep the process's locks."""
    try:
        probe = sqlite3.connect(path, timeout=0)
    except sqlite3.Error as error:
        raise CheckpointStoreError(f"cannot read checkpoint database {path}: {error}") from None
    try:
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as error:
        if "locked" in str(error) or "busy" in str(error):
            return  # a database another process is writing: a database all the same
        raise CheckpointStoreError(
            f"cannot open checkpoint database {path}: not a SQLite file"
        ) from None
    finally:
        probe.close()


def _probe_create(path: Path) -> None:
    """Create and remove the file, so a folder that only looks writable (`/proc`, a read-only
    mount, root's `os.access`) is refused here in one line, not by SQLite mid-open."""
    # A sibling probe file, never the database's own path: another process may be creating
    # the store at the same moment, and must not see it vanish.
    probe = path.with_name(f".{path.name}.probe-{os.getpid()}")
    try:
        handle = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as error:
        why = error.strerror or errno.errorcode.get(error.errno or 0, "error")
        raise CheckpointStoreError(f"cannot create checkpoint database {path}: {why}") from None
    os.close(handle)
    probe.unlink(missing_ok=True)


def strict_serializer(allowed_types: Sequence[type]) -> EncryptedSerializer:
    """A serializer that restores only LangGraph's safe types plus `allowed_types`, and
    compresses what it stores (checkpoints/compression.py).

    Strict always, not only under `LANGGRAPH_STRICT_MSGPACK=true`: whoever can write the
    checkpoint file gets no code execution, and our own types load without the
    "unregistered type" warnings of the permissive default.
    """
    plain = JsonPlusSerializer(
        allowed_msgpack_modules=[(t.__module__, t.__name__) for t in allowed_types]
    )
    return compressed(plain)


class MusterSqliteSaver(AnnouncesSavedWrites, AsyncSqliteSaver):
    """LangGraph's SQLite saver, announcing each task's saved writes (checkpoints/announce.py)."""


@asynccontextmanager
async def open_checkpointer(
    path: str | Path | None = None,
    *,
    must_exist: bool = False,
    allowed_types: Sequence[type] = (),
) -> AsyncIterator[AsyncSqliteSaver]:
    """An `AsyncSqliteSaver` on `path` (see `resolve_db_path`), set up and ready, whose
    serializer restores `allowed_types` (the state's own types) and nothing unsafe."""
    db = resolve_db_path(path)
    check_db_path(db, must_exist=must_exist)
    async with AsyncExitStack() as stack:
        try:
            # BUSY_TIMEOUT_S, not sqlite's 5 s: other processes write this file too (other
            # threads' runs, leases, the audit log); a busy store slows a step, never fails it.
            # Inline, not on aiosqlite's worker thread: the hand-offs cost more CPU than the
            # statements (checkpoints/inline_sqlite.py).
            conn = await stack.enter_async_context(connect_inline(db, timeout=BUSY_TIMEOUT_S))
            saver = MusterSqliteSaver(conn, serde=strict_serializer(allowed_types))
            await saver.setup()  # also switches the file to WAL
            # In WAL mode, NORMAL skips the fsync on every commit (one per task write) but
            # stays consistent, and nothing committed is lost when the process is killed; only
            # a power cut can drop the last commits. At a 40-way fan-out that is most of the
            # overhead.
            await conn.execute("PRAGMA synchronous=NORMAL")
        except (sqlite3.Error, OSError) as error:
            raise CheckpointStoreError(f"cannot open checkpoint database {db}: {error}") from None
        try:
            yield saver
        except DamagedCheckpointError as error:
            raise CheckpointStoreError(f"cannot read checkpoint database {db}: {error}") from None
        except (UnicodeDecodeError, ormsgpack.MsgpackDecodeError) as error:
            # Changed bytes in a text column or an uncompressed blob: not what it wrote.
            raise CheckpointStoreError(
                f"cannot read checkpoint database {db}: a stored checkpoint is damaged ({error})"
            ) from None
        except sqlite3.DatabaseError as error:
            if not _damaged(error):
                raise
            raise CheckpointStoreError(
                f"cannot read checkpoint database {db}: the file is damaged ({error})"
            ) from None


def _damaged(error: sqlite3.DatabaseError) -> bool:
    """True for SQLite's word that the file's bytes are not what it wrote."""
    text = str(error).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt"))
