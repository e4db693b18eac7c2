"""``slurmdiag follow --self``, started in the background of a (stand-in) batch script: a fake
``scontrol`` on PATH names the job's files, SLURM_JOB_ID is set as Slurm sets it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from diag.cli import cli

REPO = Path(__file__).resolve().parents[2]
IB_LOG = REPO / "corpus" / "syn-ib-not-mounted-one-node" / "train-48213.out"


def _fake_job(tmp_path: Path, job_id: str) -> dict[str, str]:
    """A RUNNING job whose StdOut/StdErr are in tmp_path; scontrol notes each call in ``calls``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = (
        f"JobId={job_id} JobName=train UserId=root(0) GroupId=root(0) JobState=RUNNING Reason=None "
        f"ExitCode=0:0 RunTime=00:00:05 TimeLimit=UNLIMITED NodeList=n0 NumNodes=1 BatchHost=n0 "
        f"WorkDir={tmp_path} StdOut={tmp_path}/train-{job_id}.out StdErr={tmp_path}/train-{job_id}.err StdIn=/dev/null"
    )
    (bin_dir / "scontrol").write_text(f'#!/bin/sh\necho x >> "{tmp_path}/calls"\necho "{record}"\n')
    (bin_dir / "scontrol").chmod(0o755)
    (tmp_path / f"train-{job_id}.out").write_bytes(b"")
    return {**os.environ, "SLURM_JOB_ID": job_id, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # exited, not reaped yet by whoever adopted it


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_self_in_a_batch_script_alerts_and_ends_with_the_script(tmp_path):
    env = _fake_job(tmp_path, "77")
    out, err = tmp_path / "train-77.out", tmp_path / "train-77.err"
    log = IB_LOG.read_bytes()
    cut = log.index(b"NCCL INFO Using network Socket") + 200  # the fallback line, well before the job's end
    (tmp_path / "part.txt").write_bytes(log[:cut])
    # The batch script: follow --self in the background (stderr is the job's .err), then "train":
    # write the log once the follower asked Slurm for the files, wait for the alert, and end.
    script = f"""
{sys.executable} -m diag follow --self --interval 0.05 --job-poll 0.2 -o {tmp_path}/report.json --format json \
  2>> {err} &
echo $! > {tmp_path}/pid
i=0; while [ ! -s {tmp_path}/calls ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3
cat {tmp_path}/part.txt >> {out}
i=0; while ! grep -q ib-devices-not-mounted {err} 2>/dev/null && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done
"""
    done = subprocess.run(["sh", "-c", script], env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0
    pid = int((tmp_path / "pid").read_text())
    assert _wait(lambda: _gone(pid), 15), "follow --self outlived its batch script"
    alerts = err.read_text()
    assert "ib-devices-not-mounted" in alerts and "job 77" in alerts  # found the files, alerted while running
    assert _wait(lambda: (tmp_path / "report.json").exists(), 5)
    report = json.loads((tmp_path / "report.json").read_text())
    assert str(out) in {i["path"] for i in report["inputs"]}
    assert "ib-devices-not-mounted" in {f["id"] for f in report["findings"]}


def test_self_writes_its_report_and_exits_0_on_sigterm(tmp_path):
    env = _fake_job(tmp_path, "78")
    (tmp_path / "train-78.out").write_bytes(IB_LOG.read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-m", "diag", "follow", "--self", "--interval", "0.05", "-o", str(tmp_path / "r.txt")],
        env=env, cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert _wait(lambda: (tmp_path / "calls").exists(), 30)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
    finally:
        proc.kill()
    assert rc == 0  # the diagnosis has findings (exit 1 elsewhere); a job's helper never fails it
    assert "ib-devices-not-mounted" in (tmp_path / "r.txt").read_text()
    assert proc.stdout.read() == b""  # nothing on the job's .out


def test_self_without_slurm_job_id_exits_2_with_one_line(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    result = CliRunner().invoke(cli, ["follow", "--self"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "SLURM_JOB_ID" in lines[0]
