"""The honest 'unexplained': unexplained-failure.

Reads the failure lines no other cause explained (exceptions, exit lines, crashes, launchers' banners) and weighs
them: a run that did its work and failed only at teardown, an exception the program printed and went past, tasks
that ended by a signal nobody named, stack dumps of a hang, an NCCL WARN or a PMIx unpack error no rule knows.
ignored_exception_lines (what Python printed under "Exception ignored in:") is read by cues and storage too.
"""

from __future__ import annotations

import re

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import (
    CANCELLED_TASK_ENDINGS,
    after_success,
    failure_is_timeout_cascade,
    failure_rests_on_timeout,
    said,
    success_lines,
)
from diag.diagnosis.analyzers.hints import INOTIFY_LIMIT, outside_catalogue_hint
from diag.diagnosis.analyzers.job.common import (
    SIGNAL_EXCEPTIONS,
    SIGNAL_HOWS,
    failure_before_cancel,
    hydra_interrupted,
)
from diag.diagnosis.analyzers.launch.pmix import runtime_unpack
from diag.diagnosis.context import Context, pick_evidence, shorten
from diag.evidence import Evidence
from diag.report import Finding


def unexplained_failure(rule: Rule, ctx: Context) -> list[Finding]:
    terminated = _terminated_before_timeout(rule, ctx)
    if terminated:
        return terminated
    if failure_rests_on_timeout(ctx):
        # Ranks a watchdog aborted and their launchers' exit lines are the timeout's cascade: the
        # timeout (naming the rank that fell behind) is the answer, not a failure nobody printed.
        return []
    failed = ctx.failure_signatures()
    ignored_lines = ignored_exception_lines(rule, ctx)
    ignored = _ignored_exceptions(rule, ctx, ignored_lines)
    failed = [(n, st) for n, st in failed if n not in ignored]
    failed = [(n, st) for n, st in failed if n not in _FULL_STORAGE or not _no_full_disk(st)]
    if failed and {n for n, _ in failed} <= _FULL_STORAGE and ctx.findings:
        return []  # a full disk that another finding names (a /dev/shm too small, an image store)
    if not failed:
        return _hung(rule, ctx) or _nccl_failed_call(rule, ctx) or _runtime_unpack(rule, ctx)
    for f in ctx.findings.values():
        if f.role != "symptom" and severity_rank(f.severity) >= severity_rank("error"):
            return []
    # A plain scancel (reported as info by `preempted` only when nothing failed before it): the
    # CANCELLED banner and the terminated tasks are its consequences, not an unexplained failure.
    if "job-cancelled" in ctx.findings or "preempted" in ctx.findings:
        return []
    stopped = {name for name, _ in failed}
    if _signal_exception_lines(rule, ctx):
        stopped -= {"traceback", *_EXCEPTION_LINES}  # a launcher's own SignalException: it was stopped too
    if hydra_interrupted(ctx):
        stopped -= {"mpich_exit_string"}  # "Interrupt (signal 2)": the Ctrl-C mpiexec passed on
    if stopped <= set(_EXIT_LINES) and not failure_before_cancel(ctx):
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
                "elastic_signal",
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
    # srun's cancel banner, the tasks it ended and a launcher signalled in turn (torchrun's SignalException)
    # follow the failure: name the failure itself first, and its nodes, not those the cancel reached.
    signalled = {(ev.path, ev.line) for ev in _signal_exceptions(rule, ctx)}
    causes = [
        e
        for e in evidence
        if "CANCELLED AT" not in e.text
        and not e.text.rstrip().endswith(CANCELLED_TASK_ENDINGS)
        and (e.path, e.line) not in signalled
    ]
    failed_tasks = [
        g["host"] for _, g in ctx.samples(rule, ["task_exit"]) if not g.get("how", "").startswith(SIGNAL_HOWS)
    ]
    hosts = {h for e in (causes or evidence) if (h := ctx.host_for(e))} | set(failed_tasks)
    hosts |= set(ctx.captures(rule, "host", ["banner_failed"]))
    if not hosts:
        hosts = set(ctx.captures(rule, "host", ["task_exit", "banner"]))
    first = (causes or evidence)[0].text.strip() if evidence else ""
    detail = f"The job failed and no known cause matched. First error: {shorten(first)}"
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


# A file system full or over its quota, in the C library's words: the failure when nothing else is found.
_FULL_STORAGE = {"no_space_left", "quota_exceeded"}


# Python's warnings module ("<file>:<line>: UserWarning: ..."); not a logger's level, which framing peels as a prefix.
_PY_WARNING = re.compile(r"\b[A-Z]\w*Warning: ")


def _no_full_disk(stats) -> bool:
    """Every line a warning the program printed and went on past ("UserWarning: [Errno 28] No space left on
    device. joblib will operate in serial mode") or an inotify watch limit reached, not a full disk."""
    return stats.count <= len(stats.samples) and all(
        _PY_WARNING.search(ev.text) or INOTIFY_LIMIT.search(ev.text) for ev, _ in stats.samples
    )


