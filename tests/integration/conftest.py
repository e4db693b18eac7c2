"""The real Slurm lab cluster (tests/integration/lab/start): reachable or skipped with a reason.

With ``SLURMDIAG_REQUIRE_SLURM=1`` (CI) a missing cluster is a failure, not a skip. Slow tests
(``@pytest.mark.slow``, the ~75 s time limit) run when ``SLURMDIAG_RUN_SLOW=1`` or
``SLURMDIAG_REQUIRE_SLURM=1``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

LAB = Path(os.environ.get("SLURM_LAB_DIR", "/var/tmp/slurm-lab"))
REQUIRE = os.environ.get("SLURMDIAG_REQUIRE_SLURM") == "1"
RUN_SLOW = REQUIRE or os.environ.get("SLURMDIAG_RUN_SLOW") == "1"
FINAL_STATES = ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                "BOOT_FAIL", "DEADLINE")  # fmt: skip
# Open MPI between fake nodes of one machine: TCP over loopback only.
MPI_ENV = {"OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "slow" in item.keywords and not RUN_SLOW:
            item.add_marker(pytest.mark.skip(reason="slow: set SLURMDIAG_RUN_SLOW=1 (CI runs it)"))


def _lab_problem() -> str | None:
    if shutil.which("sbatch") is None or shutil.which("scontrol") is None:
        return "Slurm client commands (sbatch, scontrol) are not installed"
    try:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {exc}"
    if out.returncode != 0:
        return f"no Slurm controller answers: {out.stderr.strip()[:200]}"
    up = [
        line.split()[0]
        for line in out.stdout.splitlines()
        if line.split()[1:] and line.split()[1] in ("idle", "mix", "alloc")
    ]
    if len(up) < 4:
        return f"the lab needs 4 nodes up (tests/integration/lab/start); sinfo shows: {out.stdout.strip()[:200]}"
    return None


@pytest.fixture(scope="session")
def lab():
    problem = _lab_problem()
    if problem:
        if REQUIRE:
            pytest.fail(f"SLURMDIAG_REQUIRE_SLURM=1 but no lab cluster: {problem}")
        pytest.skip(f"no Slurm lab cluster: {problem} (start one with tests/integration/lab/start)")
    return LAB


@dataclass
class Job:
    id: str
    dir: Path

    def state(self) -> str:
        out = subprocess.run(["scontrol", "show", "job", "-o", self.id], capture_output=True, text=True).stdout
        for field in out.split():
            if field.startswith("JobState="):
                return field.split("=", 1)[1]
        return ""

    def wait(self, states=FINAL_STATES, timeout: float = 180) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.state()
            if state in states:
                return state
            time.sleep(0.3)
        raise AssertionError(f"job {self.id} not in {states} after {timeout} s (state {self.state()})")


def submit(lab: Path, script: str, *args: str, name: str = "job") -> Job:
    """sbatch a script in a fresh directory the (private-/tmp) nodes can see."""
    directory = lab / "jobs" / f"{name}-{uuid.uuid4().hex[:8]}"
    directory.mkdir(parents=True)
    (directory / "job.sh").write_text(script)
    env = {**os.environ, **MPI_ENV}
    done = subprocess.run(["sbatch", "--parsable", *args, "job.sh"], cwd=directory, capture_output=True, text=True,
                          env=env, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return Job(done.stdout.strip().split(";")[0], directory)
