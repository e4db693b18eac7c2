"""``slurmdiag job ID`` and ``slurmdiag epilog`` against a real Slurm 22.05 (the lab cluster):
real jobs fail in real ways, and the diagnosis must name why."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Job, submit

pytestmark = pytest.mark.slurm
REPO = Path(__file__).resolve().parents[2]
HEADER = "#!/bin/bash\n#SBATCH --output=%x-%j.out\n#SBATCH --error=%x-%j.err\n"


def slurmdiag_job(job_id: str, *args: str) -> tuple[int, dict, str]:
    done = subprocess.run([sys.executable, "-m", "diag", "job", job_id, "--format", "json", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def ids(report: dict) -> list[str]:
    return [f["id"] for f in report["findings"]]


def mpi_hello(lab: Path) -> str:
    binary = lab / "bin" / "mpi_hello"
    if not binary.exists():
        pytest.skip("mpicc was not available when the lab started (apt-get install libopenmpi-dev)")
    return str(binary)


@pytest.fixture(scope="module")
def time_limit_job(lab):
    """Submitted first, checked last: the 1-minute limit runs while the other cases do."""
    from .conftest import RUN_SLOW

    if not RUN_SLOW:
        return None
    script = (
        HEADER
        + "#SBATCH --job-name=train-timelimit\n#SBATCH --time=1\n"
        + ("echo start\nsrun --label bash -c 'echo \"rank $SLURM_PROCID on $SLURMD_NODENAME\"; sleep 600'\n")
    )
    return submit(lab, script, "--nodes=2", "--ntasks-per-node=1", "--nodelist=n0,n1", name="time-limit")


def test_task_exits_non_zero_while_slurm_says_completed(lab, time_limit_job):
    script = (
        HEADER
        + "#SBATCH --job-name=task-fail\n"
        + """srun --label bash -c '
echo "rank $SLURM_PROCID on $SLURMD_NODENAME"
if [ "$SLURM_PROCID" = 2 ]; then
  python3 -c "raise RuntimeError(\\"rank 2: CUDA error: an illegal memory access (simulated)\\")"
  exit 3
fi
sleep 1; echo "rank $SLURM_PROCID done"'
echo "srun exit code: $?"
"""
    )
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=2", "--nodelist=n2,n3", name="task-fail")
    assert job.wait() == "COMPLETED"  # Slurm's verdict: the batch script's last command succeeded
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1
    assert ids(report)[0] == "unexplained-failure"
    assert "RuntimeError: rank 2" in report["findings"][0]["detail"]
    assert any("COMPLETED" in n and "unexplained-failure" in n for n in report["notes"])
    assert report["slurm"][0]["state"] == "COMPLETED"
    # The Epilog (slurm.conf Epilog= tests/integration/lab/start's wrapper) wrote its report by the .out.
    path = job.dir / f"slurmdiag-{job.id}.json"
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert path.exists(), f"the epilog wrote no report; see {lab}/log/slurmdiag-epilog.log"
    epilog_report = json.loads(path.read_text())
    assert epilog_report["findings"][0]["id"] == "unexplained-failure"
    assert epilog_report["slurm"][0]["state"] in ("COMPLETING", "COMPLETED")  # an epilog runs before the end
    assert (job.dir / f"slurmdiag-{job.id}.md").exists()


def test_memory_kill(lab):
    script = (
        HEADER
        + "#SBATCH --job-name=oom-batch\n"
        + """python3 -c '
import time
blocks = []
for i in range(100):
    blocks.append(bytearray(25 * 1024 * 1024))
    print(f"allocated {25 * len(blocks)} MiB", flush=True)
    time.sleep(0.25)
