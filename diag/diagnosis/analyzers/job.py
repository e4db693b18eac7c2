"""Job and node fate as Slurm tells it (time limit, OOM, node failure, preemption) and the honest 'unexplained'."""

from __future__ import annotations

import re

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import (
    CANCELLED_TASK_ENDINGS,
    after_success,
    failure_is_timeout_cascade,
    failure_rests_on_timeout,
    first_or,
    said,
    success_lines,
)
from diag.diagnosis.analyzers.hints import outside_catalogue_hint
from diag.diagnosis.analyzers.launch.pmix import daemon_never_called_back, runtime_unpack, ssh_login_failed
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.evidence import Evidence
from diag.hostlist import expand
from diag.report import Finding


def unexplained_failure(rule: Rule, ctx: Context) -> list[Finding]:
    if failure_rests_on_timeout(ctx):
        # Ranks a watchdog aborted and their launchers' exit lines are the timeout's cascade: the
        # timeout (naming the rank that fell behind) is the answer, not a failure nobody printed.
        return []
    failed = ctx.failure_signatures()
    ignored_lines = ignored_exception_lines(rule, ctx)
    ignored = _ignored_exceptions(rule, ctx, ignored_lines)
    failed = [(n, st) for n, st in failed if n not in ignored]
    if not failed:
        return _hung(rule, ctx) or _nccl_failed_call(rule, ctx) or _runtime_unpack(rule, ctx)
    for f in ctx.findings.values():
        if f.role != "symptom" and severity_rank(f.severity) >= severity_rank("error"):
            return []
    # A plain scancel (reported as info by `preempted` only when nothing failed before it): the
    # CANCELLED banner and the terminated tasks are its consequences, not an unexplained failure.
    if "job-cancelled" in ctx.findings or "preempted" in ctx.findings:
        return []
    if {name for name, _ in failed} <= set(_EXIT_LINES) and not failure_before_cancel(ctx):
        return _stopped_from_outside(rule, ctx)
    # A collective timeout that names the rank which fell behind is the better answer when every
    # error line is only that timeout's cascade (watchdog abort, ncclRemoteError, DistBackendError).
    errors = [ev.text for ev, _ in ctx.samples(rule, ["exception", "exception_socket", "exception_other", "terminate", "mpi_abort"])]
    only_tracebacks = {name for name, _ in failed} <= {"traceback"}  # the exception itself was cut off
    if (errors or only_tracebacks) and failure_is_timeout_cascade(ctx, errors):
        return []
    # The most telling line per host/rank: the exception or exit line, not "Traceback".
    telling = [
        ev
        for ev, _ in ctx.samples(
            rule,
            [
                "exception",
                "exception_socket",
                "exception_other",
                "task_exit",
                "agent_exit",
                "banner",
                "banner_failed",
                "terminate",
                "mpi_abort",
                "slurm_error",
                "sbatch_error",
                "salloc_error",
                "stepd_error",
                "process_signal",
                "ucx_signal",
                "nccl_error",
                "nccl_error_quoted",
                "cuda_error",
                "mpich_fatal",
                "mpich_exit_string",
                "mpich_bad_termination",
                "hydra_terminated",
                "mpi_errhandler",
                "hydra_error",
                "hydra_error_proxy",
                "mvapich_spawn",
                "pals_exit",
                "pals_signal",
                "cray_mpich_abort",
                "mpich_abort",
                "python_no_script",
                "step_aborted_launch",
                "dataloader_segfault",
                "ompi_daemon_died",
                "nccl_tests_failure",
                "nccl_warn",
                "ucx_error",
                "glibc_corrupt",
                "glibc_invalid",
                "check_failed",
                "check_trace",
                "crash_core",
                "segfault_line",
                "fpe_line",
                "loader_missing",
                "command_not_found",
                "ssh_unresolved",
                "ssh_refused",
                "ssh_denied",
                "slurm_fatal",
                "apptainer_fatal",
                "ompi_signal",
                "glibc_old",
                "ompi_aborted",
                "ompi_nonzero",
                "ompi_improper",
                "srun_force_term",
                "srun_force_job",
                "elastic_root_cause",
                "raylet_died",
                "pbs_resource_kill",
                "flux_exec_exception",
                "prrte_srun_daemons",
                "mvapich_vbuf",
                "container_exit",
                "sacct_failed",
                "fatal_python",
                "horovod_exit",
                "ssh_password",
                "ssh_password_retry",
                "ssh_hostkey",
                "ssh_closed",
                "slurm_security",
                "k8s_admission",
                "miopen_error",
                "runtime_bind",
            ],
        )
    ]
    telling = [ev for ev in telling if (ev.path, ev.line) not in ignored_lines]
    evidence = pick_evidence(telling or [ev for _, st in failed for ev, _ in st.samples], limit=10)
    # srun's cancel banner and the tasks it ended follow the failure: name the failure itself first,
    # and its nodes, not those the cancel reached.
    causes = [
        e for e in evidence if "CANCELLED AT" not in e.text and not e.text.rstrip().endswith(CANCELLED_TASK_ENDINGS)
    ]
    failed_tasks = [
        g["host"] for _, g in ctx.samples(rule, ["task_exit"]) if not g.get("how", "").startswith(SIGNAL_HOWS)
    ]
    hosts = {h for e in (causes or evidence) if (h := ctx.host_for(e))} | set(failed_tasks)
    hosts |= set(ctx.captures(rule, "host", ["banner_failed"]))
    if not hosts:
        hosts = set(ctx.captures(rule, "host", ["task_exit", "banner"]))
    first = (causes or evidence)[0].text.strip() if evidence else ""
    detail = f"The job failed and no known cause matched. First error: {first[:200]}"
    hint = outside_catalogue_hint([e.text for e in evidence])
    if hint:
        detail = f"{detail.rstrip('.')}. {hint}"
    ranks = sorted({e.rank for e in evidence if e.rank is not None})
    if _went_past(ctx, failed):
        assumed = ["the program went on: its log has more to say after the exception, and no process exit is shown"]
        return [
            ctx.make_finding(
                rule, detail=detail, evidence=evidence, hosts=sorted(hosts), ranks=ranks, severity="warning",
                assumed=assumed,
            )
        ]  # fmt: skip
    done = _work_done(ctx, failed)
    if done:
        return [
            ctx.make_finding(
                rule, detail=f"{detail}. {done[0]}", evidence=evidence, hosts=sorted(hosts), ranks=ranks,
                severity="warning", assumed=[done[1]],
            )
        ]  # fmt: skip
    return [ctx.make_finding(rule, detail=detail, evidence=evidence, hosts=sorted(hosts), ranks=ranks)]


