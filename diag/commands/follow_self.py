"""``slurmdiag follow --self``: follow the job from inside its own batch script.

Started as ``slurmdiag follow --self &`` at the top of an sbatch script. It must never change the
job's fate: it ends by itself when the script that started it is gone (the shell exits, this
process is re-parented; Slurm saying the job left the queue ends it too), writes its alerts to
stderr (the job's .err), the final report only where -o says, and exits 0 on its own errors and
on SIGTERM/SIGHUP (Slurm's end of the job, the terminal going away) after writing that report.
"""

from __future__ import annotations

import os
import signal
import sys

import click

from diag.commands.common import fail

SELF_SETTLE_S = 0.5  # the script is gone and Slurm kills what is left of the job soon: report at once


def self_job_id(jobid: str | None) -> str:
    """$SLURM_JOB_ID, or a one-line exit 2 (a usage error: not inside a job)."""
    env = os.environ.get("SLURM_JOB_ID", "").strip()
    if not env:
        fail("--self runs inside a Slurm job: SLURM_JOB_ID is not set (use --jobid ID or PATH... outside one)")
    if jobid and jobid != env:
        fail(f"--self follows this job ({env}); --jobid {jobid} names another")
    return env


def parent_gone(started_by: int):
    """Whether the process that started us has exited (we were re-parented to init or a subreaper)."""
    return lambda: os.getppid() != started_by


def run_self(paths, rules, opts, on_alert, output, fmt, redact, redact_hosts, started_by: int) -> None:
    """Follow, write the report to ``output`` (if any) and exit 0 whatever happened."""
    from diag.follow import Follower

    opts.ended = parent_gone(started_by)
    opts.after_end_s = min(opts.after_end_s, SELF_SETTLE_S)
    try:
        follower = Follower(paths, rules, opts, on_alert)

        def stop(signum, frame) -> None:  # noqa: ARG001 (signal handler signature)
            follower.stop = True  # the loop ends at its next turn and the report is written

        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, stop)
        result = follower.run()
        if output:
            from diag.commands.common import emit
            from diag.formats import OutputOptions

            out = OutputOptions(job=opts.job, redact=redact, redact_hosts=redact_hosts)
            emit(result.reports, result.problems, fmt, output, "never", False, out)
    except SystemExit:
        pass  # emit's exit status is the diagnosis's; the job's is not ours to change
    except Exception as exc:  # noqa: BLE001 - a helper in a batch script must not fail the job
        click.echo(f"slurmdiag follow --self: stopped: {type(exc).__name__}: {exc}", err=True)
    sys.exit(0)