# A process that ended badly, as its launcher or the scheduler reports it: a per-process success marker
# (one node's torchrun or DeepSpeed launcher) says nothing of a job in which one of these is shown.
_PROCESS_FAILED = {
    *["task_exit", "agent_exit", "deepspeed_exit", "elastic_root_cause", "elastic_signal", "srun_force_term"],
    "srun_force_job",
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
    "task_exit", "agent_exit", "deepspeed_exit", "elastic_root_cause", "elastic_signal", "srun_force_term", "srun_force_job",
    "container_exit", "elastic_death_signal", "deepspeed_killing", "hydra_exit_code", "hydra_killed_by", "mpich_bad_termination",
    "shell_terminated", "launcher_signal", "lightning_sigterm", "hydra_sigint", "srun_ctrl_c",
]  # fmt: skip
# Lines a job script may print and go past: an exception caught and printed, a command its shell could not
# find or start ("module: command not found" before a run that works).
_WENT_PAST_LINES = (*_EXCEPTION_LINES, "command_not_found", "loader_missing")


def ignored_exception_lines(rule: Rule, ctx: Context) -> set[tuple[str, int]]:
    """The traceback and exception lines Python printed under "Exception ignored in:" (a
    destructor's or exit-time exception the program went on past), or in a traceback whose first
    frame is multiprocessing's exit-time finalizers (printed and gone past as well), as (path, line)."""
    markers = {(ev.path, ev.line) for ev, _ in ctx.samples(rule, ["exception_ignored"])}
    finalizer_frames = {(ev.path, ev.line) for ev, _ in ctx.samples(rule, ["finalizer_frame"])}
    if not markers and not finalizer_frames:
        return set()
    starts = sorted((ev.path, ev.line) for ev, _ in ctx.samples(rule, ["traceback"]))

    def under_marker(ev) -> bool:
        # The traceback this line belongs to starts right after the marker (or is the marker's next line),
        # or has a finalizer's frame (a paste may start inside the traceback: no header to find).
        start = max((s for s in starts if s[0] == ev.path and s[1] <= ev.line), default=(ev.path, 0))
        if start[1] == ev.line:  # the header: its first frame is the next line
            if (ev.path, ev.line + 1) in finalizer_frames:
                return True
        elif any(path == ev.path and start[1] < n < ev.line for path, n in finalizer_frames):
            return True
        return (ev.path, start[1] - 1) in markers or (ev.path, ev.line - 1) in markers

    return {(ev.path, ev.line) for ev, _ in ctx.samples(rule, _EXCEPTION_LINES) if under_marker(ev)}


def _ignored_exceptions(rule: Rule, ctx: Context, lines: set[tuple[str, int]]) -> set[str]:
    """The exception signatures all of whose lines are ``lines`` (and no more than were kept)."""
    return {
        name
        for name, st in ctx.stats(rule, _EXCEPTION_LINES)
        if st.count == len(st.samples) and all((ev.path, ev.line) in lines for ev, _ in st.samples)
    }


def _terminated_before_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    """A shell's "Terminated" for a process of the job, then the others' collective timeouts: the
    process was stopped from outside and its peers waited for it, so the timeout is the consequence."""
    timeouts = ctx.rules.get("nccl-timeout")
    terminated = ctx.samples(rule, ["shell_terminated"])
    if timeouts is None or not terminated or "nccl-timeout" not in ctx.findings:
        return []
    if any(f.role != "symptom" and f.id != "nccl-timeout" for f in ctx.findings.values()):
        return []  # a banner (time limit, scancel, preemption) or another root says who stopped it
    names = [s.name for s in timeouts.signatures if not s.fact]
    first_timeout = min((ev.order for ev, _ in ctx.samples(timeouts, names)), default=None)
    if first_timeout is None or terminated[0][0].order > first_timeout:
        return []
    detail = (
        "A process of the job was terminated by a signal (SIGTERM: the shell's 'Terminated') before the others' "
        "collective timed out: they waited for it, so the timeout is its consequence. The logs do not say who "
        "sent it (a kill, a timeout command, the scheduler, a node's watchdog script)"
    )
    return [ctx.make_finding(rule, ["shell_terminated"], detail=detail + ".", confidence=0.5)]


def _stopped_from_outside(rule: Rule, ctx: Context) -> list[Finding]:
    """Tasks that only ended by a signal (Terminated, Killed), with no error of their own and no
    banner saying who sent it: scancel, a time limit, a preemption or srun's own Ctrl-C do this to
    a healthy job, so it is a warning that says what it could not tell, never an error."""
    evidence = pick_evidence([ev for ev, _ in ctx.samples(rule, _EXIT_LINES)] + _signal_exception_lines(rule, ctx))
    hosts = sorted(set(ctx.captures(rule, "host", ["task_exit"])))
    first = evidence[0].text.strip() if evidence else ""
    detail = (
        "The tasks were ended by a signal and printed no error of their own; the logs do not say who sent it "
        f"(scancel, the time limit, a preemption, srun interrupted). First: {shorten(first)}"
    )
    if said := _agent_signal(rule, ctx):
        detail = f"{said}; the tasks printed no error of their own. First: {shorten(first)}"
    assumed = ["the job failed: its tasks were stopped, but the logs hold no error and no Slurm banner saying why"]
    return [
        ctx.make_finding(
            rule, _EXIT_LINES, detail=detail, evidence=evidence, hosts=hosts,
            severity="warning",
            confidence=0.25, assumed=assumed,
        )
    ]  # fmt: skip