# A process that ended badly, as its launcher or the scheduler reports it: a per-process success marker
# (one node's torchrun or DeepSpeed launcher) says nothing of a job in which one of these is shown.
_PROCESS_FAILED = {
    *["task_exit", "agent_exit", "deepspeed_exit", "elastic_root_cause", "srun_force_term", "srun_force_job"],
    *["container_exit", "ompi_nonzero", "ompi_signal", "ompi_improper", "ompi_aborted", "mvapich_spawn"],
    *["pals_exit", "pals_signal", "mpich_bad_termination", "hydra_terminated", "banner_failed", "k8s_exit_code"],
    "k8s_policy_exit", "sacct_failed", "horovod_exit",
}


def _work_done(ctx: Context, failed: list) -> tuple[str, str] | None:
    """(what to say, what it assumes) when the logs show the run did its work despite the failure lines:
    a whole-run success marker (nccl-tests' data check passed, the training loop's end, the operator's or
    Slurm's COMPLETED) after which only teardown failed (a process's exit, a peer's closed connection) and
    before which the run recovered from what failed; or a launcher's own processes ending well, with
    every failure line teardown after it and no process shown failing."""
    verdict, run, process = success_lines(ctx)
    failure = [(name, ev) for name, st in failed for ev, _ in st.samples]
    if verdict:
        text = f"Slurm or the job's operator says the job completed ({said(verdict[-1])}): these lines did not fail it"
        return text, "the COMPLETED record is this job's"
    if run:
        last = run[-1]
        late = [(name, ev) for name, ev in failure if after_success(ev, [last])]
        if not all(_teardown(name, ev) for name, ev in late):
            return None  # the program went on after the marker and failed at something of its own
        if len(late) == len(failure):
            text = f"These lines came after the run reported success ({said(last)}): teardown, not the job's failure"
        else:
            text = f"The run reported success after these lines ({said(last)}): it recovered from them"
        return text, "the success line is this job's, and its work was what it reports"
    if not process or any(name in _PROCESS_FAILED for name, _ in failed):
        return None
    if any(st.count > len(st.samples) for _, st in failed):
        return None
    if not all(after_success(ev, process) and _teardown(name, ev) for name, ev in failure):
        return None
    text = (
        f"These lines came after the launcher reported its processes finished well ({said(process[0])}): "
        "teardown, not the job's failure"
    )
    return text, "no other node's processes failed: the logs show none failing"


# What fails when a finished run's processes are torn down: a peer (the store's server, an NCCL proxy)
# that already exited, a CUDA driver already shutting down. An exception of other words after the
# run's success is the program failing at what it did next (saving, evaluating, exporting).
_TEARDOWN_WORDS = re.compile(
    r"[Cc]onnection (?:reset|refused|closed|was likely closed)|Broken ?pipe|ConnectionResetError|EOFError"
    r"|DistNetworkError|DistStoreError|recvValue|Failed to (?:recv|send)|NCCL|ProcessGroup|c10d|socket"
    r"|driver shutting down|context is destroyed"
)
_MESSAGE_LINES = {"exception", "exception_other", "exception_socket", "nccl_error", "nccl_error_quoted", "cuda_error"}


def _teardown(name: str, ev) -> bool:
    """Whether a failure line is what a finished run's teardown prints: a process's exit or crash, a
    banner, or an exception about a peer that already left."""
    if name in _MESSAGE_LINES:
        return bool(_TEARDOWN_WORDS.search(ev.text))
    return name not in {"python_no_script", "command_not_found", "loader_missing", "slurm_fatal", "sbatch_error"}


def _went_past(ctx: Context, failed: list) -> bool:
    """Whether the only sign of failure is a Python exception that the program printed and went past:
    no process or job exit anywhere, and every line of the exception followed by more output in its
    file (a plotting or metrics client's ConnectionError, caught and printed, then the training loop)."""
    if not {name for name, _ in failed} <= set(_WENT_PAST_LINES):
        return False
    if any(st.count > len(st.samples) for _, st in failed):
        return False
    last = ctx.last_lines()
    return all(ev.line < last.get(ev.path, 0) for _, st in failed for ev, _ in st.samples)


_EXCEPTION_LINES = ("traceback", "exception", "exception_socket", "exception_other")
# A process's exit as srun, torchrun's agent and DeepSpeed's launcher report it.
_EXIT_LINES = [
    "task_exit", "agent_exit", "deepspeed_exit", "elastic_root_cause", "srun_force_term", "srun_force_job", "container_exit",
]  # fmt: skip
# Lines a job script may print and go past: an exception caught and printed, a command its shell could not
# find or start ("module: command not found" before a run that works).
_WENT_PAST_LINES = (*_EXCEPTION_LINES, "command_not_found", "loader_missing")


def ignored_exception_lines(rule: Rule, ctx: Context) -> set[tuple[str, int]]:
    """The traceback and exception lines Python printed under "Exception ignored in:" (a
    destructor's or exit-time exception the program went on past), as (path, line)."""
    markers = {(ev.path, ev.line) for ev, _ in ctx.samples(rule, ["exception_ignored"])}
    if not markers:
        return set()
    starts = sorted((ev.path, ev.line) for ev, _ in ctx.samples(rule, ["traceback"]))

    def under_marker(ev) -> bool:
        # The traceback this line belongs to starts right after the marker (or is the marker's next line).
        start = max((s for s in starts if s[0] == ev.path and s[1] <= ev.line), default=(ev.path, ev.line))
        return (ev.path, start[1] - 1) in markers or (ev.path, ev.line - 1) in markers

    return {(ev.path, ev.line) for ev, _ in ctx.samples(rule, _EXCEPTION_LINES) if under_marker(ev)}


def _ignored_exceptions(rule: Rule, ctx: Context, lines: set[tuple[str, int]]) -> set[str]:
    """The exception signatures all of whose lines are ``lines`` (and no more than were kept)."""
    return {
        name
        for name, st in ctx.stats(rule, _EXCEPTION_LINES)
        if st.count == len(st.samples) and all((ev.path, ev.line) in lines for ev, _ in st.samples)
    }


def _stopped_from_outside(rule: Rule, ctx: Context) -> list[Finding]:
    """Tasks that only ended by a signal (Terminated, Killed), with no error of their own and no
    banner saying who sent it: scancel, a time limit, a preemption or srun's own Ctrl-C do this to
    a healthy job, so it is a warning that says what it could not tell, never an error."""
    evidence = pick_evidence([ev for ev, _ in ctx.samples(rule, _EXIT_LINES)])
    hosts = sorted(set(ctx.captures(rule, "host", ["task_exit"])))
    first = evidence[0].text.strip() if evidence else ""
    detail = (
        "The tasks were ended by a signal and printed no error of their own; the logs do not say who sent it "
        f"(scancel, the time limit, a preemption, srun interrupted). First: {first[:200]}"
    )
    assumed = ["the job failed: its tasks were stopped, but the logs hold no error and no Slurm banner saying why"]
    return [
        ctx.make_finding(
            rule, _EXIT_LINES, detail=detail, evidence=evidence, hosts=hosts,
            severity="warning",
            confidence=0.25, assumed=assumed,
        )
    ]  # fmt: skip


