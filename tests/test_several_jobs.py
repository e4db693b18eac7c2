"""Logs of several Slurm jobs given together are diagnosed one job at a time.

Two real lab jobs (a time limit and a memory kill) in one folder once became one causal story:
"time limit ... after job-oom". Each job now gets its own report, named after its job and its files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diag.api import diagnose, diagnose_paths, load_rules
from diag.slurm.jobid import group_by_job, job_id_of

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def two_jobs(tmp_path: Path) -> Path:
    """A user's ~/logs: the time-limit job and the memory-killed job, as sbatch named them."""
    for src, dst in (("real-slurm-time-limit/train-timelimit-46.out", "train-timelimit-4046.out"),
                     ("real-slurm-time-limit/train-timelimit-46.err", "train-timelimit-4046.err"),
                     ("real-slurm-oom/oom-step-21.out", "oom-step-4021.out"),
                     ("real-slurm-oom/oom-step-21.err", "oom-step-4021.err")):  # fmt: skip
        shutil.copy(CORPUS / src, tmp_path / dst)
    return tmp_path


def by_job(reports) -> dict:
    return {r.job: r for r in reports}


def test_two_unrelated_jobs_in_one_folder_give_two_reports(tmp_path, rules):
    reports, _ = diagnose_paths([str(two_jobs(tmp_path))], rules)
    jobs = by_job(reports)
    assert sorted(jobs) == ["4021", "4046"]
    assert {Path(i.path).name for i in jobs["4046"].inputs} == {"train-timelimit-4046.out", "train-timelimit-4046.err"}
    time_limit, oom = jobs["4046"].findings[0], jobs["4021"].findings[0]
    assert (time_limit.id, oom.id) == ("job-time-limit", "job-oom")
    # Neither job's finding is told as coming after the other's.
    for report in reports:
        for f in report.findings:
            assert f.explained_by is None and "job-oom" not in f.detail and "job-time-limit" not in f.detail
    assert time_limit.severity == "error"


def test_naming_the_job_reads_everything_as_one(tmp_path, rules):
    reports, _ = diagnose_paths([str(two_jobs(tmp_path))], rules, job="4046")
    assert len(reports) == 1 and len(reports[0].inputs) == 4 and reports[0].job == "4046"


def test_files_without_a_job_id(tmp_path, rules):
    folder = two_jobs(tmp_path)
    (folder / "nccl-debug.log").write_text("n0:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n")
    reports, _ = diagnose_paths([str(folder)], rules)
    # Beside two jobs, they are a report of their own ...
    assert sorted(str(r.job) for r in reports) == ["4021", "4046", "None"]
    alone = by_job(reports)[None]
    assert [Path(i.path).name for i in alone.inputs] == ["nccl-debug.log"]
    # ... beside one job, they are that job's.
    for name in ("oom-step-4021.out", "oom-step-4021.err"):
        (folder / name).unlink()
    (report,) = diagnose_paths([str(folder)], rules)[0]
    assert report.job == "4046" and len(report.inputs) == 3


def test_a_run_of_task_numbers_is_one_job():
    # srun -o out-%j-%t.log on 40 tasks: ranks 100..139 look like ids, but they are one job's tasks.
    paths = [f"out-5512-{t}.log" for t in range(100, 140)]
    assert group_by_job(paths) == [(None, list(range(40)))]
    assert job_id_of("slurm-46.out") == "46" and job_id_of("rank-46.log") is None  # sbatch's default name only
    assert group_by_job(["slurm-46.out", "slurm-46_2.out", "x.log"]) == [("46", [0]), ("46_2", [1]), (None, [2])]


def test_the_library_returns_one_report_per_job(tmp_path, rules):
    result = diagnose([str(two_jobs(tmp_path))], rules=rules)
    assert isinstance(result, list) and len(result) == 2


def slurmdiag(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diag", *args], capture_output=True, text=True, cwd=REPO)


def test_cli_prints_each_job_under_its_own_header(tmp_path):
    folder = two_jobs(tmp_path)
    done = slurmdiag("--no-color", str(folder))
    assert done.returncode == 1
    assert "2 jobs (4021, 4046)" in done.stderr
    blocks = [b for b in done.stdout.split("slurmdiag: job ")[1:]]
    assert [b.split(":", 1)[0] for b in blocks] == ["4021", "4046"]
    for block in blocks:
        job = block.split(":", 1)[0]
        read = next(line for line in block.splitlines() if line.startswith("read: "))
        assert read.count(job) == 2 and read.count(".out") == 1 and read.count(".err") == 1
    data = json.loads(slurmdiag("--format", "json", str(folder)).stdout)
    assert isinstance(data, list) and [d["job"] for d in data] == ["4021", "4046"]
    html = slurmdiag("--format", "html", str(folder))
    assert html.returncode == 2 and "2 jobs" in html.stderr and "--job" in html.stderr


def test_per_file_text_names_each_file(tmp_path):
    folder = two_jobs(tmp_path)
    done = slurmdiag("--no-color", "--per-file", str(folder / "oom-step-4021.out"), str(folder / "oom-step-4021.err"))
    headers = [line for line in done.stdout.splitlines() if line.startswith("read: ")]
    assert sorted(headers) == [f"read: {folder / 'oom-step-4021.err'}", f"read: {folder / 'oom-step-4021.out'}"]
