"""``slurmdiag epilog`` as slurmd and slurmctld run it: a COMPLETING job, a detached wait for the
final state, reports only for failed jobs, and the chat alert.

A stand-in ``scontrol`` on PATH answers the way Slurm 22.05 does while a job completes: NodeList
and NumNodes hold only the nodes still completing, then the final record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diag.epilog import EpilogOptions, allocation_from_env, run_epilog
from diag.slurm.query import parse_scontrol

from ..formats.test_webhook import SECRET, Hook

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
REPO = Path(__file__).resolve().parents[2]
TOKEN = "hf_" + "a1B2c3D4e5" * 4
FAILED = (DATA / "task-fail-28.err").read_text().replace("(simulated)", f"(simulated) HF_TOKEN={TOKEN}")
HEALTHY = "0: n0\n1: n1\n"


def fake_scontrol(tmp_path: Path, job_dir: Path, completing_calls: int = 99, delay_s: float = 0.0) -> Path:
    """A ``scontrol show job -o ID`` that says COMPLETING on n0 alone for the first calls, then COMPLETED."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    common = (
        f"JobName=train UserId=root(0) GroupId=root(0) Reason=None ExitCode=0:0 RunTime=00:00:05 "
        f"TimeLimit=UNLIMITED BatchHost=n0 WorkDir={job_dir} StdOut={job_dir}/train-$4.out "
        f"StdErr={job_dir}/train-$4.out StdIn=/dev/null"
    )
    script = f"""#!/bin/sh
n=$(cat "{tmp_path}/calls" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{tmp_path}/calls"
sleep {delay_s}
if [ "$n" -le {completing_calls} ]; then
  echo "JobId=$4 JobState=COMPLETING NodeList=n0 NumNodes=1 {common}"
else
  echo "JobId=$4 JobState=COMPLETED NodeList=n[0-1] NumNodes=2 {common}"
fi
"""
    (bin_dir / "scontrol").write_text(script)
    (bin_dir / "scontrol").chmod(0o755)
    return bin_dir


def epilog_env(job_id: str) -> dict[str, str]:
    # A per-node Epilog on the job's first node.
    return {"SLURM_JOB_ID": job_id, "SLURM_JOB_NODELIST": "n[0-1]", "SLURMD_NODENAME": "n0",
            "SLURM_SCRIPT_CONTEXT": "epilog_slurmd"}  # fmt: skip


def test_completing_record_keeps_the_allocations_node_count():
    # NumNodes and NodeList shrink while the job completes; the allocation's TRES does not.
    (job,) = parse_scontrol("JobId=12 JobState=COMPLETING NodeList=n0 NumNodes=1 TRES=cpu=2,mem=512M,node=2,billing=2")
    assert job.num_nodes == 2
    (bare,) = parse_scontrol("JobId=12 JobState=COMPLETING NodeList=n0 NumNodes=1")
    allocation_from_env([bare], {"SLURM_JOB_ID": "12", "SLURM_JOB_NODELIST": "n[0-1]"})
    assert (bare.num_nodes, bare.nodes) == (2, ["n0", "n1"])
    # `slurmdiag epilog 12` run inside another job (a dependent job): that job's nodes are not job 12's.
    (other,) = parse_scontrol("JobId=12 JobState=COMPLETED NodeList=n0 NumNodes=1")
    allocation_from_env([other], {"SLURM_JOB_ID": "13", "SLURM_JOB_NODELIST": "n[0-7]", "SLURM_JOB_NUM_NODES": "8"})
    assert (other.num_nodes, other.nodes) == (1, ["n0"])


def test_per_node_epilog_sees_a_two_node_job(tmp_path, monkeypatch):
    (tmp_path / "train-12.out").write_text(FAILED)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    assert run_epilog(EpilogOptions(log_file=str(tmp_path / "epilog.log")), epilog_env("12")) == 0
    data = json.loads((tmp_path / "slurmdiag-12.json").read_text())
    assert data["slurm"][0]["state"] == "COMPLETING"
    assert data["slurm"][0]["num_nodes"] == 2 and data["slurm"][0]["nodes"] == ["n0", "n1"]
    assert data["facts"]["nodes"] == 2


def test_only_failed_writes_nothing_for_a_healthy_job(tmp_path, monkeypatch):
    (tmp_path / "train-13.out").write_text(HEALTHY)
    (tmp_path / "train-14.out").write_text(FAILED)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    log = tmp_path / "epilog.log"
    for job_id in ("13", "14"):
        assert run_epilog(EpilogOptions(log_file=str(log), only_failed=True), epilog_env(job_id)) == 0
    assert not list(tmp_path.glob("slurmdiag-13.*"))
    assert "job 13: no finding at or above error (--only-failed)" in log.read_text()
    assert "job 13: wrote" not in log.read_text()
    assert sorted(p.name for p in tmp_path.glob("slurmdiag-14.*")) == ["slurmdiag-14.json", "slurmdiag-14.md"]
    # A higher bar: the failed job's unexplained-failure (an error) is not critical.
    assert run_epilog(EpilogOptions(log_file=str(log), only_failed=True, fail_on="critical", output_dir=str(tmp_path / "x")),
                      epilog_env("14")) == 0  # fmt: skip
    assert not (tmp_path / "x").exists()