def _hung(rule: Rule, ctx: Context) -> list[Finding]:
    """Stack dumps (py-spy's, faulthandler's) of a job that printed no error: where its processes wait.
    Dumps in different collectives, or some processes in a collective while others (their main threads)
    are not, are a hang: the waiting ones wait for peers that went elsewhere. One process's dump in a
    collective, or faulthandler's watchdog firing, says it was stuck there, not why: a warning. Idle
    threads outside any collective (a healthy service's dump) say nothing."""
    heads = ctx.samples(rule, ["pyspy_thread", "fh_thread"])
    frames = ctx.samples(rule, ["coll_pyspy", "coll_fh"])
    timeouts = ctx.samples(rule, ["fh_timeout"])
    if not frames and not timeouts:
        return []
    stuck: dict[tuple, tuple] = {}  # dump header -> (its first collective frame, that frame's captures)
    for ev, g in frames:
        head = max((h for h in heads if h[0].path == ev.path and h[0].line < ev.line), key=lambda h: h[0].line, default=None)
        key = (head[0].path, head[0].line) if head else (ev.path, ev.line)
        stuck.setdefault(key, (ev, g))
    # A process's own thread: py-spy names it MainThread, faulthandler marks the one it ran on "Current thread".
    mains = [
        ev for ev, g in heads if g.get("thread") == "MainThread" or g.get("which") == "Current thread"
    ]
    elsewhere = [ev for ev in mains if (ev.path, ev.line) not in stuck]
    calls = sorted({g["fn"] for _, g in stuck.values()})
    where = ", ".join(f"{g['fn']} ({g['file'].rsplit('/', 1)[-1]}:{g['line']})" for _, g in list(stuck.values())[:3])
    evidence = pick_evidence([ev for ev, _ in timeouts] + [ev for ev, _ in stuck.values()] + elsewhere, limit=10)
    ranks = sorted({e.rank for e in evidence if e.rank is not None})
    hosts = sorted({h for e in evidence if (h := ctx.host_for(e))})
    if len(calls) > 1 or (stuck and elsewhere):
        if len(calls) > 1:
            why = f"the dumped processes wait in different collectives ({', '.join(calls)})"
        else:
            why = f"{len(stuck)} dumped process(es) wait in {where} while {len(elsewhere)} other(s) are not in any collective"
        detail = (
            f"The job hung: {why}, so the waiting ones wait for peers that went elsewhere. No known cause "
            "matched; look at what the processes outside that collective did last (an uneven data split, "
            "a rank-dependent branch, a step or epoch count that differs)"
        )
        return [ctx.make_finding(rule, [], detail=detail, evidence=evidence, hosts=hosts, ranks=ranks, confidence=0.4)]
    if stuck:
        detail = f"A stack dump shows the process waiting in {where}: it hung there, waiting for a peer the dump does not show"
    else:
        detail = f"faulthandler's watchdog fired (Timeout {timeouts[0][1]['after']}): the process was stuck for that long"
    assumed = ["the dump was taken because the job hung: one dump cannot show which peer never came"]
    return [
        ctx.make_finding(
            rule, [], detail=detail + ". No known cause matched.", evidence=evidence, hosts=hosts, ranks=ranks,
            severity="warning", confidence=0.25, assumed=assumed,
        )
    ]  # fmt: skip


def _runtime_unpack(rule: Rule, ctx: Context) -> list[Finding]:
    """PMIx failing to unpack its own runtime's message while the process set up (launch.pmix.runtime_unpack): the
    process cannot go on without its job's data, though the logs may end before saying so."""
    evidence = runtime_unpack(rule, ctx)
    if not evidence:
        return []
    detail = "PMIx failed while the process set up and no known cause matched. First error: " + evidence[0].text.strip()[:200]
    hint = outside_catalogue_hint([e.text for e in evidence])
    if hint:
        detail += f". {hint}"
    assumed = ["the process stopped there: the logs show no failure line after the unpack errors"]
    hosts = sorted({h for e in evidence if (h := ctx.host_for(e))})
    return [
        ctx.make_finding(
            rule, [], detail=detail, evidence=evidence, hosts=hosts, severity="warning", confidence=0.4, assumed=assumed
        )
    ]


def _nccl_failed_call(rule: Rule, ctx: Context) -> list[Finding]:
    """An NCCL WARN saying a call failed, that no rule knows, in logs that show nothing else: NCCL
    failed for a reason outside the catalogue. Whether the job failed of it is unknown (NCCL retries
    some calls), so it is a warning that says what it assumed, never an error on a run that went on."""
    unknown = [ev for ev, _ in ctx.samples(rule, ["nccl_warn", "ucx_error"])]
    if not unknown:
        return []
    failed_warn, trail = _nccl_error_returned(rule, ctx, unknown)
    if failed_warn is not None:
        unknown = [failed_warn] + [ev for ev in unknown if ev is not failed_warn]  # the WARN whose error returned
    if ctx.findings and not (trail and _nothing_fatal(ctx)):
        # A cause found is the answer; but where NCCL's own trail shows the failed call's error reaching the
        # caller, findings that do not stop NCCL (no verbs library: it goes on over sockets) do not explain it.
        return []
    first = unknown[0].text.strip()
    who = "UCX reported an error" if "UCX" in first and " NCCL " not in first else "NCCL reported a failed call"
    detail = f"{who} that no known cause explains: {first[:200]}"
    assumed = ["the job failed of it: the logs show this error, but not the job failing"]
    severity, confidence = "warning", 0.25
    if trail:
        # NCCL printed the error code's way back up its stack to its API ("init.cc:840 -> 2"): the call failed.
        detail += f"; its error returned up NCCL's stack to the program's call ({trail.text.split('NCCL INFO', 1)[-1].strip()})"
        assumed, severity, confidence = [], "error", 0.4
    hint = outside_catalogue_hint([e.text for e in unknown])
    if hint:
        detail += f". {hint}"
    _, run, _ = success_lines(ctx)
    if run and all(after_success(ev, run) for ev in unknown):
        # After nccl-tests' data check passed or the training loop ended: a peer's teardown, worth knowing.
        severity = "info"
        detail += f". It came after the run reported success ({said(run[-1])}): teardown, not the job's failure"
        assumed = ["the success line is this job's, and its work was what it reports"]
    hosts = sorted({h for ev in unknown if (h := ctx.host_for(ev))})
    return [
        ctx.make_finding(
            rule, ["nccl_warn", "ucx_error"], detail=detail, evidence=pick_evidence(unknown), hosts=hosts, severity=severity,
            confidence=confidence, assumed=assumed,
        )
    ]  # fmt: skip


