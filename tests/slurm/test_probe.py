"""``slurmdiag probe`` against stand-in ``sbatch`` and ``scontrol`` on PATH: sbatch records the
script and "runs" it by writing a canned node report; scontrol says the job COMPLETED and where
its output is. What the probe proves becomes a finding; what it could not check, a note."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
JOB = "4242"


def node_report(node: str, *, dev: bool = True, hcas: str = "mlx5_0 mlx5_1", gpus: str = "8",
                shared: dict[str, str] | None = None, nccl: str = "all_reduce_perf", ulimit: str = "unlimited") -> str:  # fmt: skip
    """What the job script's node part prints on one node (srun --label prefixes it)."""
    say = [
        ("dev-infiniband", "present" if dev else "missing"),
        ("sys-infiniband", hcas or "none"),
        ("nic", "ib0  UP  10.0.0.1/24"),
        ("ulimit-l", ulimit),
        ("dev-shm-kb", "65536000"),
        *(("shared", f"{p} {s}") for p, s in (shared or {}).items()),
        ("gpus", gpus),
        ("nccl", nccl),
        *([("nccl-exit", "0")] if not nccl.startswith("skipped") else []),
        ("done", "ok"),
    ]
    return "".join(f"0: slurmdiag-probe: {node}: {k}: {v}\n" for k, v in say)


