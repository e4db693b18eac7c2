"""What the job analyzers share: whether the program itself failed before a cancel (unexplained-failure's
signatures, less tasks ended by a signal), which job_cancelled and unexplained_failure both weigh: srun's cancel
after a failed task is no scancel, and tasks a signal ended are not the failure."""

from __future__ import annotations

from diag.diagnosis.context import Context

# How a task ends when Slurm (not the program) stopped it: these follow a cancel, never cause one.
SIGNAL_HOWS = ("Terminated", "Killed", "Interrupt", "Hangup")  # signals others send a task

# Exceptions a launcher raises when it is itself signalled (scancel, time limit, preemption).
SIGNAL_EXCEPTIONS = ("SignalException",)


def failure_before_cancel(ctx: Context) -> bool:
    """Whether the logs show a failure of the program itself (not just tasks ended by a signal).

    The same plain ``CANCELLED AT <time> ***`` banner follows a user's scancel and srun's own
    cancel after a task failed (MPI_Abort, --kill-on-bad-exit, OOM): only the second has one.
    """
    rule = ctx.rules.get("unexplained-failure")
    if rule is None:
        return False
    names = [n for n, _ in ctx.stats(rule, ["exception", "exception_socket", "exception_other"])]
    if names:
        exceptions = ctx.captures(rule, "exception", names)
        if any(not e.endswith(SIGNAL_EXCEPTIONS) for e in exceptions):
            return True
    crashes = [
        "terminate", "mpi_abort", "mpich_fatal", "mpich_bad_termination", "mpich_exit_string", "ompi_daemon_died",
        "nccl_error", "nccl_error_quoted", "cuda_error", "nccl_tests_failure", "process_signal", "ucx_signal", "glibc_corrupt",
        "glibc_invalid", "glibc_old", "check_failed", "check_trace", "crash_core", "segfault_line", "fpe_line", "ompi_aborted", "ompi_nonzero", "ompi_improper",
        "slurm_fatal", "apptainer_fatal", "loader_missing", "command_not_found", "hydra_terminated", "mpi_errhandler",
        "python_no_script", "mpich_abort", "hydra_error", "hydra_error_proxy", "cray_mpich_abort",
        "dataloader_segfault", "raylet_died", "pbs_resource_kill", "flux_exec_exception", "prrte_srun_daemons",
        "mvapich_vbuf", "step_aborted_launch",
    ]  # fmt: skip
    hydra_codes = ctx.captures(rule, "code", ["hydra_exit_code", "hydra_killed_by"])
    interrupted = hydra_interrupted(ctx)
    if hydra_codes and all(c in ("9", "15") or (interrupted and c == "2") for c in hydra_codes):
        crashes.remove("mpich_bad_termination")  # Hydra's banner over a process a signal ended, not its own error
    elif hydra_codes:
        return True
    if interrupted:
        crashes.remove("mpich_exit_string")
    if ctx.stats(rule, crashes):
        return True
    if any(sig not in ("", "15") for sig in ctx.captures(rule, "signal", ["ompi_signal"])):
        return True  # a rank killed by a signal other than the SIGTERM of a cancel
    if any(not how.startswith(SIGNAL_HOWS) for how in ctx.captures(rule, "how", ["task_exit"])):
        return True
    codes = ctx.captures(rule, "code", ["agent_exit", "deepspeed_exit", "elastic_root_cause"])
    if any(c not in ("-15", "-9", "-1") for c in codes):
        return True
    if any(s not in ("15", "9", "1") for s in ctx.captures(rule, "signal", ["elastic_signal"])):
        return True
    if any(c not in ("137", "143") for c in ctx.captures(rule, "code", ["container_exit"])):
        return True  # an exit code of its own, or a signal other than a cancel's SIGTERM / SIGKILL
    return any(ctx.count(rid) for rid in ("job-oom", "job-time-limit", "node-failure", "cuda-oom", "gpu-xid"))


def hydra_interrupted(ctx: Context) -> bool:
    """MPICH's mpiexec passed a Ctrl-C on ("Sending Ctrl-C to processes as requested") and every exit
    string it printed is that interrupt's: the BAD TERMINATION box is how the run was stopped."""
    rule = ctx.rules.get("unexplained-failure")
    if rule is None or not ctx.stats(rule, ["hydra_sigint"]):
        return False
    return all(m.startswith("Interrupt") for m in ctx.captures(rule, "message", ["mpich_exit_string"]))