def _nccl_error_returned(rule: Rule, ctx: Context, warns: list[Evidence]) -> tuple[Evidence | None, Evidence | None]:
    """The WARN whose error NCCL's return trail carried back to the caller of its API, and the trail's line in
    the API's frame; (None, None) without one. The trail ("xml.cc:660 -> 2", "topo.cc:523 -> 2", "init.cc:840
    -> 2") counts only where it reaches the API's own code (init.cc, group.cc, enqueue.cc, collectives.cc): a
    service or proxy thread's trail ends in that thread, not in the program's call. The WARN is the last one
    printed before it (earlier WARNs were notices NCCL went on after, such as no verbs library), and none
    another finding already explains (a completion error, a refused connect, a plugin that did not load)."""
    explained = _explained_lines(ctx)
    api = sorted(
        (ev for ev, g in ctx.samples(rule, ["nccl_return_trail"]) if g["file"].rsplit("/", 1)[-1] in NCCL_API_FILES),
        key=lambda ev: ev.order,
    )
    for reached in api:
        before = [ev for ev in warns if ev.order < reached.order]
        if before:
            warn = max(before, key=lambda ev: ev.order)
            return (None, None) if (warn.path, warn.line) in explained else (warn, reached)
    return None, None


# NCCL's API entry points: an error code returned through these went back to the program's call.
NCCL_API_FILES = ("init.cc", "group.cc", "enqueue.cc", "collectives.cc")


def _explained_lines(ctx: Context) -> set[tuple]:
    """Lines that the signatures of a cause already found matched."""
    return {
        (ev.path, ev.line)
        for fid in ctx.findings
        if (found := ctx.rules.get(fid)) is not None
        for ev, _ in ctx.samples(found, [s.name for s in found.signatures])
    }


def _nothing_fatal(ctx: Context) -> bool:
    """Whether every finding so far is below an error: notes of a run NCCL goes on with, not a failure's cause."""
    return all(severity_rank(f.severity) < severity_rank("error") for f in ctx.findings.values())


# How a task ends when Slurm (not the program) stopped it: these follow a cancel, never cause one.
SIGNAL_HOWS = ("Terminated", "Killed", "Interrupt", "Hangup")  # signals others send a task

# Exceptions a launcher raises when it is itself signalled (scancel, time limit, preemption).
SIGNAL_EXCEPTIONS = ("SignalException",)


def _mib(n: str) -> str:
    value = int(n)
    if value >= 1 << 30:
        return f"{value / (1 << 30):.1f} GiB"
    return f"{value / (1 << 20):.0f} MiB"


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
        "mvapich_vbuf",
    ]  # fmt: skip
    if ctx.stats(rule, crashes):
        return True
    if any(sig not in ("", "15") for sig in ctx.captures(rule, "signal", ["ompi_signal"])):
        return True  # a rank killed by a signal other than the SIGTERM of a cancel
    if any(not how.startswith(SIGNAL_HOWS) for how in ctx.captures(rule, "how", ["task_exit"])):
        return True
    codes = ctx.captures(rule, "code", ["agent_exit", "deepspeed_exit", "elastic_root_cause"])
    if any(c not in ("-15", "-9", "-1") for c in codes):
        return True
    if any(c not in ("137", "143") for c in ctx.captures(rule, "code", ["container_exit"])):
        return True  # an exit code of its own, or a signal other than a cancel's SIGTERM / SIGKILL
    return any(ctx.count(rid) for rid in ("job-oom", "job-time-limit", "node-failure", "cuda-oom", "gpu-xid"))


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


def _extern_steps_only(rule: Rule, ctx: Context) -> bool:
    """Whether every OUT_OF_MEMORY row of sacct is an extern step's (``1234.extern``)."""
    st = dict(ctx.stats(rule, ["sacct_state"]))["sacct_state"]
    if st.count > len(st.samples):
        return False
    return all(ev.text.split()[:1] and ev.text.split()[0].endswith(".extern") for ev, _ in st.samples)


def _worker_sigkilled(rule: Rule, ctx: Context) -> list[Finding]:
    """torchrun's agent reporting a worker that died of SIGKILL (exitcode -9): the agent itself stops
    workers with SIGTERM, and Slurm's own kills take the agent too, so the kernel's OOM killer is the
    likeliest sender; a weak answer that says what it assumed."""
    failed = ctx.rules.get("unexplained-failure")
    if failed is None:
        return []
    killed = [(ev, g) for ev, g in ctx.samples(failed, ["agent_exit", "deepspeed_exit", "elastic_root_cause"]) if g.get("code") == "-9"]
    if not killed:
        return []
    ranks = sorted({int(g["local_rank"]) for _, g in killed if g.get("local_rank", "").isdigit()})
    launcher = "torchrun's" if any("local_rank" in g for _, g in killed) else "DeepSpeed's launcher's"
    which = f" (local rank {', '.join(map(str, ranks))})" if ranks else ""
    detail = (
        f"{launcher} worker{'s' if len(killed) > 1 else ''}{which} died of SIGKILL "
        "(exitcode -9), which the kernel's OOM killer sends when host memory runs out; "
        "`sacct -j <job> -o JobID,State,MaxRSS,ReqMem` and `dmesg | grep -i oom` on the node confirm it"
    )
    assumed = ["the SIGKILL came from the OOM killer: the logs do not say who sent it"]
    hosts = sorted({h for ev, _ in killed if (h := ctx.host_for(ev))})
    finding = ctx.make_finding(
        rule, [], detail=detail + ".", evidence=[ev for ev, _ in killed[:4]], hosts=hosts or None,
        severity="warning", confidence=0.4, assumed=assumed,
    )  # fmt: skip
    finding.count = len(killed)
    return [finding]


def _oom_task_table(rule: Rule, ctx: Context) -> str:
    """The kernel's OOM report task list (mm/oom_kill.c dump_tasks): rss is in pages, the victim is
    most often the task with the most of them."""
    rows = ctx.samples(rule, ["oom_task_table"])
    if not rows:
        return "the kernel printed an OOM report (its task list header)"
    _ev, top = max(rows, key=lambda r: int(r[1]["rss"]))
    gib = int(top["rss"]) * 4096 / (1 << 30)  # 4 KiB pages on x86-64 and most arm64 kernels
    return (
        f"the kernel printed an OOM report listing the tasks it weighed; the largest is {top['comm']} (pid "
        f"{top['pid']}) with {top['rss']} resident pages (~{gib:.0f} GiB at 4 KiB)"
    )


def _docker_state_not_oomkilled(rule: Rule, ctx: Context) -> bool:
    """Whether every OOMKilled the logs show is `docker inspect`'s `"OOMKilled": false` key."""
    st = dict(ctx.stats(rule, ["k8s_oomkilled"]))["k8s_oomkilled"]
    return st.count == len(st.samples) and all('"OOMKilled": false' in ev.text for ev, _ in st.samples)


