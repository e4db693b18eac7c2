"""Slurm integration without a cluster: real ``scontrol show job`` output captured on the lab
(Slurm 22.05), parsed, resolved to files, and weighed against the job's real log files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diag.api import diagnose_job, load_rules
from diag.epilog import EpilogOptions, job_id_from_env, run_epilog, should_run_here
from diag.input.sources import InputStats, Source, budget_bytes, read_blocks
from diag.slurm.query import (
    JobInfo,
    SlurmError,
    expand_pattern,
    job_files,
    parse_sacct_parsable,
    parse_scontrol,
    query_job,
    rank_files,
    select,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def captured(name: str, workdir: Path | None = None) -> list[JobInfo]:
    """A captured record; its /pfs/project/jobs/<case> paths moved to ``workdir``."""
    jobs = parse_scontrol((DATA / name).read_text())
    for job in jobs:
        if workdir is not None:
            old = job.work_dir
            job.work_dir = str(workdir)
            job.stdout = job.stdout.replace(old, str(workdir))
            job.stderr = job.stderr.replace(old, str(workdir))
    return jobs


def test_scontrol_record_of_a_time_limit():
    (job,) = captured("time-limit.scontrol.txt")
    assert (job.job_id, job.state, job.reason) == ("46", "TIMEOUT", "TimeLimit")
    assert job.nodes == ["n0", "n1"] and job.num_nodes == 2
    assert (job.run_time, job.time_limit, job.exit_code) == ("00:01:14", "00:01:00", "0:15")
    assert job.stdout.endswith("/train-timelimit-46.out") and job.stderr.endswith("/train-timelimit-46.err")


def test_one_line_records_of_array_tasks_and_het_components():
    jobs = parse_scontrol((DATA / "array-and-het.scontrol-o.txt").read_text())
    assert [j.job_id for j in jobs] == ["7", "8", "8+1", "10_1", "10_2"]
    assert [j.job_id for j in select(jobs, "10_1")] == ["10_1"]
    assert select(jobs, "10_1")[0].stdout.endswith("/arr-10_1.out")
    assert [j.job_id for j in select(jobs, "8")] == ["8", "8+1"]  # a het job is all its components
    assert [j.job_id for j in select(jobs, "8+1")] == ["8+1"]
    # An epilog's SLURM_JOB_ID is one record's numeric id, even when it is also the array's id.
    assert [j.job_id for j in select(jobs, "10", raw=True)] == ["10_2"]
    assert [j.job_id for j in select(jobs, "8", raw=True)] == ["8", "8+1"]
    with pytest.raises(SlurmError, match="array of 2 tasks .*name one"):
        select([j for j in jobs if j.array_job_id == "10"], "10")


def test_output_patterns_expand_as_sbatch_does():
    job = JobInfo(job_id="10_2", raw_id="10", name="train", user="alice", array_job_id="10", array_task_id="2",
                  batch_host="n0", work_dir="/pfs/run")  # fmt: skip
    assert expand_pattern("%x-%j.out", job) == "/pfs/run/train-10.out"
    assert expand_pattern("/logs/%u/%A_%a.err", job) == "/logs/alice/10_2.err"
    assert expand_pattern("out-%3a-%N-100%%.log", job) == "/pfs/run/out-002-n0-100%.log"
    assert expand_pattern("rank-%t.out", job) == "/pfs/run/rank-*.out"  # one file per task: a glob


def test_per_rank_files_named_after_the_job(tmp_path):
    for name in ("train-46.out", "train-46.err", "rank3-46.log", "train-460.out", "train-146.out", "notes.txt",
                 "train-46.out.gz", "slurmdiag-46.md"):  # fmt: skip
        (tmp_path / name).write_text("x\n")
    job = JobInfo(job_id="46", raw_id="46", work_dir=str(tmp_path))
    found = [os.path.basename(p) for p in rank_files(job, [str(tmp_path / "train-46.out")])]
    assert found == ["rank3-46.log", "train-46.err", "train-46.out", "train-46.out.gz"]


def test_array_task_files_do_not_take_a_sibling_task(tmp_path):
    for name in ("arr-10_1.out", "arr-10_2.out", "arr-10_12.out"):
        (tmp_path / name).write_text("x\n")
    job = JobInfo(job_id="10_1", raw_id="11", array_job_id="10", array_task_id="1", work_dir=str(tmp_path),
                  stdout=str(tmp_path / "arr-%A_%a.out"))  # fmt: skip
    files, missing = job_files([job])
    assert [os.path.basename(f) for f in files] == ["arr-10_1.out"] and not missing


def test_sacct_parsable_fields():
    fields = "JobIDRaw,JobID,JobName,User,State,ExitCode,DerivedExitCode,Reason,NodeList,NNodes,Timelimit,Elapsed"
    (job,) = parse_sacct_parsable("28|28|task-fail|root|COMPLETED|0:0|3:0|None|n[0-3]|4|UNLIMITED|00:00:03\n", fields)
    assert (job.state, job.derived_exit_code, job.nodes, job.num_nodes) == (
        "COMPLETED",
        "3:0",
        ["n0", "n1", "n2", "n3"],
        4,
    )


def test_time_limit_from_slurm_and_the_log_is_one_finding(tmp_path, rules):
    shutil.copy(DATA / "train-timelimit-46.err", tmp_path)
    (tmp_path / "train-timelimit-46.out").write_text("start 11:10:44 on n0 nodes=n[0-1]\n")
    report = diagnose_job(captured("time-limit.scontrol.txt", tmp_path), rules)
    top = report.findings[0]
    assert top.id == "job-time-limit" and top.confidence >= 0.95
    assert top.evidence[0].text.startswith("JobId=46 JobState=TIMEOUT Reason=TimeLimit")
    assert top.evidence[0].path == "scontrol show job -o 46"
    assert any("DUE TO TIME LIMIT" in e.text for e in top.evidence)  # the log line is kept as well
    assert "unexplained-failure" not in [f.id for f in report.findings]
    assert report.to_json()["slurm"][0]["state"] == "TIMEOUT"


def test_node_fail_known_only_to_slurm(tmp_path, rules):
    report = diagnose_job(captured("node-fail.scontrol.txt", tmp_path), rules)
    assert [f.id for f in report.findings] == ["node-failure"]
    assert "NODE_FAIL" in report.findings[0].detail
    assert any("no output file" in n for n in report.notes)
    assert {p.path for p in report.problems} == {str(tmp_path / "node-fail-50.out"), str(tmp_path / "node-fail-50.err")}


def test_completed_with_a_failed_task_says_slurm_and_logs_disagree(tmp_path, rules):
    for name in ("task-fail-28.out", "task-fail-28.err"):
        shutil.copy(DATA / name, tmp_path)
    jobs = captured("task-nonzero-exit.scontrol.txt", tmp_path)
    jobs[0].derived_exit_code = "3:0"  # jobcomp/sacct/the epilog environment know it; 22.05's scontrol does not
    report = diagnose_job(jobs, rules)
    assert report.findings[0].id == "unexplained-failure"
    (note,) = [n for n in report.notes if "COMPLETED" in n]
    assert "DerivedExitCode=3:0" in note and "exited with 3" in note


def test_preempted_and_requeued_job_is_noted(tmp_path, rules):
    report = diagnose_job(captured("preempted.scontrol.txt", tmp_path), rules)
    assert any("Restarts=1" in n for n in report.notes)
    assert any("CANCELLED" in n for n in report.notes)


def test_head_and_tail_of_a_big_file(tmp_path):
    path = tmp_path / "big.log"
    middle = b"".join(b"step %d loss 1.0\n" % i for i in range(200_000))
    path.write_bytes(b"first line\n" + middle + b"last line\n")
    stats = InputStats(str(path))
    data = b"".join(read_blocks(Source(str(path), max_bytes=64 * 1024), stats))
    assert data.startswith(b"first line\n") and data.endswith(b"last line\n")
    assert len(data) <= 64 * 1024 + 1 and stats.skipped_bytes == path.stat().st_size - 64 * 1024
    small = InputStats(str(path))
    assert b"".join(read_blocks(Source(str(path)), small)) == path.read_bytes() and small.skipped_bytes == 0


def test_budget_shares_bytes_between_files(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 1000)
    (tmp_path / "b").write_bytes(b"x" * 10_000_000)
    paths = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert budget_bytes(paths, 10, 5e6) is None  # everything fits
    assert budget_bytes(paths, 1, 1e6) == 999_000  # the small file whole, the rest for the big one


def test_budget_note_in_the_report(tmp_path, rules):
    err = tmp_path / "train-timelimit-46.err"
    err.write_bytes((DATA / "train-timelimit-46.err").read_bytes() + b"noise line\n" * 200_000)
    report = diagnose_job(captured("time-limit.scontrol.txt", tmp_path), rules, max_bytes_per_file=256 * 1024)
    assert report.findings[0].id == "job-time-limit"
    assert any("first and last 0.1 MiB were read" in n for n in report.notes)


def test_epilog_environment():
    env = {"SLURM_JOB_ID": "11", "SLURM_ARRAY_JOB_ID": "10", "SLURM_ARRAY_TASK_ID": "1"}
    assert job_id_from_env(env) == "10_1"
    node_env = {"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_NODELIST": "n[0-1]"}
    assert should_run_here({**node_env, "SLURMD_NODENAME": "n0"})
    assert not should_run_here({**node_env, "SLURMD_NODENAME": "n1"})  # once per job, not once per node
    assert should_run_here({"SLURM_SCRIPT_CONTEXT": "epilog_slurmctld", "SLURMD_NODENAME": "n1"})


def _epilog_env(tmp_path: Path) -> dict[str, str]:
    # A job id no cluster knows: scontrol/sacct fail (or are absent) and the environment is used.
    return {"SLURM_JOB_ID": "987654321", "SLURM_JOB_NODELIST": "n[0-1]", "SLURM_JOB_NUM_NODES": "2",
            "SLURM_JOB_STDOUT": str(tmp_path / "train-%j.out"), "SLURM_JOB_WORK_DIR": str(tmp_path),
            "SLURM_JOB_DERIVED_EC": "768", "SLURM_JOB_EXIT_CODE2": "0:0",
            "SLURM_SCRIPT_CONTEXT": "epilog_slurmctld"}  # fmt: skip


def test_epilog_writes_reports_next_to_the_output(tmp_path):
    shutil.copy(DATA / "task-fail-28.err", tmp_path / "train-987654321.out")
    log = tmp_path / "epilog.log"
    assert run_epilog(EpilogOptions(log_file=str(log)), _epilog_env(tmp_path)) == 0
    data = json.loads((tmp_path / "slurmdiag-987654321.json").read_text())
    assert data["findings"][0]["id"] == "unexplained-failure"
    assert data["slurm"][0]["derived_exit_code"] == "3:0"
    assert "## slurmdiag post-mortem: job 987654321" in (tmp_path / "slurmdiag-987654321.md").read_text()
    assert "wrote" in log.read_text()


def test_epilog_never_fails(tmp_path):
    log = tmp_path / "epilog.log"
    opts = EpilogOptions(output_dir=str(tmp_path / "no" / "such" / "dir"), log_file=str(log))
    assert run_epilog(opts, _epilog_env(tmp_path)) == 0
    assert "job 987654321" in log.read_text() and "error" in log.read_text()
    assert run_epilog(EpilogOptions(log_file=str(log)), {}) == 0
    assert "SLURM_JOB_ID is not set" in log.read_text()


def test_job_without_slurm_commands_is_a_clear_error():
    env = {**os.environ, "PATH": "/nonexistent"}
    done = subprocess.run([sys.executable, "-m", "diag", "job", "46"], capture_output=True, text=True, env=env,
                          cwd=REPO)  # fmt: skip
    assert done.returncode == 2
    assert "scontrol show job -o 46: scontrol: command not found" in done.stderr
    assert "sacct -j 46 --json: sacct: command not found" in done.stderr
    bad = subprocess.run([sys.executable, "-m", "diag", "job", "46;rm"], capture_output=True, text=True, cwd=REPO)
    assert bad.returncode == 2 and "not a job id" in bad.stderr


def test_query_refuses_what_is_not_a_job_id():
    with pytest.raises(SlurmError, match="not a job id"):
        query_job("--all")


# Two shapes of `sacct -j ID --json`, abridged to the fields slurmdiag reads: Slurm 21.08 (openapi
# dbv0.0.37: plain strings and numbers) and 23.02+ (data_parser v0.0.39+: state lists, numbers as
# {"set", "infinite", "number"} records, the signal under "id").
SACCT_21_08 = {
    "jobs": [
        {
            "job_id": 4123,
            "name": "train",
            "user": "alice",
            "allocation_nodes": 2,
            "nodes": "n[0-1]",
            "state": {"current": "TIMEOUT", "reason": "TimeLimit"},
            "exit_code": {"status": "SUCCESS", "return_code": 0},
            "derived_exit_code": {"status": "SUCCESS", "return_code": 0},
            "time": {"elapsed": 74, "limit": 1},
            "array": {"job_id": 0, "task_id": None},
            "het": {"job_id": 0, "job_offset": None},
            "working_directory": "/pfs/alice/run",
        }
    ]
}
SACCT_23_02 = {
    "jobs": [
        {
            "job_id": 4130, "name": "train", "user": "alice", "nodes": "n[0-3]",
            "allocation_nodes": 4,
            "state": {"current": ["OUT_OF_MEMORY"], "reason": "OutOfMemory"},
            "exit_code": {"status": ["SIGNALED"], "return_code": {"set": True, "infinite": False, "number": 0},
                          "signal": {"id": {"set": True, "infinite": False, "number": 9}, "name": "KILL"}},
            "derived_exit_code": {"status": ["SUCCESS"], "return_code": {"set": True, "number": 0}},
            "time": {"elapsed": 300, "limit": {"set": True, "infinite": False, "number": 60}},
            "array": {"job_id": 4129, "task_id": {"set": True, "infinite": False, "number": 1}},
            "het": {"job_id": 0, "job_offset": {"set": False, "infinite": False, "number": 0}},
            "restart_cnt": 1, "stdout": "/pfs/alice/run/train-%A_%a.out",
        }
    ]
}  # fmt: skip


def test_sacct_json_of_two_slurm_eras():
    import json

    from diag.slurm.query import parse_sacct_json

    (old,) = parse_sacct_json(json.dumps(SACCT_21_08))
    assert (old.job_id, old.state, old.reason, old.num_nodes) == ("4123", "TIMEOUT", "TimeLimit", 2)
    assert old.nodes == ["n0", "n1"] and old.exit_code == "0:0" and old.time_limit == "1 min"
    (new,) = parse_sacct_json(json.dumps(SACCT_23_02))
    assert (new.job_id, new.state, new.num_nodes, new.restarts) == ("4129_1", "OUT_OF_MEMORY", 4, 1)
    assert new.exit_code == "0:9" and new.time_limit == "60 min"
    assert new.nodes == ["n0", "n1", "n2", "n3"]