def test_webhook_alert_is_redacted_and_the_files_are_not(tmp_path, monkeypatch):
    (tmp_path / "train-15.out").write_text(FAILED)
    (tmp_path / "train-16.out").write_text(HEALTHY)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    hook = Hook()
    try:
        log = tmp_path / "epilog.log"
        monkeypatch.setenv("SLURMDIAG_WEBHOOK", hook.url())  # as an admin would: not on the command line
        from click.testing import CliRunner

        from diag.cli import cli

        for job_id in ("15", "16"):
            result = CliRunner().invoke(cli, ["epilog", "--only-failed", "--log-file", str(log)],
                                        env=epilog_env(job_id))  # fmt: skip
            assert result.exit_code == 0
        assert len(hook.requests) == 1  # the healthy job is not posted
        body = hook.requests[0]["body"].decode()
        assert "RuntimeError: rank 2" in body and TOKEN not in body
        assert TOKEN in (tmp_path / "slurmdiag-15.md").read_text()  # the user's own file keeps what was read
        assert SECRET not in log.read_text() and "posted the alert" in log.read_text()
        # --redact masks the files too.
        run_epilog(EpilogOptions(log_file=str(log), redact=True), epilog_env("15"))
        assert TOKEN not in (tmp_path / "slurmdiag-15.md").read_text()
        assert TOKEN not in (tmp_path / "slurmdiag-15.json").read_text()
    finally:
        hook.close()


def test_webhook_failure_is_logged_and_the_epilog_still_succeeds(tmp_path, monkeypatch):
    (tmp_path / "train-17.out").write_text(FAILED)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    hook = Hook(answers=[(404, {}, 0)])
    try:
        log = tmp_path / "epilog.log"
        opts = EpilogOptions(log_file=str(log), webhook=hook.url())
        assert run_epilog(opts, epilog_env("17")) == 0
        assert (tmp_path / "slurmdiag-17.md").exists()
        text = log.read_text()
        assert "job 17: webhook" in text and "404" in text and SECRET not in text
    finally:
        hook.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_wait_final_returns_at_once_and_reports_the_final_state(tmp_path):
    (tmp_path / "train-18.out").write_text(FAILED)
    # Each scontrol call takes 1 s and the first two still say COMPLETING: the final record is
    # at least 2.5 s away, and slurmd (here: subprocess.run reading stdout/stderr to the end)
    # must not wait for it.
    bin_dir = fake_scontrol(tmp_path, tmp_path, completing_calls=2, delay_s=1.0)
    env = {**os.environ, **epilog_env("18"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    log = tmp_path / "epilog.log"
    report = tmp_path / "slurmdiag-18.json"
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "diag", "epilog", "--wait-final", "--max-seconds", "30",
                           "--log-file", str(log)], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=60)  # fmt: skip
    returned_after = time.monotonic() - started
    assert done.returncode == 0
    assert not report.exists(), f"the epilog waited for the detached child ({returned_after:.1f} s)"
    deadline = time.monotonic() + 30
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    data = json.loads(report.read_text())
    assert data["slurm"][0]["state"] == "COMPLETED" and data["slurm"][0]["num_nodes"] == 2
    assert not any("still completing" in n for n in data["notes"])


def test_wait_final_is_bounded(tmp_path):
    (tmp_path / "train-19.out").write_text(FAILED)
    bin_dir = fake_scontrol(tmp_path, tmp_path, completing_calls=10_000)  # never settles
    env = {**os.environ, **epilog_env("19"), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    log = tmp_path / "epilog.log"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "diag", "epilog", "--wait-final", "--max-seconds", "4", "--log-file",
                    str(log)], capture_output=True, env=env, cwd=REPO, timeout=60)  # fmt: skip
    report = tmp_path / "slurmdiag-19.json"
    deadline = time.monotonic() + 20
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    waited = time.monotonic() - started
    data = json.loads(report.read_text())
    assert data["slurm"][0]["state"] == "COMPLETING" and waited < 10
    assert "still COMPLETING after" in log.read_text()


def test_webhook_without_only_failed_still_never_posts_a_healthy_job(tmp_path, monkeypatch):
    (tmp_path / "train-18.out").write_text(HEALTHY)
    (tmp_path / "train-19.out").write_text(FAILED)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    hook = Hook()
    try:
        log = tmp_path / "epilog.log"
        for job_id in ("18", "19"):
            assert run_epilog(EpilogOptions(log_file=str(log), webhook=hook.url()), epilog_env(job_id)) == 0
        assert (tmp_path / "slurmdiag-18.md").exists()  # the report is still written
        assert len(hook.requests) == 1  # only the failed job is posted
        assert "job 18: no finding at or above error: the alert was not posted" in log.read_text()
        payload = json.loads(hook.requests[0]["body"])  # /hooks/ -> Mattermost
        fields = {f["title"]: f["value"] for f in payload["attachments"][0]["fields"]}
        assert fields["Report"].replace("\\", "").endswith("slurmdiag-19.md")  # where the full report is
        assert fields["Name"] == "train" and fields["State"] in ("COMPLETING", "COMPLETED")
    finally:
        hook.close()