def job_oom(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = ctx.stats(rule)
    if not chosen:
        return _worker_sigkilled(rule, ctx)
    names = {n for n, _ in chosen}
    if "k8s_oomkilled" in names and _docker_state_not_oomkilled(rule, ctx):
        names.discard("k8s_oomkilled")  # `docker inspect` of a container the kernel did not kill
        if not names:
            return _worker_sigkilled(rule, ctx)
    if names == {"sacct_state"} and not ctx.job_failed() and _extern_steps_only(rule, ctx):
        # The extern step holds no task of the job (it adopts ssh sessions); Slurm marks it OUT_OF_MEMORY
        # when any OOM event hit the job's cgroup or, on some cgroup v2 versions, for nothing at all.
        detail = (
            "Only the job's extern step is recorded OUT_OF_MEMORY, and nothing else failed: the extern step runs none "
            "of the job's tasks (Slurm's accounting marks it on an OOM event anywhere in the job's cgroup, and on "
            "some cgroup v2 setups for nothing at all)"
        )
        return [ctx.make_finding(rule, ["sacct_state"], detail=detail + ".", severity="info", confidence=0.4)]
    steps = ctx.captures(rule, "step", ["oom_kill_event", "exceeded_limit"])
    hosts: dict[str, None] = {}
    for ev, groups in ctx.samples(rule, list(names)):
        host = groups.get("host") or ctx.host_for(ev)
        if host:
            hosts[host] = None
    parts = []
    for _ev, groups in ctx.samples(rule, ["exceeded_limit"])[:1]:
        parts.append(
            f"StepId={groups['step']} used {_mib(groups['used'])} of its {_mib(groups['limit'])} memory limit "
            "and was killed"
        )
    if "oom_kill_event" in names:
        parts.append(f"the kernel's cgroup OOM killer fired in StepId={', '.join(steps[:3]) or '?'}")
    if names & {"task_oom", "stepd_task_oom"}:
        tasks = ctx.captures(rule, "task", ["task_oom", "stepd_task_oom"])
        parts.append(f"srun reports task(s) {', '.join(tasks[:6])} Out Of Memory")
    kernel = ["kernel_oom", "kernel_killed", "kernel_oom_summary"]
    if names & set(kernel):
        comms = ctx.captures(rule, "comm", kernel)
        parts.append(f"the kernel killed {', '.join(comms[:3])} for memory")
    for _ev, g in ctx.samples(rule, ["memcg_limit_kill"])[:1]:
        # Kernels before 4.19 name the memory cgroup whose limit was reached (a Slurm job's or step's).
        parts.append(f"the kernel's OOM killer killed a task of {g['task_cg']} at the memory limit of {g['limit_cg']}")
    if "k8s_system_oom" in names:
        victims = ctx.captures(rule, "comm", ["k8s_system_oom"])
        parts.append(f"the kubelet reports the node's OOM killer killed {', '.join(victims[:3])}")
    if "ray_memory_monitor" in names:
        workers = ctx.captures(rule, "workers", ["ray_memory_monitor"])
        parts.append(f"Ray's memory monitor killed {', '.join(workers[:3])} worker(s) under host memory pressure")
    if names & {"ray_task_oom", "ray_threshold"} and "ray_memory_monitor" not in names:
        parts.append("Ray's memory monitor killed a task: the node ran low on host memory")
    for _ev, g in ctx.samples(rule, ["ray_oom_v1"])[:1]:
        parts.append(f"Ray's memory monitor stopped the task: more than {g['pct']}% of {g['host']}'s memory was in use")
    if "container_oom" in names:
        parts.append("the container reached its memory limit")
    if "k8s_evicted_memory" in names:
        parts.append("Kubernetes evicted the pod: the node was low on memory")
    if "k8s_oomkilled" in names:
        parts.append("Kubernetes killed the container at its memory limit (OOMKilled)")
    task_table = ""
    if names & {"oom_task_table", "oom_task_header"} and not names & set(kernel):
        task_table = _oom_task_table(rule, ctx)
        parts.append(task_table)
    if "kernel_invoked" in names and not names & set(kernel):
        parts.append(f"{', '.join(ctx.captures(rule, 'comm', ['kernel_invoked'])[:3])} invoked the kernel's OOM killer")
    for _ev, g in ctx.samples(rule, ["batch_memory_limit", "condor_memory"])[:1]:
        parts.append(f"the batch system ended the job at its memory limit ({g['what']})")
    if "sacct_state" in names and not parts:
        parts.append("Slurm recorded the job as OUT_OF_MEMORY")
    for _ev, groups in ctx.samples(rule, ["host_alloc"])[:1]:
        parts.append(f"the program could not allocate {groups['size']} of host memory")
    for _ev, groups in ctx.samples(rule, ["cpu_alloc"])[:1]:
        parts.append(f"PyTorch could not allocate {int(groups['bytes']) / (1 << 30):.1f} GiB of host memory")
    if "exceeded_at_some_point" in names and not parts:
        parts.append("Slurm says the job exceeded its memory limit")
    confidence = None
    severity = None
    assumed: list[str] = []
    if names == {"dataloader_killed"}:
        parts.append("a DataLoader worker was killed by SIGKILL, which is almost always the host's OOM killer")
        confidence = 0.6
    if task_table and names <= {"oom_task_table", "oom_task_header"}:
        # The kernel prints this list only in an OOM report, but the victim line is not in the excerpt.
        confidence = 0.7
        assumed.append("the OOM killer took the task with the most resident memory: its victim line is not in the excerpt")
    weak = {"shell_killed", "enomem", "dataloader_killed", "ray_worker_sigkill"}
    if names == {"ray_worker_sigkill"}:
        parts.append(
            "a Ray worker process died of SIGKILL (connection error code 2), which Ray's OOM guide names as the "
            "sign of the OS OOM killer; `ray stop --force` or a crashed worker print the same"
        )
        # One of three possible causes Ray lists: a lead under the failure, never the verdict on its own.
        severity, confidence = "warning", 0.45
        assumed.append("the kernel's OOM killer sent the SIGKILL: the logs show no OOM message")
    if names <= weak and names & {"shell_killed", "enomem"}:
        # Signs from inside the job only: SIGKILL and ENOMEM have other senders, so say what was assumed.
        if "shell_killed" in names:
            pids = ctx.captures(rule, "pid", ["shell_killed"])
            which = f"process {', '.join(pids[:3])}" if pids else "a command"
            parts.append(f"the shell reports {which} Killed (SIGKILL)")
        if "enomem" in names:
            parts.append("a process could not get host memory ([Errno 12] Cannot allocate memory)")
        confidence = 0.75 if len(names) > 1 else 0.55
        assumed.append("the kernel's OOM killer sent the SIGKILL / refused the memory: the logs show no OOM message")
    where = f" on {hosts_text(list(hosts))}" if hosts else ""
    if names == {"exceeded_at_some_point"} and not ctx.job_failed():
        # slurmstepd prints it when the cgroup's limit was hit at any time (pages reclaimed or swapped),
        # also for steps that went on and ended well: memory pressure, not a kill.
        parts = ["Slurm says the step reached its memory limit at some point (pages were reclaimed or swapped out); "
                 "nothing was killed and the logs show no failure"]
        severity, confidence = "warning", 0.6
    detail = ("Host memory ran short" if severity else "Host memory ran out") + where + ": " + "; ".join(parts) + "."
    values = {"step": "StepId=" + ", ".join(steps[:3]) if steps else "the job"}
    return [
        ctx.make_finding(
            rule, detail=detail, hosts=list(hosts), values=values, confidence=confidence, assumed=assumed,
            severity=severity,
        )
    ]


K8S_NODE_LOST = ["k8s_node_status", "k8s_status_unknown", "k8s_taint_eviction", "k8s_node_eviction"]
RAY_NODE_LOST = [
    "ray_health_check", "ray_node_died_error", "ray_raylet_died", "ray_raylet_terminated", "ray_objects_lost"
]


# A provider or scheduler taking the node back: the node's "death" that Ray or Kubernetes reports next is that.
# A task launch that failed because the node could not be reached, not because its slurmd refused it.
_LOST_NODE = re.compile(
    r"(?i)communication connection failure|connection (?:refused|reset)|no route to host|not responding|"
    r"zero bytes were transmitted|node (?:is )?down|host is down"
)

# slurmctld's and the batch systems' own words naming the node they lost.
CTLD_LOST = ["ctld_failed_node", "slurmd_error_running", "kill_task_reason", "batch_complete_failure",
             "sinfo_not_responding", "instance_gone", "mpirun_lost_remote"]  # fmt: skip
FLUX_SHELL_LOST = ["flux_lost_shell", "flux_shell_lost_doom", "flux_unkillable"]
# What a few signatures say, in the detail's order.
LOST_NODE_SAYS = [
    (["kill_task_reason", "flux_unkillable"],
     "the node is drained because the job's processes did not die (Kill task failed / unkillable processes: stuck "
     "in the kernel, often a hung GPU or file system)"),
    (["instance_gone"],
     "the node's cloud VM was stopped or deleted under the job (Instance stopped/deleted; a preempted spot VM gets "
     "the same reason)"),
    (["mpirun_lost_remote", "mpirun_heartbeat"],
     "mpirun lost the node mid-run (its daemon stopped answering, or its processes stopped sending heartbeats): the "
     "node went down, its network dropped, or the daemon died"),
    (FLUX_SHELL_LOST, "Flux lost contact with the job shell on a node (the node or its broker went away)"),
    (["hydra_proxy_closed"],
     "mpiexec (Hydra) lost the connection to a node's proxy before it reported its processes' exit: the node went "
     "down, or the proxy was killed there (the OOM killer, a dropped ssh)"),
    (["step_node_unavailable"],
     "srun could not create its step because a node of the allocation is down or drained (Required node not "
     "available)"),
]  # fmt: skip
# A node's drain reason (and slurmctld's line that sets it), left also by a job that ended for another reason.
DRAINED_AFTER = {"kill_task_reason", "batch_complete_failure", "slurmd_error_running"}
# Processes that did not die when the job was being ended: the node's fault only when nothing else ended it.
UNKILLABLE = {*DRAINED_AFTER, "kill_task_failed", "flux_unkillable"}
MPIRUN_LOST = {"mpirun_lost_remote", "mpirun_heartbeat"}
# sinfo's rows for nodes Slurm holds down or failed: the cluster's state, not the job's record.
SINFO_ROWS = ["sinfo_down_row", "sinfo_fail_row"]
# A node lost to the job, or a process there killed / a node drained by hand: error, not critical.
UNSURE = {"hydra_proxy_closed", "step_node_unavailable"}

TAKEN_BACK = ["cloud_preempted", "spot_interruption", "termination_notice", "node_shutdown", "node_termination",
              "spot_itn", "ray_node_preempted"]  # fmt: skip


def _is_mount(groups: dict[str, str]) -> bool:
    """A bootstrap step that mounts shared storage (Chef's mount[/home]): the storage is missing, not the node."""
    return groups.get("resource", "").startswith("mount[")


def node_failure(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return _peer_gone(rule, ctx)
    if {n for n, _ in ctx.stats(rule)} == {"pcluster_cookbook"} and all(
        _is_mount(g) for _, g in ctx.samples(rule, ["pcluster_cookbook"])
    ):
        return []  # the node's bootstrap could not mount the shared file system: shared-storage-missing's
    if {n for n, _ in ctx.stats(rule)} == {"task_launch_failed"} and not any(
        _LOST_NODE.search(r) for r in ctx.captures(rule, "reason", ["task_launch_failed"])
    ):
        # slurmd on that node answered and refused the launch (a CPU binding, an expired credential, a
        # munge key it does not share): the node is up; unexplained-failure says why it refused.
        return []
    soft_only = {n for n, _ in ctx.stats(rule)} <= {*K8S_NODE_LOST, *RAY_NODE_LOST, "ray_node_dead", "ray_node_died"}
    if soft_only and taken_back(ctx) & set(TAKEN_BACK):
        return []  # the node died of its preemption, which preempted reports
    failed: dict[str, None] = {}
    for expr in ctx.captures(rule, "nodes", ["node_failure_on"]):
        for host in expand(expr):
            failed[host] = None
    for host in ctx.captures(rule, "host", ["task_launch_failed", "kill_task_failed", "ume_banner"]):
        failed[host] = None
    for ev, _g in ctx.samples(rule, ["pals_shepherd"]):
        if host := ctx.host_for(ev):
            failed[host] = None
    batch = ["pbs_node_down", "pbs_mom_lost", "pbs_join_failed", "flux_node_failure", "pals_shepherd", *FLUX_SHELL_LOST]
    for expr in ctx.captures(
        rule,
        "nodes",
        [
            "not_responding", "unexpected_reboot", "prolog_failure", "low_real_memory", "not_ready", *SINFO_ROWS,
            *batch, *CTLD_LOST,
        ],
    ):  # fmt: skip
        for host in expand(expr):
            failed[host] = None
    parts = []
    if failed:
        # Only Slurm's own words make it "Slurm" that lost the node; mpirun, Flux or PBS say so for themselves.
        others = {n for n, _ in ctx.stats(rule)} <= {*batch, "pbs_sister_lost", "mpirun_lost_remote", "hydra_proxy_closed"}
        parts.append(f"{'the job lost' if others else 'Slurm lost'} {hosts_text(list(failed))}")
    ids = ctx.captures(rule, "nodeid", ["io_error", "io_timeout"])
    if ids:
        parts.append(f"srun lost the connection to the slurmstepd of node index {', '.join(ids[:6])} of the step")
    reasons = ctx.captures(rule, "reason", ["task_launch_failed"])
    if reasons:
        parts.append(f"task launch failed: {reasons[0]}")
    if ctx.stats(rule, ["ume_banner"]):
        parts.append("slurmstepd ended the job for an uncorrectable memory error on the node: a hardware fault")
    if ctx.stats(rule, ["kill_task_failed"]):
        if "RUNNING" in ctx.captures(rule, "why", ["kill_task_failed"]):
            parts.append(
                "the step never reached running and could not be ended in time (stuck in its prolog, container "
                "set-up or a hung file system): slurmstepd drains such a node"
            )
        else:
            parts.append(
                "processes did not die on SIGKILL (Kill task failed: stuck in the kernel, often a hung GPU or file "
                "system)"
            )
    if ctx.stats(rule, ["ctld_failed_node", "requeue_node_fail"]):
        requeued = " and requeued the job" if ctx.stats(rule, ["requeue_node_fail"]) else ""
        parts.append(f"Slurm's controller declared the node failed, ended the job's work on it{requeued}")
    if ctx.stats(rule, ["wrong_batch_host"]):
        sender = first_or(ctx.captures(rule, "sender", ["wrong_batch_host"]))
        parts.append(
            f"the batch script's former node ({sender}) reported its end after the job had been requeued "
            "elsewhere: slurmctld asks whether it was requeued for a node failure"
        )
    if ctx.stats(rule, ["slurmd_error_running", "batch_complete_failure"]):
        why = first_or(ctx.captures(rule, "reason", ["slurmd_error_running"]))
        parts.append(
            "the node's slurmd reported a fatal error for the batch job"
            + (f" ({why})" if why else "")
            + " and slurmctld drained it (batch job complete failure)"
        )
    parts += [says for names, says in LOST_NODE_SAYS if ctx.stats(rule, names)]
    if ctx.stats(rule, ["not_responding", "sinfo_not_responding"]):
        since = first_or(ctx.captures(rule, "time", ["not_responding", "sinfo_not_responding"]))
        who = "it" if failed else "a node of the job"
        when = f" at {since}" if since else ""
        parts.append(f"Slurm's controller marked {who} Not responding{when}: its slurmd stopped answering")
    if ctx.stats(rule, ["not_ready"]):
        parts.append("the allocated nodes never became ready (they did not boot or resume in time: ResumeTimeout)")
    if ctx.stats(rule, ["prolog_failure"]):
        parts.append("the node's Prolog failed as the job started there: Slurm drains such a node and revokes the allocation")
    if ctx.stats(rule, ["launch_failed_held"]):
        parts.append(
            "Slurm could not start the batch script on its node and requeued the job held (launch failed requeued "
            "held): that node's slurmd or prolog failed (its slurmd log says why; scontrol release <job> after the fix)"
        )
    if ctx.stats(rule, ["unexpected_reboot"]):
        parts.append("Slurm saw the node come back with a new boot time (Node unexpectedly rebooted): it went down mid-job")
    if ctx.stats(rule, ["node_state_down"]):
        parts.append("Slurm shows the node DOWN or not responding")
    states = ctx.captures(rule, "state", SINFO_ROWS)
    if states:
        parts.append(
            f"sinfo shows the node {', '.join(dict.fromkeys(states))}: Slurm holds it down or failed (a `*` means "
            "its slurmd does not answer); `sinfo -R` gives the reason"
        )
    for _ev, g in ctx.samples(rule, ["local_disk_full"])[:1]:
        where = g.get("path") or g.get("template") or "the temp directory ($TMPDIR or /tmp)"
        parts.append(
            f"a node's local disk is full: No space left on device for {where[:100]}, so whatever writes temp files "
            "there fails on that node"
        )
    if ctx.stats(rule, ["state_node_fail"]):
        parts.append("Slurm's record says the job ended in state NODE_FAIL")
    if ctx.stats(rule, [*batch, "pbs_sister_lost"]):
        parts.append("the batch system (PBS, Flux, HPE PALS) lost a node of the job and ended or requeued it")
    if ctx.stats(rule, ["pbs_node_failure", "mom_unreachable"]):
        parts.append("the batch server lost the node (its MOM did not answer) and ended the job for node failure")
    if ctx.stats(rule, ["low_real_memory", "reason_low_memory"]):
        parts.append(
            "Slurm refused the node's registration: it came back with less memory than slurm.conf gives it (Low "
            "RealMemory) and is drained: a node that rebooted or a cloud VM replaced (spot eviction) mid-job"
        )
    if ctx.stats(rule, ["ompi_lost_node"]):
        parts.append(
            "Open MPI lost the daemon on a node of the job mid-run (ORTE has lost communication with its daemon): "
            "the node went down or its network dropped (the help box names it: hostname)"
        )
    if ctx.stats(rule, K8S_NODE_LOST):
        parts.append("Kubernetes lost a node (its kubelet stopped posting status) and evicted the job's pods from it")
    if ctx.stats(rule, RAY_NODE_LOST):
        parts.append("Ray lost a node (health check failed, raylet died) and the tasks and objects on it with it")
    if ctx.stats(rule, ["k8s_not_ready", "k8s_unreachable"]):
        parts.append("Kubernetes marked a node NotReady or unreachable (its kubelet stopped reporting) and evicts its pods")
    if ctx.stats(rule, ["kernel_panic"]):
        why = ctx.captures(rule, "why", ["kernel_panic"])
        reason = f" ({why[0]})" if why else ""
        parts.append(f"a node's kernel panicked{reason}: it went down with the job's processes")
    if ctx.stats(rule, ["ray_node_dead", "ray_node_died", "ray_node_timed_out"]):
        parts.append("Ray marked a node dead (it stopped answering heartbeats) and the work on it died with it")
    for _ev, g in ctx.samples(rule, ["pcluster_bootstrap"])[:1]:
        parts.append(
            f"ParallelCluster's clustermgtd found a compute node that failed to bootstrap ({g['why'][:140]}): jobs sent "
            "to it cannot start, and repeated failures put the queue in protected mode"
        )
    for _ev, g in [(ev, g) for ev, g in ctx.samples(rule, ["pcluster_cookbook"]) if not _is_mount(g)][:1]:
        parts.append(
            f"a compute node's ParallelCluster bootstrap failed at {g['resource']} ({g['cookbook']}::{g['recipe']}: "
            f"{g['why'][:120]}): the node never joins Slurm, so jobs sent to it fail (its cloud-init-output.log and "
            "chef-client.log say more)"
        )
    reporters = ctx.captures(rule, "reporter", ["banner", "banner_old"])
    if ctx.stats(rule, ["banner", "banner_old"]):
        parts.append(
            f"the job was cancelled DUE TO NODE FAILURE (reported by {', '.join(reporters[:3])}"
            + (", a surviving node)" if failed and not set(reporters) & set(failed) else ")")
        )
    detail = "; ".join(parts)
    detail = (
        detail[:1].upper()
        + detail[1:]
        + ". Errors on the other nodes after this (peer closed/reset, timeouts) are consequences."
    )
    names = failed and list(failed) or []
    values = {"nodes": ",".join(names) if names else "<the failed node, see scontrol show job / slurmctld log>"}
    # Ray or a node's state alone, in a run that shows no failure: the work was moved; worth a warning.
    soft = {
        "ray_node_dead", "ray_node_died", "ray_node_timed_out", "node_state_down", "k8s_not_ready", "k8s_unreachable",
        *K8S_NODE_LOST, *RAY_NODE_LOST,
    }  # fmt: skip
    chosen = {n for n, _ in ctx.stats(rule)}
    severity = "warning" if chosen <= soft and not ctx.job_failed() else None
    confidence = None
    assumed: list[str] = []
    if chosen <= set(SINFO_ROWS):
        # A sinfo row is the cluster's state when it was run, not the job's record: it names the node only.
        severity, confidence = "warning", 0.4
        assumed.append(
            "the job ran on (or was sent to) the node sinfo shows down: the row says what the node is, not which "
            "jobs it held"
        )
    elif chosen == {"local_disk_full"}:
        # ENOSPC on /tmp is the node's disk; whether it was full before the job or the job filled it, the logs
        # do not say. Either way that node fails what writes there until it is cleaned.
        severity, confidence = "error", 0.5
        assumed.append(
            "the node's disk was full before the job (it needs cleaning): a job that fills /tmp with its own temp "
            "files ends the same way (point TMPDIR at a larger disk)"
        )
    if chosen == {"ray_raylet_terminated"}:
        # Ray names the OOM killer, a crash of the raylet itself and other signals as possible reasons.
        confidence = 0.5
        assumed.append("the raylet died with its node: Ray lists SIGKILL by the OOM killer among the possible reasons")
    ended_by = _ended_otherwise(ctx)
    if (
        ended_by
        and chosen <= {*UNKILLABLE, "wrong_batch_host"}
        and "RUNNING" not in ctx.captures(rule, "why", ["kill_task_failed"])
    ):
        # The job was being ended for another reason and its processes would not die (stuck in the kernel on
        # a hung file system or GPU): the node is left drained, but what ended the job is that other cause.
        severity, confidence = "warning", 0.6
        detail = f"The job was ended by {ended_by} and its processes did not die on the node. {detail}"
        assumed.append(f"the node's state did not end the job: {ended_by} did, and the kill then failed")
        if ended_by == "a cancel" and "kill_task_failed" in chosen:
            # A cancel with no reason says nothing of why; processes that then outlive SIGKILL are stuck in
            # the kernel, which is what hangs a job until someone cancels it. A time limit or a preemption
            # ends a job for its own reason; a cancel leaves the stuck node as the likelier one.
            severity, confidence = "error", 0.5
            assumed[-1] = (
                "the cancel ended a job that the node's stuck processes had hung: a cancel for another reason "
                "leaves the same lines"
            )
    elif chosen <= {*DRAINED_AFTER, "wrong_batch_host"} and chosen & DRAINED_AFTER:
        # A drain reason that outlives the job: the processes would not die when the job ended, whatever
        # ended it (its time limit, a failed epilog). The node needs an admin; the job's cause may be another.
        severity, confidence = "warning", 0.6
        assumed.append("the job ended because of the node: a drain reason is also left by a job that ended otherwise")
    elif chosen == {"wrong_batch_host"}:
        # slurmctld's question, not its finding: the node may have failed, or the job been requeued by hand.
        severity, confidence = "warning", 0.5
        assumed.append("the requeue was for a node failure: slurmctld only asks")
    elif chosen <= MPIRUN_LOST and (daemon_never_called_back(ctx) or ssh_login_failed(ctx)):
        # The box that names the lost daemon comes with the one for a daemon that never called back after
        # launch, or with the launcher's ssh to a node failing: mpirun's start of its daemons failed, not a
        # node that was up and then went down.
        severity, confidence = "warning", 0.3
        assumed.append("the node went down, though its daemon never started (a start-up failure)")
    elif chosen <= MPIRUN_LOST and _pmix_failed_too(ctx):
        # mpirun's lost daemon among PMIx's own errors: the wire-up between the nodes failed (pmix-runtime-error).
        severity, confidence = "warning", 0.5
        assumed.append("the node went down, not the PMIx wire-up between the nodes that the PMIx errors show")
    elif chosen <= {*MPIRUN_LOST, "instance_gone", "wrong_batch_host", *UNSURE}:
        # The node is lost to the job either way, but these words also fit a dropped network path, a daemon
        # that died, or a spot VM taken back: less sure than Slurm's own NODE_FAIL.
        confidence = 0.75
        if chosen & UNSURE:
            severity, confidence = "error", 0.65
        assumed.append(
            "the node itself went down, not only the network path to it, its daemon or (cloud) a preempted VM"
        )
    return [
        ctx.make_finding(
            rule, detail=detail, hosts=names, values=values, severity=severity, confidence=confidence, assumed=assumed
        )
    ]


def _ended_otherwise(ctx: Context) -> str:
    """What else the logs say ended the job (its time limit, a preemption, a cancel), or ""."""
    if ctx.count("job-time-limit"):
        return "its time limit"
    if ctx.count("preempted", ["preemption", "state_preempted"]):
        return "a preemption"
    if ctx.count("job-cancelled", ["cancelled", "lsf_owner", "condor_rm", "flux_cancel"]):
        return "a cancel"
    return ""


def _pmix_failed_too(ctx: Context) -> bool:
    """Whether pmix-runtime-error's own messages (not mpirun's lost-daemon box it shares) are in the logs."""
    pmix = ctx.rules.get("pmix-runtime-error")
    if pmix is None:
        return False
    daemon_box = {"daemon_lost", "daemon_start_failed"}
    own = [s.name for s in pmix.signatures if s.name not in daemon_box and not s.fact]
    return bool(ctx.stats(pmix, own))


def _peer_gone(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL could not connect to a peer that refused (nothing listened), in a job that failed of it:
    the peer's node broke or its process died first. Which of the two the logs do not say."""
    addrs = ctx.captures(rule, "addr", ["peer_refused"])
    if not addrs or not ctx.job_failed():
        return []
    detail = (
        f"NCCL's connection to the peer at {', '.join(addrs[:4])} was refused: nothing listened there any more, "
        "so that peer's node has a broken network or went down (its address names it: reverse DNS), or its "
        "process died first; resubmit excluding that node if its own log shows no error"
    )
    assumed = ["the peer's node broke, not its process: the logs do not show the peer's side"]
    return [
        ctx.make_finding(
            rule, ["peer_refused"], detail=detail + ".", severity="error", confidence=0.45, assumed=assumed
        )
    ]


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
    by = "ran scancel" if ctx.stats(rule, ["cancelled", "record_cancelled"]) else "cancelled it (bkill, condor_rm, flux cancel)"
    detail = (
        f"{who} was cancelled{how}{when} with no reason given and no failure before it: a user or admin {by}. "
        "Nothing failed; the terminated tasks are its consequences."
    )
    return [ctx.make_finding(rule, detail=detail, hosts=[])]
