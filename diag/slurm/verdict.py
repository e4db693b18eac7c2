"""What Slurm itself knows about a job, as evidence next to the log lines.

``JobState`` names some causes outright (TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED): the
finding for that cause gets Slurm's record as its first evidence line, or is created from the
rule's text when the logs are silent (a job killed before it printed anything). Where Slurm's
verdict and the logs disagree (COMPLETED while a task exited non-zero; a time limit in the log
while the job COMPLETED, i.e. a step's ``srun --time``) the report says so in a note.
"""

from __future__ import annotations

from collections.abc import Sequence

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule, RuleSet, action_hosts
from diag.evidence import Evidence
from diag.report import Finding, finding_from_rule
from diag.slurm.query import JobInfo

STATE_CAUSES = {
    "TIMEOUT": "job-time-limit",
    "OUT_OF_MEMORY": "job-oom",
    "NODE_FAIL": "node-failure",
    "PREEMPTED": "preempted",
}
CAUSE_STATES = {cause: state for state, cause in STATE_CAUSES.items()}
FAILED_STATES = ("FAILED", "BOOT_FAIL", "DEADLINE", *STATE_CAUSES)
SLURM_CONFIDENCE = 0.95  # Slurm's own verdict on the job


def record_text(job: JobInfo) -> str:
    """One line of Slurm's record, the fields that explain how the job ended."""
    parts = [f"JobId={job.job_id}", f"JobState={job.state or '?'}"]
    if job.reason:
        parts.append(f"Reason={job.reason}")
    if job.exit_code:
        parts.append(f"ExitCode={job.exit_code}")
    if job.derived_exit_code:
        parts.append(f"DerivedExitCode={job.derived_exit_code}")
    if job.run_time or job.time_limit:
        parts.append(f"RunTime={job.run_time or '?'} TimeLimit={job.time_limit or '?'}")
    if job.node_list:
        parts.append(f"NodeList={job.node_list}")
    if job.restarts:
        parts.append(f"Restarts={job.restarts}")
    return " ".join(parts)


def job_evidence(job: JobInfo, index: int = 0) -> Evidence:
    """Slurm's record as an evidence line: line N of ``scontrol show job -o`` (or sacct) output."""
    where = {"scontrol": "scontrol show job -o", "sacct --json": "sacct --json", "sacct -P": "sacct -X -P"}
    return Evidence(
        path=f"{where.get(job.source, job.source)} {job.job_id}",
        line=index + 1,
        text=record_text(job),
        order=(-1, index),  # before every log line: Slurm's verdict comes first
    )


def _status(code: str) -> int:
    head = code.split(":", 1)[0]
    return int(head) if head.isdigit() else 0


def _from_rule(rule: Rule, job: JobInfo, ev: Evidence, detail: str) -> Finding:
    values = {"node": ", ".join(job.nodes[:6]) or "the job's nodes", "hosts": ", ".join(job.nodes[:6])}
    values["job"] = job.job_id
    return finding_from_rule(rule, confidence=SLURM_CONFIDENCE, detail=detail, evidence=[ev], values=values,
                             action_values={**values, "hosts": action_hosts(job.nodes)})  # fmt: skip


def _state_detail(job: JobInfo) -> str:
    state = job.base_state
    if state == "TIMEOUT":
        return f"Slurm ended job {job.job_id} at its time limit (RunTime={job.run_time or '?'}, TimeLimit={job.time_limit or '?'})."
    if state == "OUT_OF_MEMORY":
        return f"Slurm ended job {job.job_id} as OUT_OF_MEMORY: the kernel's OOM killer hit a task in the job's memory cgroup."
    if state == "NODE_FAIL":
        return f"Slurm ended job {job.job_id} with NODE_FAIL (Reason={job.reason or '?'}): a node of {job.node_list or 'the job'} failed."
    if state == "PREEMPTED":
        return f"Slurm preempted job {job.job_id} for a higher-priority job."
    return f"Slurm ended job {job.job_id} as {job.state}."


