"""The quickstart notebook runs top to bottom in a real kernel and shows what it says it shows.

`examples/quickstart.ipynb` is executed with nbclient on ipykernel's `python3` kernel (the
venv interpreter). The kernel is a subprocess started with a copy of `os.environ`, so the
`muster_env` variables point its checkpointer and the MCP servers it starts into tmp_path;
the refund row in that orders database is the proof the approval really executed.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbformat import NotebookNode, read

from tests.conftest import HANG_TIMEOUT_S, PROJECT_ROOT, MusterEnv

NOTEBOOK = PROJECT_ROOT / "examples" / "quickstart.ipynb"
KERNEL = "python3"
CELL_TIMEOUT_S = HANG_TIMEOUT_S
"""Per cell, and for the kernel to start: only a hung cell reaches it."""


def cell_text(nb: NotebookNode, cell_id: str) -> str:
    """Everything a code cell printed (its stream outputs, joined)."""
    [cell] = [c for c in nb.cells if c.get("id") == cell_id]
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def refund_rows(orders_db: Path, order_id: str) -> list[tuple[str, int]]:
    """Refunds runs wrote for one order (seed rows excluded)."""
    conn = sqlite3.connect(orders_db)
    try:
        return conn.execute(
            "SELECT refund_id, amount_cents FROM refunds"
            " WHERE order_id = ? AND idempotency_key NOT LIKE 'seed-%'",
            (order_id,),
        ).fetchall()
    finally:
        conn.close()


def test_python3_kernel_is_this_interpreter() -> None:
    """`python3` is ipykernel's own spec (argv `python`), which jupyter_client starts with
    sys.executable: the kernel imports this venv's Muster."""
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    assert spec.argv[0] in ("python", sys.executable), spec.argv


def test_committed_notebook_has_outputs_and_no_local_paths() -> None:
    """Readers see results on GitHub, and no paths or secrets from the machine that ran it."""
    nb = read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code if c.id != "helpers")
    printed = "".join(cell_text(nb, c.id) for c in code)
    assert "EXECUTED" in printed
    assert not re.search(r"(/tmp/|/home/|/root/|/work/|[A-Z]:\\)", printed), printed
    assert "secret" not in printed.lower()
    assert not any(o.output_type == "error" for c in code for o in c.outputs)


@pytest.mark.slow
@pytest.mark.integration
def test_quickstart_notebook_executes(muster_env: MusterEnv) -> None:
    nb = read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    assert os.environ["MUSTER_DB"] == str(muster_env.checkpoint_db)  # inherited by the kernel

    NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        startup_timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()  # raises CellExecutionError on any failing cell

    # 1-2. the demo ticket: every worker reported, and the answer is complete.
    first = cell_text(nb, "first-run")
    assert len(re.findall(r"^dispatch +\w+ +ok:", first, re.M)) == 3, first
    assert "synthesize  answer: complete" in first
    assert "answer: complete (degraded: False)" in first

    # 3. state and history read back from the checkpointer.
    history = cell_text(nb, "history")
    assert "latest: next = () | answer = complete" in history
    assert re.search(r"dispatch, dispatch, dispatch", history), history

    # 4. stopped before synthesize, then resumed by thread id to a complete answer.
    assert "next: ('synthesize',) | answer yet: False" in cell_text(nb, "interrupt")
    assert "next: () | answer: complete" in cell_text(nb, "resume")

    # 5. the approval interrupt, then the refund executed exactly once.
    approval = cell_text(nb, "approval")
    assert "next: ('approve',)" in approval
    assert "tool: orders.issue_refund" in approval
    assert (
        "args: {'order_id': '12345', 'amount_cents': 12900, 'expected_refunded_cents': 0}"
        in approval
    )
    approved = cell_text(nb, "approve")
    executed = re.search(
        r"^- orders\.issue_refund\(order_id=12345, amount_cents=12900, expected_refunded_cents=0\)"
        r" proposed by billing: "
        r"approved by notebook, EXECUTED: refund_id=(re_\w+)",
        approved,
        re.M,
    )
    assert executed, approved
    assert "servers stopped" in cell_text(nb, "close")

    # The kernel and the servers it started wrote into tmp_path, not the project.
    assert muster_env.checkpoint_db.exists()
    assert refund_rows(muster_env.orders_db, "12345") == [(executed.group(1), 12900)]
    printed = "".join(cell_text(nb, c.id) for c in nb.cells if c.cell_type == "code")
    assert str(muster_env.root) not in printed