'
echo "python exit code: $?"
"""
    )
    job = submit(lab, script, "--nodes=1", "--mem=200M", "--nodelist=n2", name="oom")
    job.wait()
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1 and ids(report)[0] == "job-oom"
    assert any("exceeded memory limit" in e["text"] for e in report["findings"][0]["evidence"])


def test_node_set_down_mid_job(lab):
    script = (
        HEADER
        + "#SBATCH --job-name=node-fail\n#SBATCH --no-requeue\n"
        + ("srun --label bash -c 'echo \"rank $SLURM_PROCID on $SLURMD_NODENAME\"; sleep 600'\n")
    )
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=1", "--nodelist=n2,n3", name="node-fail")
    job.wait(("RUNNING",))
    time.sleep(2)
    try:
        subprocess.run(["scontrol", "update", "nodename=n3", "state=down", "reason=slurmdiag test"], check=True)
        assert job.wait() == "NODE_FAIL"
    finally:
        subprocess.run(["scontrol", "update", "nodename=n3", "state=resume"], check=False)
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1 and ids(report)[0] == "node-failure"
    top = report["findings"][0]
    assert top["evidence"][0]["text"].startswith(f"JobId={job.id} JobState=NODE_FAIL Reason=NodeDown")
    assert "unexplained-failure" not in ids(report)


def test_pmix_plugin_that_does_not_exist(lab):
    script = HEADER + "#SBATCH --job-name=pmix-v9\n" + 'srun --mpi=pmix_v9 --label hostname\necho "srun: $?"\n'
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=1", "--nodelist=n2,n3", name="pmix-v9")
    job.wait()
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1 and ids(report)[0] == "pmix-plugin-missing"


def test_open_mpi_program_without_pmix(lab):
    binary = mpi_hello(lab)
    script = HEADER + "#SBATCH --job-name=mpi-hello-nopmix\n" + f'srun --label {binary}\necho "srun: $?"\n'
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=2", "--nodelist=n2,n3", name="mpi-no-pmix")
    job.wait()
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1 and ids(report)[0] == "pmix-not-used"


def test_checkpoint_in_private_tmp_read_on_another_node(lab):
    conf = Path("/etc/slurm/slurm.conf").read_text()
    if "private_tmp=1" not in conf:
        pytest.skip("the lab runs without SLURM_LAB_PRIVATE_TMP=1: fake nodes share /tmp")
    script = (
        HEADER
        + "#SBATCH --job-name=ckpt-tmp\n"
        + """CKPT=/tmp/ckpt-$SLURM_JOB_ID.pt