def fake_slurm(tmp_path: Path, output: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out = tmp_path / f"slurmdiag-probe-{JOB}.out"
    (tmp_path / "canned.out").write_text(output)
    (bin_dir / "sbatch").write_text(
        f'#!/bin/sh\ncat > "{tmp_path}/submitted.sh"\ncp "{tmp_path}/canned.out" "{out}"\necho "{JOB};lab"\n'
    )
    (bin_dir / "scontrol").write_text(
        f'#!/bin/sh\necho "JobId={JOB} JobName=slurmdiag-probe JobState=COMPLETED Reason=None ExitCode=0:0 '
        f"NodeList=n[0-1] NumNodes=2 RunTime=00:00:09 TimeLimit=00:05:00 BatchHost=n0 WorkDir={tmp_path} "
        f'StdOut={out} StdErr={out} StdIn=/dev/null"\n'
    )
    for tool in ("sbatch", "scontrol"):
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def probe(tmp_path: Path, output: str, *args: str) -> tuple[int, dict, str]:
    env = {**os.environ, "PATH": f"{fake_slurm(tmp_path, output)}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "diag", "probe", "--nodes", "2", "--output-dir", str(tmp_path),
                           "--format", "json", "--wait", "20", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {}), done.stderr


def finding(report: dict, cause: str) -> dict | None:
    return next((f for f in report["findings"] if f["id"] == cause), None)


def test_missing_dev_infiniband_in_the_container_where_hcas_exist_names_that_node(tmp_path):
    output = node_report("gpu-a01") + node_report("gpu-a02", dev=False)
    rc, report, err = probe(tmp_path, output, "--container-image", "nvcr.io/nvidia/pytorch:24.05-py3")
    hit = finding(report, "ib-devices-not-mounted")
    assert hit is not None, err
    assert hit["hosts"] == ["gpu-a02"]
    assert rc == 1
    # The job the user would have run: the same container, with the mount the fix names.
    script = (tmp_path / "submitted.sh").read_text()
    assert "--container-image=nvcr.io/nvidia/pytorch:24.05-py3" in script
    assert "--container-mounts=/dev/infiniband:/dev/infiniband" in script


def test_hosts_without_any_hca_are_not_checked_rather_than_unmounted(tmp_path):
    output = node_report("n0", dev=False, hcas="") + node_report("n1", dev=False, hcas="")
    rc, report, _ = probe(tmp_path, output, "--container-image", "img.sqsh")
    assert finding(report, "ib-devices-not-mounted") is None
    assert sum("not checked: n" in n and "InfiniBand" in n for n in report["notes"]) == 2
    assert rc == 0


def test_shared_path_missing_on_one_node_is_shared_storage_missing(tmp_path):
    output = node_report("n0", shared={"/lustre/ckpt": "ok", "/home/me": "ok"}) + node_report(
        "n1", shared={"/lustre/ckpt": "missing", "/home/me": "ok"}
    )
    rc, report, err = probe(tmp_path, output, "--shared-path", "/lustre/ckpt", "--shared-path", "/home/me")
    hits = [f for f in report["findings"] if f["id"] == "shared-storage-missing"]
    assert len(hits) == 1, err
    assert hits[0]["hosts"] == ["n1"] and "/lustre/ckpt" in hits[0]["detail"]
    assert any(n.startswith("/home/me: one shared directory") for n in report["notes"])
    assert not any(n.startswith("/lustre/ckpt: one shared directory") for n in report["notes"])
    assert rc == 1
    # The marker is written from the first node and read back on every node.
    script = (tmp_path / "submitted.sh").read_text()
    assert script.count("/lustre/ckpt") >= 2 and ".slurmdiag-probe-" in script


def test_node_local_directory_with_the_same_name_is_not_shared(tmp_path):
    # Exists everywhere, but the first node's marker is not there on n1: a local /scratch.
    output = node_report("n0", shared={"/scratch": "ok"}) + node_report("n1", shared={"/scratch": "no-marker"})
    _, report, _ = probe(tmp_path, output, "--shared-path", "/scratch")
    hit = finding(report, "shared-storage-missing")
    assert hit is not None and hit["hosts"] == ["n1"]


def test_no_gpu_and_no_nccl_tests_are_not_checked_lines_and_no_finding(tmp_path):
    quiet = dict(
        dev=False,
        hcas="",
        gpus="nvidia-smi not found",
        nccl="skipped: no GPU, and no all_reduce_perf (nccl-tests) on PATH",
    )
    output = node_report("n0", **quiet) + node_report("n1", **quiet)
    rc, report, err = probe(tmp_path, output)
    assert report["findings"] == [], err
    notes = report["notes"]
    for node in ("n0", "n1"):
        assert any(n.startswith(f"not checked: {node}: GPUs") for n in notes)
        assert any(n.startswith(f"not checked: {node}: NCCL all-reduce") for n in notes)
        assert any(n.startswith(f"not checked: {node}: InfiniBand") for n in notes)
    assert rc == 0


def test_locked_memory_limit_is_a_warning_note(tmp_path):
    output = node_report("n0") + node_report("n1", ulimit="65536")
    _, report, _ = probe(tmp_path, output)
    limited = [n for n in report["notes"] if "ulimit -l" in n]
    assert len(limited) == 1 and limited[0].startswith("warning: n1:") and "65536" in limited[0]
    assert report["findings"] == []


def test_a_node_that_printed_nothing_is_said(tmp_path):
    _, report, _ = probe(tmp_path, node_report("n0"))
    assert any("only 1 of 2 nodes" in n for n in report["notes"])


def test_dry_run_prints_the_script_and_submits_nothing(tmp_path):
    bin_dir = fake_slurm(tmp_path, "")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "diag", "probe", "--nodes", "3", "--partition", "gpu", "--time", "7",
                           "--shared-path", "/pfs/my data", "--dry-run"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    script = done.stdout
    assert script.startswith("#!/bin/bash\n")
    for line in ("#SBATCH --nodes=3", "#SBATCH --partition=gpu", "#SBATCH --time=7"):
        assert line in script.splitlines()
    assert "'/pfs/my data'" in script  # quoted for the shell
    assert "--container-image" not in script
    assert not (tmp_path / "submitted.sh").exists()
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_the_node_part_runs_and_reads_back_here(tmp_path):
    """The node part of the script, run on this machine as one node: every report line parses."""
    from diag.probe import NODE_SCRIPT, parse

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / ".slurmdiag-probe-9").write_text("tok\n")
    env = {**os.environ, "SLURM_JOB_ID": "9", "SLURMD_NODENAME": "here", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", NODE_SCRIPT, "probe", "tok", str(shared), str(tmp_path / "nope")],
                          env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
    (tmp_path / "out").write_text(done.stdout)
    node = parse([str(tmp_path / "out")])["here"]
    assert node.first("done") == "ok"
    assert [v for v, _ in node.values["shared"]] == [f"{shared} ok", f"{tmp_path / 'nope'} missing"]
    assert node.first("ulimit-l")


@pytest.mark.parametrize("state", ["PENDING", "RUNNING"])
def test_wait_is_bounded(tmp_path, state):
    from diag.probe import ProbeError, wait_for

    def run(argv):
        return subprocess.CompletedProcess(argv, 0, f"JobId=1 JobState={state}\n", "")

    with pytest.raises(ProbeError, match="still " + state):
        wait_for("1", 0.3, poll_s=0.1, run=run)
