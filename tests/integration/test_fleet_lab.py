"""``slurmdiag fleet`` against the real Slurm 22.05 of the lab, with accounting (slurmdbd + MariaDB):
a window scan finds exactly the jobs that ran, from one bulk ``sacct`` query; a real job array scans
a synthetic archive of thousands of jobs, a dependent job compacts, and the report names the
planted bad nodes and no healthy one."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .conftest import MPI_ENV, Job

pytestmark = pytest.mark.slurm
REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
TASKS = 4
ARCHIVE_JOBS = 2000


def _env() -> dict[str, str]:
    """The submitting environment (sbatch exports it to the job): the installed ``slurmdiag`` first
    on PATH, this checkout importable (an editable install already is; a plain checkout is not)."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, **MPI_ENV, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(REPO)}  # fmt: skip


def _slurmdiag() -> list[str]:
    installed = Path(sys.executable).parent / "slurmdiag"
    return [str(installed)] if installed.exists() else [sys.executable, "-m", "diag"]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*_slurmdiag(), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=_env())  # fmt: skip


def _sbatch(directory: Path, *args: str, user: str | None = None) -> str:
    argv = ["sbatch", "--parsable", *args]
    if user:
        argv = ["runuser", "-u", user, "--", *argv]
    done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, env=_env(), timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _sacct(*args: str) -> list[list[str]]:
    done = subprocess.run(["sacct", "-P", "-n", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.split("|") for line in done.stdout.splitlines() if line.strip()]


def _idle(timeout: float = 240) -> None:
    """No job of an earlier test still queued or running: the window must hold ours only."""
    deadline = time.monotonic() + timeout
    while subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.strip():
        assert time.monotonic() < deadline, "the lab's queue did not drain"
        time.sleep(0.5)


def _wait_gone(job_ids: list[str], timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while True:
        queued = subprocess.run(["squeue", "-h", "-o", "%A %F"], capture_output=True, text=True).stdout.split()
        if not set(queued) & set(job_ids):
            return
        assert time.monotonic() < deadline, f"jobs {job_ids} still queued: {queued}"
        time.sleep(0.5)


def _wait_accounted(since: str, job_ids: list[str], timeout: float = 120) -> None:
    """Until sacct shows every job of ``job_ids`` as ended."""
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(["sacct", "-a", "-X", "-n", "-P", "-S", since, "-o", "JobID,End"], capture_output=True,
                             text=True, timeout=30).stdout  # fmt: skip
        ended = {line.split("|")[0] for line in out.splitlines() if "|" in line and line.split("|")[1] not in ("", "Unknown")}
        if set(job_ids) <= ended:
            return
        assert time.monotonic() < deadline, f"sacct never showed {sorted(set(job_ids) - ended)} as ended"
        time.sleep(1)


@pytest.fixture(scope="module")
def accounting(lab):
    done = subprocess.run(["sacct", "-a", "-X", "-n", "-S", "now-1minutes", "-o", "JobID"], capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    if done.returncode != 0:
        problem = f"sacct does not answer ({(done.stderr or done.stdout).strip()[:200]}); the lab runs without " \
                  "accounting: apt-get install slurmdbd mariadb-server, then restart it"  # fmt: skip
        if os.environ.get("SLURMDIAG_REQUIRE_SLURM") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    return lab


def _job_dir(lab: Path, name: str) -> Path:
    directory = lab / "jobs" / f"{name}-{uuid.uuid4().hex[:8]}"
    directory.mkdir(parents=True)
    directory.chmod(0o1777)  # one job runs as nobody
    return directory


def test_window_scan_finds_exactly_the_jobs_that_ran(accounting):
    """Healthy and failing jobs of two users, an array and a two-node job. The README's accounting
    commands, as Slurm jobs: a 2-task array runs ``fleet scan --since T0 --until T1`` and a
    dependent job compacts; the store holds exactly those jobs with Slurm's state, exit codes,
    nodes and user. The lab's Epilog (``epilog --fleet-dir``) wrote a record of each too."""
    lab = accounting
    work = _job_dir(lab, "fleet-window")
    xid = next(p for p in (CORPUS / "syn-gpu-xid-79-epilog").iterdir() if p.suffix == ".out")
    shutil.copy(xid, work / "xid.log")
    _idle()
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    time.sleep(1)
    out = "--output=slurm-%j.out"
    ids = {
        "healthy": _sbatch(work, out, "-J", "healthy", "--wrap", "echo step 100 loss 0.5"),
        "xid": _sbatch(work, out, "-J", "xid", "--nodelist=n1", "--wrap", "cat xid.log; exit 1"),
        "pipe": _sbatch(work, out, "-J", "train|lr=0.1", "--wrap", "echo oops >&2; exit 3", user="nobody"),
        "killed": _sbatch(work, out, "-J", "killed", "-N2", "--ntasks-per-node=1", "--nodelist=n2,n3",
                          "--wrap", 'srun bash -c "kill -9 \\$\\$"'),  # fmt: skip
        "array": _sbatch(work, "--output=slurm-%A_%a.out", "-J", "sweep", "--array=0-1", "--wrap",
                         '[ "$SLURM_ARRAY_TASK_ID" = 0 ]'),  # fmt: skip
    }
    _wait_gone(list(ids.values()))
    a = ids["array"]
    expected = sorted([ids["healthy"], ids["xid"], ids["pipe"], ids["killed"], f"{a}_0", f"{a}_1"])
    _wait_accounted(since, expected)  # slurmctld hands records to slurmdbd asynchronously: slower on a busy host
    time.sleep(1)
    until = time.strftime("%Y-%m-%dT%H:%M:%S")

    fleet = work / "fleet"
    scan = f"slurmdiag fleet scan --since {since} --until {until} --shard $SLURM_ARRAY_TASK_ID/2 --out {fleet}"
    array = _sbatch(work, "--array=0-1", "-c1", "-t", "30", "-o", "scan-%a.out", "-e", "scan-%a.err", "--wrap", scan)
    compact = _sbatch(work, f"--dependency=afterok:{array}", "--kill-on-invalid-dep=yes", "-c1", "-o",
                      "compact.out", "--wrap", f"slurmdiag fleet compact {fleet}")  # fmt: skip
    assert Job(compact, work).wait() == "COMPLETED", (work / "compact.out").read_text()
    for i in (0, 1):  # each task asked sacct once, in JSON (22.05 with serializer/json)
        assert "6 finished job(s) in the window (sacct --json)" in (work / f"scan-{i}.err").read_text()
    records = {r["job_id"]: r for r in _rows(fleet)}
    assert sorted(records) == expected  # the scan array and the compact job ran after T1: not in it

    healthy, xid_job = records[ids["healthy"]], records[ids["xid"]]
    assert (healthy["state"], healthy["exit_code"], healthy["findings"]) == ("COMPLETED", "0:0", [])
    assert (xid_job["state"], xid_job["exit_code"], xid_job["nodes"]) == ("FAILED", "1:0", ["n1"])
    assert xid_job["top"] == "gpu-xid"  # the logs were found from WorkDir and diagnosed
    pipe = records[ids["pipe"]]
    assert (pipe["user"], pipe["state"], pipe["exit_code"]) == ("nobody", "FAILED", "3:0")
    killed = records[ids["killed"]]
    # srun exits 9 when its tasks are SIGKILLed (the derived code 0:9 races the step's record: not asserted)
    assert (killed["nodes"], killed["state"], killed["exit_code"]) == (["n2", "n3"], "FAILED", "9:0")
    assert all(r["user"] == "root" for k, r in records.items() if k != ids["pipe"])
    assert (records[f"{a}_1"]["array_job_id"], records[f"{a}_1"]["array_task_id"]) == (a, "1")
    assert (records[f"{a}_0"]["state"], records[f"{a}_1"]["state"], records[f"{a}_1"]["exit_code"]) == (
        "COMPLETED",
        "FAILED",
        "1:0",
    )
    assert all(r["partition"] == "debug" and r["cluster"] == "lab" and r["end_time"].endswith("Z")
               for r in records.values())  # fmt: skip
    # sacct -P alone (--sacct parsable, what an old Slurm gets) tells the same jobs the same way.
    plain = _run("fleet", "scan", "--since", since, "--until", until, "--out", str(work / "fleet-p"), "--sacct",
                 "parsable")  # fmt: skip
    assert plain.returncode == 0 and "6 finished job(s) in the window (sacct -P)" in plain.stderr, plain.stderr
    shard = Path(plain.stdout.strip().splitlines()[-1])
    keys = ("raw_id", "user", "account", "partition", "state", "exit_code", "nodes", "start_time", "end_time",
            "array_job_id", "array_task_id", "top")  # fmt: skip
    by_p = {r["job_id"]: [r[k] for k in keys] for r in map(json.loads, shard.read_text().splitlines())}
    assert by_p == {job_id: [r[k] for k in keys] for job_id, r in records.items()}
    # Scanned again with the same rules: nothing to redo.
    again = _run("fleet", "scan", "--since", since, "--until", until, "--out", str(fleet))
    assert again.returncode == 0 and "6 already scanned with these rules, 0 scanned" in again.stderr

    # The Epilog's records of the same jobs: the same keys, so folding them in adds no job. The
    # epilog becomes the job's user: nobody's job gets one only where nobody can run this Python
    # (not one under root's home, as a pyenv build is).
    spool = lab / "fleet" / "spool"
    want = set(records)
    runs = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", "import gzip"], capture_output=True)
    if runs.returncode != 0:
        want.discard(ids["pipe"])
    deadline = time.monotonic() + 30
    while not want <= set(epilog := {p.stem[len("lab-"):]: p for p in spool.glob("*/lab-*.json")
                                     if p.stem[len("lab-"):] in records}):  # fmt: skip
        assert time.monotonic() < deadline, f"the epilog wrote records of {sorted(epilog)} only; see {lab}/log"
        time.sleep(0.5)
    for job_id, path in epilog.items():
        record = json.loads(path.read_text())
        assert record["producer"] == "epilog" and record["nodes"] == records[job_id]["nodes"], record
        assert record["user"] == records[job_id]["user"]
        (fleet / "shards").mkdir(exist_ok=True)
        shutil.copy(path, fleet / "shards" / f"epilog-{job_id}.jsonl")
    assert _run("fleet", "compact", str(fleet)).returncode == 0
    assert sorted(r["job_id"] for r in _rows(fleet)) == expected


@pytest.mark.slow
def test_job_array_scans_an_archive_and_the_report_names_the_planted_nodes(accounting):
    """The README's admin commands, as Slurm jobs: a 4-task array scans a synthetic archive of
    2,000 jobs (planted bad nodes), a dependent job compacts, the report ranks the planted nodes."""
    sys.path.insert(0, str(REPO))
    from tests.fleet.synthetic import build_archive

    lab = accounting
    work = _job_dir(lab, "fleet-array")
    try:
        archive = build_archive(work / "archive", jobs=ARCHIVE_JOBS)
        fleet = work / "fleet"
        scan = f"slurmdiag fleet scan {archive.root} --shard $SLURM_ARRAY_TASK_ID/{TASKS} --out {fleet} --cluster syn"
        # at most 2 tasks at once: the throttle that spares a parallel file system
        array = _sbatch(work, f"--array=0-{TASKS - 1}%2", "-c1", "-t", "30", "-o", "scan-%a.out", "-e",
                        "scan-%a.err", "--wrap", scan)  # fmt: skip
        compact = _sbatch(work, f"--dependency=afterok:{array}", "--kill-on-invalid-dep=yes", "-c1", "-o",
                          "compact.out", "--wrap", f"slurmdiag fleet compact {fleet}")  # fmt: skip
        assert Job(compact, work).wait(timeout=540) == "COMPLETED", (work / "compact.out").read_text()
        tasks = _sacct("-j", array, "-X", "-o", "JobID,State")
        assert sorted(tasks) == [[f"{array}_{i}", "COMPLETED"] for i in range(TASKS)]
        rates = []
        for i in range(TASKS):
            log = (work / f"scan-{i}.err").read_text()
            m = re.search(rf"shard {i}/{TASKS}: (\d+) of {ARCHIVE_JOBS} .* (\d+) scanned, 0 failed in ([\d.]+) s", log)
            assert m, log
            rates.append(int(m[2]) / float(m[3]))
        print(f"\nfleet scan on the lab: {', '.join(f'{r:.0f}' for r in rates)} jobs/s per array task")
        assert "records from" in (work / "compact.out").read_text()

        report = json.loads(_run("fleet", "report", str(fleet), "--format", "json").stdout)
        assert report["jobs"] == ARCHIVE_JOBS
        named = [entry["node"] for entry in report["bad_nodes"]]
        assert set(named) == set(archive.bad), named  # the planted ones, and no healthy node
        assert archive.script_bug_node not in named  # one user's broken script does not brand a node

        # Compacting again changes nothing; the same records folded again give the same store.
        store = sorted((fleet / "store").rglob("*.parquet"))
        before = {p: p.read_bytes() for p in store}
        again = _run("fleet", "compact", str(fleet))
        assert again.returncode == 0 and "0 records from 0 files" in again.stdout
        assert {p: p.read_bytes() for p in sorted((fleet / "store").rglob("*.parquet"))} == before
        rows = _rows(fleet)
        (fleet / "shards" / "again.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert _run("fleet", "compact", str(fleet)).returncode == 0
        assert _rows(fleet) == rows

        # A half-written line (a task killed mid-write) is reported and skipped; its neighbours stay.
        extra = {**rows[0], "job_id": "999999", "raw_id": "999999"}
        torn = fleet / "shards" / "torn.jsonl"
        torn.write_text(json.dumps(extra) + "\n" + json.dumps(rows[1])[:80])
        done = _run("fleet", "compact", str(fleet))
        assert done.returncode == 0
        assert f"{torn}:2:" in done.stderr and "1 records from 1 files" in done.stdout
        assert len(_rows(fleet)) == len(rows) + 1
        assert (fleet / "rejected" / "shards__torn.jsonl").exists() and not torn.exists()  # kept for a person
        after = json.loads(_run("fleet", "report", str(fleet), "--format", "json").stdout)
        assert [e["node"] for e in after["bad_nodes"]] == named
    finally:
        shutil.rmtree(work / "archive", ignore_errors=True)  # ~200 MB of logs


def _rows(fleet: Path) -> list[dict]:
    """Every stored record, as JSON, in a stable order."""
    import duckdb

    con = duckdb.connect()
    glob = str(fleet / "store" / "*" / "*.parquet")
    text = con.execute(f"SELECT to_json(t)::VARCHAR FROM read_parquet('{glob}', hive_partitioning = false) t ORDER BY cluster, job_id").fetchall()
    return [json.loads(row[0]) for row in text]