_SIGNAL_NAMES = {"1": "SIGHUP", "2": "SIGINT", "15": "SIGTERM"}
# What a launcher getting each signal means; who sent a SIGTERM the launcher cannot know.
_SIGNAL_MEANS = {
    "SIGHUP": (
        "{who} got SIGHUP and stopped its workers: the terminal or SSH session it was started from closed "
        "(nohup does not shield the workers; start it from sbatch, or under tmux, screen or setsid)"
    ),
    "SIGINT": "{who} got SIGINT and stopped its workers: Ctrl-C, or srun passing an interrupt on",
    "SIGTERM": (
        "{who} got SIGTERM and stopped its workers; the logs do not say who sent it (scancel, the time limit "
        "or a preemption, which Slurm's banner in the job's .out/.err names; on some systems a node out of "
        "host memory, which dmesg shows)"
    ),
}
# The launcher each signature is the words of.
_SIGNAL_LINES = {
    "elastic_death_signal": "torchrun's agent",
    "launcher_signal": "The launcher (DeepSpeed's or torch.distributed.launch)",
    "lightning_sigterm": "PyTorch Lightning",
    "hydra_sigint": "MPICH's mpiexec (Hydra)",
    "srun_ctrl_c": "srun",
}
# Lines said only of a Ctrl-C, and srun's own account of passing one on.
_CTRL_C_LINES = ("hydra_sigint", "srun_ctrl_c")
_SRUN_CTRL_C = (
    "srun passed a Ctrl-C on to its tasks and ended the step: Ctrl-C pressed twice within a second (or once "
    "with --quit-on-interrupt)"
)
_GOT_SIGNAL = re.compile(r"got signal: (\d+)")


def _signal_exceptions(rule: Rule, ctx: Context) -> list[Evidence]:
    """Exception lines that are a launcher's own SignalException (torchrun's agent signalled from
    outside, "SignalException: Process 4015698 got signal: 15"): how it was stopped, not an error of the job."""
    samples = ctx.samples(rule, _EXCEPTION_LINES[1:])
    return [ev for ev, g in samples if (g.get("exception") or "").endswith(SIGNAL_EXCEPTIONS)]


def _signal_exception_lines(rule: Rule, ctx: Context) -> list[Evidence]:
    """The exception lines, when every one is a launcher's own SignalException."""
    signalled = _signal_exceptions(rule, ctx)
    return signalled if len(signalled) == len(ctx.samples(rule, _EXCEPTION_LINES[1:])) else []


def _agent_signal(rule: Rule, ctx: Context) -> str:
    """What a launcher said it was stopped by ("Received Signals.SIGHUP death signal", its SignalException's
    "got signal: 1", DeepSpeed's "Main process received SIGTERM"), in words."""
    said = []
    for signature in _SIGNAL_LINES:
        for ev, g in ctx.samples(rule, [signature]):
            name = g.get("signame") or _SIGNAL_NAMES.get(g.get("signum") or "", g.get("signum") or "")
            name = "SIGINT" if signature in _CTRL_C_LINES else name
            said.append((ev.order, signature, name))
    for ev in _signal_exception_lines(rule, ctx):
        if found := _GOT_SIGNAL.search(ev.text):
            said.append((ev.order, "elastic_death_signal", _SIGNAL_NAMES.get(found.group(1), found.group(1))))
    if not said:
        return ""
    _, signature, name = min(said)
    if signature == "srun_ctrl_c":
        return _SRUN_CTRL_C
    who = _SIGNAL_LINES[signature]
    return _SIGNAL_MEANS.get(name, "{who} got signal " + name + " and stopped its workers").format(who=who)


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
    detail = "PMIx failed while the process set up and no known cause matched. First error: " + shorten(evidence[0].text.strip())
    hint = outside_catalogue_hint([e.text for e in evidence])
    if hint:
        detail = f"{detail.rstrip('.')}. {hint}"
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
    detail = f"{who} that no known cause explains: {shorten(first)}"
    assumed = ["the job failed of it: the logs show this error, but not the job failing"]
    severity, confidence = "warning", 0.25
    if trail:
        # NCCL printed the error code's way back up its stack to its API ("init.cc:840 -> 2"): the call failed.
        detail += f"; its error returned up NCCL's stack to the program's call ({trail.text.split('NCCL INFO', 1)[-1].strip()})"
        assumed, severity, confidence = [], "error", 0.4
    hint = outside_catalogue_hint([e.text for e in unknown])
    if hint:
        detail = f"{detail.rstrip('.')}. {hint}"
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
