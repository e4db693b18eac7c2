"""Honesty about coverage: a report says which kinds of evidence it read and which causes it could
therefore not check; an empty input is an error, and Slurm's own error lines are never healthy."""

from __future__ import annotations

import json

from diag.api import diagnose_bytes

from ..reports import corpus_report
from ..test_cli import run

TRAINING_ONLY = b"step 100 loss 2.31 tokens/s 1200\nstep 200 loss 2.05 tokens/s 1180\n"


def _unchecked(report) -> dict[str, list[str]]:
    return {u.missing: u.causes for u in report.coverage.unchecked}


def test_log_without_nccl_info_says_transport_was_not_checked(rules):
    report = diagnose_bytes(TRAINING_ONLY, rules)
    assert not report.findings
    assert report.coverage.present["nccl_info"] is False
    unchecked = _unchecked(report)
    assert {"nccl-tcp-fallback", "gdr-disabled"} <= set(unchecked["nccl_info"])
    how = next(u.how for u in report.coverage.unchecked if u.missing == "nccl_info")
    assert "NCCL_DEBUG=INFO" in how


def test_all_clear_in_text_names_what_could_not_be_checked(tmp_path):
    log = tmp_path / "train.log"
    log.write_bytes(TRAINING_ONLY)
    proc = run(str(log))
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert "no known problem found" in out
    assert "not checked without NCCL INFO lines" in out and "NCCL_DEBUG=INFO" in out


def test_nccl_info_log_leaves_transport_checked():
    report = corpus_report("syn-healthy-ib-gdr")
    assert report.coverage.present["nccl_info"] is True
    assert "nccl_info" not in _unchecked(report)


def test_a_cause_that_was_found_is_not_listed_as_unchecked(rules):
    log = b"slurmstepd: error: *** JOB 46 ON n1 CANCELLED AT 2026-12-02T11:08:40 DUE TO TIME LIMIT ***\n"
    report = diagnose_bytes(log, rules)
    assert report.top() and report.top().id == "job-time-limit"
    assert report.coverage.present["slurm_messages"] is True
    assert not any("job-time-limit" in u.causes for u in report.coverage.unchecked)


def test_coverage_is_in_the_json(tmp_path):
    log = tmp_path / "train.log"
    log.write_bytes(TRAINING_ONLY)
    data = json.loads(run(str(log), "--format", "json").stdout)
    assert data["coverage"]["evidence"]["nccl_info"] is False
    assert any(u["missing"] == "nccl_info" for u in data["coverage"]["unchecked"])


def test_empty_file_and_dev_null_exit_2_with_one_line(tmp_path):
    empty = tmp_path / "job.err"
    empty.write_bytes(b"")
    for proc in (run(str(empty)), run(stdin=b""), run("-", stdin=b"")):
        assert proc.returncode == 2
        err = proc.stderr.decode().strip()
        assert len(err.splitlines()) == 1 and "empty" in err
        assert "✔" not in proc.stdout.decode()


def test_unmatched_slurm_error_lines_are_an_unexplained_failure(tmp_path, rules):
    for line in (
        b"sbatch: error: invalid partition specified: gpu-h100\n",
        b"srun: error: Unable to create step for job 4411: Memory required by task is not available\n",
        b"slurmstepd: error: execve(): train.py: No such file or directory\n",
    ):
        report = diagnose_bytes(line, rules)
        assert report.top() is not None and report.top().id == "unexplained-failure", line
        assert line.decode().strip().split(": ", 2)[2][:20] in report.top().detail
    stderr = tmp_path / "sbatch.err"
    stderr.write_bytes(b"sbatch: error: invalid partition specified: gpu-h100\n")
    assert run(str(stderr)).returncode == 1


def test_task_exit_zero_is_still_healthy(rules):
    report = diagnose_bytes(b"srun: error: n2: task 2: Exited with exit code 0\n", rules)
    assert not report.findings