srun --nodes=1 --ntasks=1 --relative=0 bash -c "echo saving checkpoint to $CKPT on \\$SLURMD_NODENAME; python3 -c 'import pickle; pickle.dump({\\"step\\": 1000}, open(\\"$CKPT\\", \\"wb\\"))'"
srun --nodes=1 --ntasks=1 --relative=1 bash -c "echo loading on \\$SLURMD_NODENAME; python3 -c 'import pickle; print(pickle.load(open(\\"$CKPT\\", \\"rb\\")))'"
echo "load step exit code: $?"
"""
    )
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=1", "--nodelist=n2,n3", name="ckpt")
    job.wait()
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 1 and ids(report)[0] == "node-local-path"
    assert f"/tmp/ckpt-{job.id}.pt" in report["findings"][0]["detail"]


def test_healthy_job_has_a_clean_report(lab):
    script = HEADER + "#SBATCH --job-name=healthy\n" + "srun --label bash -c 'echo rank $SLURM_PROCID on $(hostname)'\n"
    job = submit(lab, script, "--nodes=2", "--ntasks-per-node=2", "--nodelist=n2,n3", name="healthy")
    assert job.wait() == "COMPLETED"
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 0 and report["findings"] == [] and report["notes"] == []
    assert report["facts"]["nodes"] == 2 and report["summary"] == "no known problem found"


def test_array_task_resolves_to_its_own_files(lab):
    script = (
        HEADER.replace("%x-%j", "%x-%A_%a")
        + "#SBATCH --job-name=arr\n"
        + ('srun bash -c "echo task $SLURM_ARRAY_TASK_ID; [ $SLURM_ARRAY_TASK_ID = 2 ] && exit 3; exit 0"\necho done\n')
    )
    first = submit(lab, script, "--array=1-2", "--nodes=1", "--nodelist=n2", name="array")
    array_id = first.id
    Job(f"{array_id}_1", first.dir).wait()
    Job(f"{array_id}_2", first.dir).wait()
    rc, report, _ = slurmdiag_job(f"{array_id}_2")
    assert rc == 1 and ids(report)[0] == "unexplained-failure"
    assert [Path(i["path"]).name for i in report["inputs"]] == [f"arr-{array_id}_2.out", f"arr-{array_id}_2.err"]
    rc, report, _ = slurmdiag_job(f"{array_id}_1")
    assert rc == 0 and report["findings"] == []
    rc, _, err = slurmdiag_job(array_id)
    assert rc == 2 and "array of 2 tasks" in err
    # The Epilog gets the task's numeric SLURM_JOB_ID; its report is named like the task's files.
    for task in ("1", "2"):
        path = first.dir / f"slurmdiag-{array_id}_{task}.json"
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert json.loads(path.read_text())["job"] == f"{array_id}_{task}"


def test_unknown_job_is_a_clear_error(lab):
    rc, _, err = slurmdiag_job("987654321")
    assert rc == 2
    assert "scontrol show job -o 987654321: slurm_load_jobs error: Invalid job id specified" in err
    assert "sacct -j 987654321" in err


@pytest.mark.slow
def test_time_limit(lab, time_limit_job):
    assert time_limit_job.wait(timeout=240) == "TIMEOUT"
    rc, report, _ = slurmdiag_job(time_limit_job.id)
    assert rc == 1 and ids(report)[0] == "job-time-limit"
    evidence = [e["text"] for e in report["findings"][0]["evidence"]]
    assert evidence[0].startswith(f"JobId={time_limit_job.id} JobState=TIMEOUT Reason=TimeLimit")
    assert any("DUE TO TIME LIMIT" in t for t in evidence)


def test_job_and_epilog_read_only_the_jobs_own_files(lab):
    """Another job's file whose name holds this job's id, and training logs named with its digits,
    sit in the submit directory: the report must rest on the job's own .out/.err alone."""
    script = HEADER + "#SBATCH --job-name=healthy\n" + "srun --label bash -c 'echo rank $SLURM_PROCID on $(hostname)'\n"
    job = submit(lab, script, "--hold", "--nodes=2", "--ntasks-per-node=1", "--nodelist=n2,n3", name="own-files")
    pmix_error = "srun: error: Couldn't find the specified plugin name for mpi/pmix_v9 looking at all files\n"
    failure = "Traceback (most recent call last):\nRuntimeError: loss is NaN at step 17\nsrun: error: n1: task 3: Exited with exit code 1\n"
    decoys = {f"pmix{job.id}-{int(job.id) + 1000}.err": pmix_error, f"epoch{job.id}.log": failure,
              f"ckpt-step{job.id}.txt": failure, f"run{job.id}b.out": failure, f"lr1e-{job.id}.log": failure}  # fmt: skip
    for name, text in decoys.items():
        (job.dir / name).write_text(text)
    subprocess.run(["scontrol", "release", job.id], check=True, timeout=30)
    assert job.wait() == "COMPLETED"
    own = [f"healthy-{job.id}.out", f"healthy-{job.id}.err"]
    rc, report, _ = slurmdiag_job(job.id)
    assert rc == 0 and report["findings"] == []
    assert sorted(Path(i["path"]).name for i in report["inputs"]) == sorted(own)
    text = subprocess.run([sys.executable, "-m", "diag", "job", job.id, "--no-color"], cwd=REPO, capture_output=True,
                          text=True, timeout=120).stdout  # fmt: skip
    read = next(line for line in text.splitlines() if line.startswith("read: "))
    assert all(name in read for name in own) and not any(name in read for name in decoys)
    # The per-node Epilog (on n2, while Slurm still completes the job) sees the whole allocation.
    path = job.dir / f"slurmdiag-{job.id}.json"
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.3)
    epilog_report = json.loads(path.read_text())
    assert epilog_report["findings"] == []
    assert sorted(Path(i["path"]).name for i in epilog_report["inputs"]) == sorted(own)
    assert epilog_report["slurm"][0]["num_nodes"] == 2 and epilog_report["facts"]["nodes"] == 2


