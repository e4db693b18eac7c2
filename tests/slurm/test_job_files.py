"""``slurmdiag job`` and the epilog read only the job's own files.

The layouts are the lab's (one submit directory, ``--output=%x-%j.out``): small ids, names that
hold other numbers (``pmix9``, ``epoch10``), and the report must rest on the job's files alone,
and say which they are."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from diag.api import diagnose_job, load_rules
from diag.epilog import EpilogOptions, run_epilog
from diag.formats.markdown import render_markdown
from diag.formats.terminal import render_terminal
from diag.slurm.query import JobInfo, job_files, parse_scontrol

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
CORPUS = Path(__file__).resolve().parents[2] / "corpus"
PMIX_V9 = (CORPUS / "real-slurm-pmix-v9-absent" / "pmix-v9-38.err").read_text()
TASK_FAIL = (DATA / "task-fail-28.err").read_text()
HEALTHY = "0: n2\n1: n2\n2: n3\n3: n3\n"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def record(directory: Path, job_id: str, name: str, state: str, nodes: str = "n[2-3]", num: int = 2) -> JobInfo:
    """An ``scontrol show job -o`` record as Slurm 22.05 prints it: StdOut/StdErr already expanded."""
    text = (
        f"JobId={job_id} JobName={name} UserId=root(0) GroupId=root(0) JobState={state} Reason=None "
        f"ExitCode=0:0 RunTime=00:00:03 TimeLimit=UNLIMITED NodeList={nodes} BatchHost=n2 NumNodes={num} "
        f"WorkDir={directory} StdErr={directory}/{name}-{job_id}.err StdIn=/dev/null "
        f"StdOut={directory}/{name}-{job_id}.out"
    )
    (job,) = parse_scontrol(text)
    return job


def lab_directory(tmp_path: Path) -> Path:
    """Three jobs of the user study in one submit directory, and files that only look like theirs."""
    files = {
        "pmix9-7.out": "srun: 1\n",  # job 7: srun --mpi=pmix_v9
        "pmix9-7.err": PMIX_V9,
        "healthy-10.out": HEALTHY,  # job 10: srun hostname
        "healthy-10.err": "",
        "epoch10.log": TASK_FAIL,  # a training log, not job 10's
        "ckpt-step10.txt": TASK_FAIL,
        "lr1e-10.log": TASK_FAIL,
        "run10b.out": TASK_FAIL,
        "timelimit-9.out": HEALTHY,  # job 9: --time=1
        "timelimit-9.err": "",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def names(paths) -> list[str]:
    return sorted(os.path.basename(p) for p in paths)


def test_a_job_does_not_take_another_jobs_file_whose_name_holds_its_id(tmp_path, rules):
    directory = lab_directory(tmp_path)
    job9 = record(directory, "9", "timelimit", "RUNNING")
    files, _ = job_files([job9])
    assert names(files) == ["timelimit-9.err", "timelimit-9.out"]
    report = diagnose_job([job9], rules)
    assert "pmix-plugin-missing" not in [f.id for f in report.findings]
    # Job 7 still reads its own file, whose name holds a 9.
    report7 = diagnose_job([record(directory, "7", "pmix9", "FAILED")], rules)
    assert report7.findings[0].id == "pmix-plugin-missing"
    assert names(i.path for i in report7.inputs) == ["pmix9-7.err", "pmix9-7.out"]


def test_a_healthy_job_stays_healthy_beside_logs_named_with_its_digits(tmp_path, rules):
    directory = lab_directory(tmp_path)
    report = diagnose_job([record(directory, "10", "healthy", "COMPLETED")], rules)
    assert report.findings == [] and report.summary() == "no known problem found"
    assert names(i.path for i in report.inputs) == ["healthy-10.err", "healthy-10.out"]


def test_per_rank_files_of_the_job_are_still_read(tmp_path, rules):
    directory = lab_directory(tmp_path)
    for name in ("healthy-10.rank1.log", "rank3-10.log", "10.rank2.err", "healthy-10_3.out", "train-1_10.out",
                 "x-10-7.err"):  # fmt: skip
        (directory / name).write_text(HEALTHY)
    files, _ = job_files([record(directory, "10", "healthy", "COMPLETED")])
    # healthy-10_3 is task 3 of an array 10, train-1_10 task 10 of array 1, x-10-7 job 7's.
    assert names(files) == ["10.rank2.err", "healthy-10.err", "healthy-10.out", "healthy-10.rank1.log",
                            "rank3-10.log"]  # fmt: skip


def test_an_unexpanded_output_pattern_chooses_the_siblings(tmp_path):
    # sacct (23.02+) and the epilog environment give the pattern, not the path.
    for name in ("train-46.out", "train-46.err", "train-46-3.log", "train-460.out", "eval-46.log", "46-9.log"):
        (tmp_path / name).write_text("x\n")
    job = JobInfo(job_id="46", raw_id="46", name="train", work_dir=str(tmp_path), stdout="%x-%j.out")
    files, missing = job_files([job])
    # train-46-3.log follows the job's own pattern; eval-46.log carries the id as a whole part;
    # 46-9.log is job 9's (the number in %j's place).
    assert names(files) == ["eval-46.log", "train-46-3.log", "train-46.err", "train-46.out"] and not missing


def test_the_text_and_markdown_reports_name_every_file_read(tmp_path, rules):
    directory = lab_directory(tmp_path)
    (directory / "pmix9-7.rank0.log").write_text("rank 0 starting\n")
    report = diagnose_job([record(directory, "7", "pmix9", "FAILED")], rules)
    read = [i.path for i in report.inputs]
    assert len(read) == 3
    text = render_terminal(report, color=False)
    header = text.split("\n\n", 1)[0]
    assert all(path in header for path in read)
    markdown = render_markdown(report)
    assert all(f"`{path}`" in markdown for path in read)


def test_the_epilog_reads_only_the_jobs_own_files(tmp_path, monkeypatch):
    directory = lab_directory(tmp_path)
    # scontrol cannot be asked here (no such job): the epilog environment names the output pattern.
    env = {"SLURM_JOB_ID": "10", "SLURM_JOB_NAME": "healthy", "SLURM_JOB_NODELIST": "n[2-3]",
           "SLURM_JOB_STDOUT": str(directory / "%x-%j.out"), "SLURM_JOB_WORK_DIR": str(directory),
           "SLURM_SCRIPT_CONTEXT": "epilog_slurmctld"}  # fmt: skip
    monkeypatch.setenv("PATH", "/nonexistent")  # no scontrol/sacct: the environment is all there is
    assert run_epilog(EpilogOptions(log_file=str(tmp_path / "epilog.log")), env) == 0
    data = json.loads((directory / "slurmdiag-10.json").read_text())
    assert data["findings"] == []
    assert names(i["path"] for i in data["inputs"]) == ["healthy-10.err", "healthy-10.out"]
