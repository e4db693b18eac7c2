"""Preemption and cancel: preempted, job-cancelled.

Reads Slurm's preemption and requeue banners, submitit's signal, the job record's PREEMPTED, a cloud provider or
Kubernetes taking the instance or pod back, and a cancel with no reason given (scancel, bkill, condor_rm, flux
cancel) in a job where nothing failed first; node_failure reads taken_back too.
"""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or
from diag.diagnosis.analyzers.job.common import failure_before_cancel
from diag.diagnosis.context import Context, shorten
from diag.report import Finding


def taken_back(ctx: Context) -> set[str]:
    """preempted's signatures the logs show, less a message listing preemption among what may have happened
    (Ray's NodeDiedError: "This can happen if the instance ... failed, the node was preempted, or ...")."""
    rule = ctx.rules.get("preempted")
    if rule is None:
        return set()
    chosen = {n for n, _ in ctx.stats(rule)}
    if "cloud_preempted" in chosen and all("happen if" in ev.text for ev, _ in ctx.samples(rule, ["cloud_preempted"])):
        chosen.discard("cloud_preempted")
    return chosen


def preempted(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = taken_back(ctx)
    if not chosen:
        return []
    if not chosen & {"preemption", "requeue"} and "submitit" in chosen:
        signal, node = ctx.captures(rule, "signal", ["submitit"])[0], ctx.captures(rule, "node", ["submitit"])[0]
        detail = (
            f"Slurm preempted the job: submitit caught {signal} on {node}, the signal Slurm sends before "
            "preempting, and requeued it; the tasks ending after it are consequences."
        )
        return [ctx.make_finding(rule, ["submitit"], detail=detail, hosts=[node])]
    if not chosen & {"preemption", "requeue"}:
        return _preempted_elsewhere(rule, ctx, chosen)
    when = first_or(ctx.captures(rule, "time"), "?")
    jobs = ctx.captures(rule, "job")
    why = "was preempted by a higher-priority job" if "preemption" in chosen else "was requeued"
    names = [n for n in ("preemption", "requeue") if n in chosen]
    detail = f"Job {', '.join(jobs[:3])} {why} at {when}; the terminated tasks that follow are consequences."
    if names == ["requeue"]:
        # A requeue puts the job back in the queue to run again (scontrol requeue by a user or admin, or a
        # job that requeues itself before its time limit): nothing was lost that a checkpoint keeps.
        detail += " It runs again from the queue: resume from its last checkpoint."
        return [ctx.make_finding(rule, names, detail=detail, hosts=[], severity="warning")]
    return [ctx.make_finding(rule, names, detail=detail, hosts=[])]


def _preempted_elsewhere(rule: Rule, ctx: Context, chosen: set[str]) -> list[Finding]:
    """Preemption as Slurm's job record, a cloud provider or Kubernetes says it."""
    parts = []
    if "state_preempted" in chosen:
        parts.append("Slurm's record says the job ended in state PREEMPTED")
    if chosen & {
        "cloud_preempted", "spot_interruption", "termination_notice", "node_shutdown", "node_termination", "spot_itn",
        "ray_node_preempted",
    }:  # fmt: skip
        parts.append("the provider took the instance or pod back (spot/preemptible capacity or a higher priority)")
    if "k8s_preempted" in chosen:
        parts.append("Kubernetes' scheduler (or Kueue) preempted the pod for a workload of higher priority")
    if "batch_preempted" in chosen:
        parts.append("the batch scheduler (PBS, LSF) preempted the job for a higher-priority one")
    names = [
        n
        for n in (
            "state_preempted", "cloud_preempted", "spot_interruption", "termination_notice", "k8s_preempted",
            "node_shutdown", "node_termination", "spot_itn", "ray_node_preempted", "batch_preempted",
        )
        if n in chosen
    ]  # fmt: skip
    detail = "; ".join(parts) + "; the failures that follow on the other nodes are consequences."
    # A provider's notice in a run that shows no failure: it was rescheduled or recovered.
    severity = "warning" if "state_preempted" not in chosen and not ctx.job_failed() else None
    return [ctx.make_finding(rule, names, detail=detail[:1].upper() + detail[1:], hosts=[], severity=severity)]


def job_cancelled(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule) or failure_before_cancel(ctx):
        # srun (or MPI) cancelled the step because something failed first: that failure is the cause.
        return []
    if any(ctx.count(rid) for rid in ("preempted", "job-time-limit", "node-failure")):
        return []  # the same job's banner with a reason says why
    times = ctx.captures(rule, "time")
    jobs = ctx.captures(rule, "job") + ctx.captures(rule, "row")
    uids = ctx.captures(rule, "uid")
    signals = ctx.captures(rule, "signal")
    how = f" with SIGNAL {', '.join(signals)}" if signals else ""
    how += f" by user id {', '.join(uids)}" if uids else ""
    when = f" at {times[0]}" if times else ""
    who = f"Job {', '.join(dict.fromkeys(jobs[:3]))}" if jobs else "The job"
    by = "a user or admin ran scancel" if ctx.stats(rule, ["cancelled", "record_cancelled"]) else (
        "a user or admin cancelled it (bkill, condor_rm, flux cancel)"
    )
    if interrupted := _srun_interrupted(ctx):
        by = f"srun was interrupted (Ctrl-C twice within a second, then \"{shorten(interrupted)}\")"
    detail = (
        f"{who} was cancelled{how}{when} with no reason given and no failure before it: {by}. "
        "Nothing failed; the terminated tasks are its consequences."
    )
    return [ctx.make_finding(rule, detail=detail, hosts=[])]


def _srun_interrupted(ctx: Context) -> str:
    """srun's line saying it passed a Ctrl-C on to the step, which then ends like a scancel."""
    rule = ctx.rules.get("unexplained-failure")
    samples = ctx.samples(rule, ["srun_ctrl_c"]) if rule else []
    return samples[0][0].text.strip() if samples else ""