def test_probe_reports_what_the_lab_cannot_check(lab):
    """`slurmdiag probe` on the lab's nodes: no GPUs and no InfiniBand are 'not checked', never a
    pass or a finding; the jobs directory is one shared directory, the per-node private /tmp is not."""
    directory = lab / "jobs" / f"probe-{time.monotonic_ns()}"
    directory.mkdir(parents=True)
    args = ["probe", "--nodes", "2", "--shared-path", str(lab / "jobs"), "--wait", "120", "--format", "json",
            "--output-dir", str(directory)]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "diag", *args], cwd=directory, capture_output=True, text=True,
                          timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr  # documented: 0, nothing at or above --fail-on error
    report = json.loads(done.stdout)
    assert report["slurm"][0]["state"] == "COMPLETED"
    assert ids(report) == []
    nodes = sorted({n.split(":")[1].strip() for n in report["notes"] if n.startswith("not checked: ")})
    assert len(nodes) == 2
    for node in nodes:
        for what in ("InfiniBand", "GPUs", "NCCL all-reduce"):
            assert any(n.startswith(f"not checked: {node}: {what}") for n in report["notes"]), (node, what)
    assert any(n.startswith(f"{lab / 'jobs'}: one shared directory") for n in report["notes"])
    if "private_tmp=1" not in Path("/etc/slurm/slurm.conf").read_text():
        return  # this lab shares /tmp between its fake nodes (a checkout under /tmp): nothing to tell apart
    # The lab gives each node its own /tmp: the same name, not the same directory.
    done = subprocess.run([sys.executable, "-m", "diag", *args, "--shared-path", "/tmp"], cwd=directory,
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr
    (hit,) = [f for f in report["findings"] if f["id"] == "shared-storage-missing"]
    assert len(hit["hosts"]) == 1 and "/tmp" in hit["detail"]


def test_follow_alerts_early_once_and_diagnoses_the_ended_job(lab):
    """`slurmdiag follow --jobid` on a 2-node job that shows a wrong NCCL_IB_HCA in its first lines and
    keeps running: one alert while it runs (seconds after start, long before it ends), none twice,
    and the full diagnosis, with Slurm's record, when it ends."""
    script = HEADER + (
        "#SBATCH -N 2 --ntasks-per-node=1\n"
        'srun --label bash -c \'if [ "$SLURM_PROCID" = 1 ]; then '
        'echo "$(hostname):55:55 [0] NCCL INFO NCCL_IB_HCA set to mlx5_9:1"; '
        'echo "$(hostname):55:55 [0] NCCL INFO NET/IB : No device found."; '
        'echo "$(hostname):55:55 [0] NCCL INFO Using network Socket"; fi; '
        'for i in $(seq 1 10); do echo "step $i loss 2.$i"; sleep 1; done\'\n'
    )
    job = submit(lab, script, "-J", "follow")
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "diag", "follow", "--jobid", job.id, "--interval", "0.5", "--job-poll", "2",
         "--settle", "2", "--format", "json"],
        cwd=job.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    first_alert = None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if first_alert is None and "nccl-ib-hca-wrong" in line:
            first_alert = time.monotonic() - started
    out = proc.stdout.read()
    proc.wait(timeout=120)
    assert first_alert is not None, "".join(lines)
    assert first_alert < 9, f"the alert came {first_alert:.1f} s after submission, not while the job ran"
    assert sum("nccl-ib-hca-wrong" in line for line in lines) == 1, "".join(lines)
    report = json.loads(out)
    assert proc.returncode == 1
    assert report["slurm"][0]["state"] == "COMPLETED"
    assert ids(report)[0] == "nccl-ib-hca-wrong"
