"""A thread records the code, pack and schema versions it started on; a resume under others
warns (the default) or refuses (`MUSTER_VERSION_POLICY=refuse`); reports and packets carry
their contract's schema version and the traced run that wrote them."""

from __future__ import annotations

import json
import sqlite3

import pytest

from graph.versions import STATE_SCHEMA_VERSION, changed_versions, resume_check
from tests.conftest import MusterEnv
from tests.test_actions import CLI_TIMEOUT_S, REFUND_TICKET
from workers.contracts import CONTRACT_SCHEMA_VERSION
from workers.errors import MusterError


def test_changed_versions_name_what_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    then = {"code": "0.1.0", "pack": "support@aaa", "schema": 2}
    now = {"code": "0.1.0", "pack": "support@bbb", "schema": STATE_SCHEMA_VERSION}
    changes = changed_versions(then, now)
    assert changes == ["pack support@aaa -> support@bbb", f"schema 2 -> {STATE_SCHEMA_VERSION}"]
    assert changed_versions(None, now) == [] and changed_versions(now, now) == []
    monkeypatch.delenv("MUSTER_VERSION_POLICY", raising=False)
    warning = resume_check("t-1", changes)
    assert warning is not None and "resuming under these" in warning
    monkeypatch.setenv("MUSTER_VERSION_POLICY", "refuse")
    with pytest.raises(MusterError, match="refusing to resume"):
        resume_check("t-1", changes)


@pytest.mark.slow
@pytest.mark.integration
async def test_a_thread_records_its_versions_and_a_resume_under_others_says_so(
    muster_env: MusterEnv,
) -> None:
    from checkpoints.threads import thread_config
    from graph.app.runtime import open_runtime

    cli = muster_env.cli
    assert cli("run", REFUND_TICKET, "--thread", "v1", timeout=CLI_TIMEOUT_S).returncode == 5
    async with open_runtime(db=muster_env.checkpoint_db) as runtime:
        config = thread_config("v1")
        values = (await runtime.graph.aget_state(config)).values
        versions = values["versions"]
        assert versions["schema"] == STATE_SCHEMA_VERSION and versions["pack"].startswith(
            "support@"
        )
        report = next(r for r in values["reports"] if r.worker == "billing")
        assert report.schema_version == CONTRACT_SCHEMA_VERSION and report.run_id
        assert all(p.run_id == report.run_id for p in values["packets"])
        # The thread as if an older pack had started it.
        old = {**versions, "pack": "support@000000000000"}
        await runtime.graph.aupdate_state(config, {"versions": old}, as_node="verify")
    warned = cli("resume", "v1", timeout=CLI_TIMEOUT_S)
    assert "started on other versions (pack support@000000000000 -> " in warned.stdout
    refused = cli(
        "approve", "v1", "--by", "lead", timeout=CLI_TIMEOUT_S,
        extra_env={"MUSTER_VERSION_POLICY": "refuse"},
    )  # fmt: skip
    assert refused.returncode == 2 and "refusing to resume" in refused.stderr
    traces = (muster_env.trace_dir / "v1.jsonl").read_text().splitlines()
    assert any(json.loads(line).get("run_id") == report.run_id for line in traces)
    with sqlite3.connect(muster_env.checkpoint_db) as conn:  # refused: nothing was refunded
        assert not conn.execute("SELECT 1 FROM muster_audit WHERE event = 'execution'").fetchall()
