"""The time limit: job-time-limit.

Reads Slurm's CANCELLED ... DUE TO TIME LIMIT banner and the other schedulers' words for it (PBS's walltime, LSF,
Grid Engine, Kubernetes' deadline, submitit, mpiexec's timeout, Slurm's TIMEOUT record), and weighs what came
before: a job that crashed or broke earlier and then sat until the limit has that as its likely cause.
"""

from __future__ import annotations

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or, said
from diag.diagnosis.context import Context
from diag.evidence import Evidence
from diag.report import Finding


def job_time_limit(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    chosen = [n for n, _ in ctx.stats(rule)]
    kinds = ctx.captures(rule, "kind")
    jobs = ctx.captures(rule, "job")
    when = first_or(ctx.captures(rule, "time"), "?")
    what = "job" if "JOB" in kinds else "step"
    if "time_limit" in chosen:
        detail = f"Slurm cancelled {what} {', '.join(jobs[:3])} at {when} because it reached its time limit"
        if "JOB" not in kinds:
            detail += " (an srun --time limit on the step; the job itself may have gone on)"
    else:
        detail = _other_time_limit(rule, ctx, chosen)
    if ctx.stats(rule, ["sigterm"]):
        detail += "; torchrun's SIGTERM shutdown and the terminated tasks that follow are consequences"
    else:
        detail += "; the terminated tasks that follow are consequences"
    # A job that broke earlier (IB unusable, a rank stuck) often hangs until the limit: then the
    # limit is how it ended, not why. Runs in phase 2 so those roots are known.
    first = min((ev.order for ev, _ in ctx.samples(rule, chosen)), default=(1 << 30, 0))
    earlier = [
        f
        for f in ctx.findings.values()
        if f.role == "root" and severity_rank(f.severity) >= severity_rank("error") and f.first_order() < first
    ]
    crashed = _crashed_before(ctx, first)
    # The node in the banner is where slurmstepd reported, not a culprit.
    if crashed and not earlier:
        detail += f"; a process crashed before it ({said(crashed)}) and the job then sat until the limit: the crash is the likely cause"
        return [ctx.make_finding(rule, detail=detail + ".", hosts=[], severity="warning", confidence=0.6)]
    if earlier:
        detail += f"; it ran into the limit after {', '.join(sorted(f.id for f in earlier))}, which is the likely cause"
        return [ctx.make_finding(rule, detail=detail + ".", hosts=[], severity="warning", confidence=0.6)]
    return [ctx.make_finding(rule, detail=detail + ".", hosts=[])]


# A process's death by a fatal signal as its shell, its signal handler or Python's faulthandler prints it
# (unexplained-failure's signatures): never a consequence of the time limit, which ends tasks with SIGTERM.
_CRASH_LINES = ["crash_core", "segfault_line", "fpe_line", "process_signal", "ucx_signal", "fatal_python", "dataloader_segfault"]


def _crashed_before(ctx: Context, first: tuple) -> Evidence | None:
    """The first crash line printed before the time-limit banner: the job that hung after a rank died
    (an MPI rank that does not abort its peers) reaches the limit with the crash as its cause."""
    rule = ctx.rules.get("unexplained-failure")
    if rule is None:
        return None
    crashes = sorted((ev for ev, _ in ctx.samples(rule, _CRASH_LINES) if ev.order < first), key=lambda ev: ev.order)
    return crashes[0] if crashes else None


def _other_time_limit(rule: Rule, ctx: Context, chosen: list[str]) -> str:
    """The time limit in the words of other schedulers, or of Slurm's own job record."""
    for _ev, g in ctx.samples(rule, ["pbs_walltime"])[:1]:
        return f"PBS killed the job: its walltime {g['used']} s exceeded the limit of {g['limit']} s"
    for _ev, g in ctx.samples(rule, ["submitit_timeout"])[:1]:
        return f"submitit caught {g['signal']} on {g['node']}, the warning Slurm sends before the time limit"
    for _ev, g in ctx.samples(rule, ["lightning_requeue_failed"])[:1]:
        detail = (
            "PyTorch Lightning caught the signal Slurm sends before the time limit (SLURM auto-requeue) and saved a "
            f"checkpoint, but could not requeue job {g['job']} (scontrol requeue exited {g['code']})"
        )
        if ctx.stats(rule, ["requeue_disabled"]):
            detail += (
                ": Slurm answered 'Requested operation is presently disabled', the job was submitted without "
                "requeue (sbatch --no-requeue, or the cluster's JobRequeue=0): submit it with sbatch --requeue"
            )
        return detail + "; the job ends at its limit and is not queued again (resume from Lightning's hpc_ckpt_<n>.ckpt)"
    if {"k8s_deadline", "rayjob_deadline"} & set(chosen):
        return "Kubernetes ended the job at its activeDeadlineSeconds (the job's own time limit)"
    if "salloc_revoked" in chosen:
        return "salloc's allocation reached its time limit and Slurm revoked it"
    if "lsf_runlimit" in chosen:
        return "LSF killed the job at its run time limit (TERM_RUNLIMIT)"
    if "sge_wallclock" in chosen:
        return "Grid Engine killed the job at its hard wall-clock limit (h_rt)"
    for _ev, g in ctx.samples(rule, ["mpiexec_timeout"])[:1]:
        return f"mpiexec ended the job after its timeout of {g['limit']} s (MPIEXEC_TIMEOUT or -timeout)"
    for _ev, g in ctx.samples(rule, ["batch_time_limit", "flux_timeout"])[:1]:
        return f"the batch system ended the job at its time limit ({g['what']})"
    return "Slurm's record says the job ended in state TIMEOUT: it reached its time limit"