def apply_job(findings: list[Finding], jobs: Sequence[JobInfo], rules: RuleSet) -> tuple[list[Finding], list[str]]:
    """Findings with Slurm's verdict merged in (to be ranked again by the caller); and the notes where
    Slurm and the logs disagree or Slurm knows something the logs cannot show."""
    by_id = {f.id: f for f in findings}
    rule_by_id = rules.by_id()
    notes: list[str] = []
    explained_by_slurm = False
    for index, job in enumerate(jobs):
        ev = job_evidence(job, index)
        state = job.base_state
        cause = STATE_CAUSES.get(state)
        if cause:
            existing = by_id.get(cause)
            if existing is not None:
                existing.evidence = [ev, *[e for e in existing.evidence if e != ev]]
                existing.confidence = max(existing.confidence, SLURM_CONFIDENCE)
                existing.detail = f"{existing.detail.rstrip('.')}; Slurm agrees: JobState={job.state}."
                existing.count += 1
                explained_by_slurm = True
            elif cause in rule_by_id:
                by_id[cause] = _from_rule(rule_by_id[cause], job, ev, _state_detail(job))
                explained_by_slurm = True
        notes.extend(_notes(job, by_id))
    if explained_by_slurm:
        # A cause from Slurm explains the failure: "no known cause" no longer holds.
        by_id.pop("unexplained-failure", None)
    for index, job in enumerate(jobs):
        if job.base_state not in FAILED_STATES or STATE_CAUSES.get(job.base_state):
            continue
        ev = job_evidence(job, index)
        roots = [f for f in by_id.values() if f.role == "root" and severity_rank(f.severity) >= severity_rank("error")]
        unexplained = by_id.get("unexplained-failure")
        if unexplained is not None:
            unexplained.evidence = [ev, *unexplained.evidence]
        elif not roots and "unexplained-failure" in rule_by_id:
            detail = (
                f"Slurm reports job {job.job_id} {job.state} (ExitCode={job.exit_code or '?'}, "
                f"Reason={job.reason or 'None'}) and no known cause matched the logs."
            )
            finding = _from_rule(rule_by_id["unexplained-failure"], job, ev, detail)
            finding.confidence = rule_by_id["unexplained-failure"].confidence
            by_id["unexplained-failure"] = finding
    return list(by_id.values()), notes


def _notes(job: JobInfo, by_id: dict[str, Finding]) -> list[str]:
    notes: list[str] = []
    state = job.base_state
    failing = [f for f in by_id.values() if f.role == "root" and severity_rank(f.severity) >= severity_rank("error")]
    if state == "COMPLETED":
        derived = _status(job.derived_exit_code)
        if derived:
            notes.append(
                f"Slurm reports job {job.job_id} COMPLETED (ExitCode={job.exit_code or '0:0'}) but "
                f"DerivedExitCode={job.derived_exit_code}: a step exited with {derived} while the batch script's "
                "last command succeeded, so Slurm (and sacct State) call the job a success."
            )
        elif failing:
            notes.append(
                f"Slurm reports job {job.job_id} COMPLETED (ExitCode={job.exit_code or '0:0'}), yet the logs show "
                f"{', '.join(f.id for f in failing)}: Slurm judges only the batch script's exit status, "
                "which a later command (echo, rm) reset to 0."
            )
    if state == "COMPLETING":
        notes.append(
            f"Slurm was still completing job {job.job_id} (as seen from an epilog): its final JobState is not known "
            f"yet; ExitCode={job.exit_code or '?'}."
        )
    if state == "CANCELLED":
        notes.append(
            f"Slurm reports job {job.job_id} CANCELLED (Reason={job.reason or 'None'}): scancel by a user or an "
            "admin, or a limit or dependency that can never be met."
        )
    for cause, want in CAUSE_STATES.items():
        if cause in by_id and state and state not in (want, "COMPLETING") and not _slurm_backed(by_id[cause]):
            if cause == "job-time-limit" and state == "COMPLETED":
                notes.append(
                    f"The logs show a time limit, but Slurm reports job {job.job_id} COMPLETED: a step ran into its "
                    "own limit (srun --time) and the batch script went on."
                )
            elif cause == "job-oom" and state != "OUT_OF_MEMORY":
                notes.append(
                    f"The logs show a memory kill, but Slurm reports job {job.job_id} {job.state}: the kill hit one "
                    "step (or was enforced by polling, JobAcctGatherParams=OverMemoryKill) and Slurm did not record "
                    "OUT_OF_MEMORY for the job."
                )
            elif cause == "preempted" and job.restarts:
                notes.append(
                    f"The logs show a preemption; Slurm requeued job {job.job_id} (Restarts={job.restarts}) and "
                    f"now reports it {job.state}."
                )
            else:
                notes.append(f"The logs show {cause}, but Slurm reports job {job.job_id} {job.state}.")
    if job.restarts and not any("requeued" in n for n in notes):
        notes.append(
            f"Slurm requeued job {job.job_id} {job.restarts} time(s) (Restarts={job.restarts}): its log may hold "
            "several runs."
        )
    return notes


def _slurm_backed(finding: Finding) -> bool:
    return any(e.order[0] == -1 for e in finding.evidence)


def slurm_record(job: JobInfo) -> dict:
    """Slurm's record of one job as the report carries it: the fields, and the one line a reader sees."""
    return {**job.to_json(), "record": record_text(job)}
