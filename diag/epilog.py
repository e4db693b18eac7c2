"""``slurmdiag epilog``: diagnose the job that just ended, from Slurm's Epilog/EpilogSlurmctld/strigger.

It must never fail the epilog (a failing Epilog drains the node): every error is logged and the
exit status is 0. It reads the job from the environment Slurm sets (``SLURM_JOB_ID``,
``SLURM_ARRAY_JOB_ID``/``SLURM_ARRAY_TASK_ID``, ``SLURM_JOB_NODELIST``, ``SLURM_JOB_UID`` ...),
drops root privileges to the job's user before reading the job's files (a user's symlink must
not make root read or overwrite anything), and stays within ``--max-seconds``: past a budget only
the head and tail of big files are read, and a hard alarm ends it regardless.

``--wait-final`` detaches (double fork, new session, every inherited descriptor closed) so the
epilog itself returns at once: slurmd waits for the epilog's output pipes to close, and the job
cannot leave COMPLETING while it does. ``--only-failed`` writes and posts nothing for a job whose
worst finding is below ``--fail-on``; ``--webhook`` posts the alert, redacted unless told not to.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from diag.files import write_atomic
from diag.formats import OutputOptions, deliver, prepare
from diag.hostlist import expand
from diag.slurm.query import JobInfo, SlurmError, job_files, query_job

SETTLED_WAIT_S = 0.5
WAIT_FINAL_SHARE = 0.5  # of --max-seconds, for the detached wait; the rest is for reading and writing
UNSETTLED_STATES = ("COMPLETING", "RUNNING", "CONFIGURING", "PENDING", "REQUEUED", "RESIZING", "SUSPENDED", "STOPPED")


@dataclass
class EpilogOptions:
    job_id: str | None = None
    output_dir: str | None = None
    max_seconds: float = 60.0
    log_file: str | None = None
    formats: Sequence[str] = ("markdown", "json")
    all_nodes: bool = False
    wait_final: bool = False
    drop_privileges: bool = True
    rule_dirs: Sequence[str] = ()
    disabled: Sequence[str] = ()
    only_failed: bool = False
    fail_on: str = "error"  # with only_failed: the least severity worth a report
    webhook: str | None = None
    webhook_format: str | None = None  # slack, teams, mattermost; None: from the URL
    redact: bool | None = None  # None: the files are kept as read, the webhook is redacted
    fleet_dir: str | None = None  # also write the job's slurmdiag.fleet/1 record under DIR/spool/
    cluster: str | None = None  # the fleet record's cluster (None: $SLURM_CLUSTER_NAME / slurm.conf)


class Log:
    """One line per event to stderr and, when configured, appended to a log file."""

    def __init__(self, path: str | None):
        self.path = path

    def __call__(self, message: str) -> None:
        line = f"slurmdiag epilog: {message}"
        with contextlib.suppress(OSError):
            print(line, file=sys.stderr, flush=True)
        if self.path:
            try:
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {line}\n")
            except OSError:
                pass


def job_id_from_env(env: Mapping[str, str]) -> str | None:
    """``123_4`` for an array task (its files carry that form), else ``SLURM_JOB_ID``."""
    array_job, array_task = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
    if array_job and array_task and array_task.isdigit():
        return f"{array_job}_{array_task}"
    return env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")


def should_run_here(env: Mapping[str, str]) -> bool:
    """A slurmd Epilog runs on every node of the job: diagnose once, on the first node."""
    node = env.get("SLURMD_NODENAME")
    if env.get("SLURM_SCRIPT_CONTEXT", "epilog_slurmd") != "epilog_slurmd" or not node:
        return True
    nodes = expand(env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or "")
    return not nodes or nodes[0] == node


def _wait_status(value: str | None) -> str:
    """``SLURM_JOB_DERIVED_EC`` is a raw wait status (768 = exit 3) -> ``3:0``."""
    if not value or not value.isdigit():
        return ""
    n = int(value)
    return f"{n >> 8}:{n & 0x7F}"


def allocation_from_env(jobs: Sequence[JobInfo], env: Mapping[str, str]) -> None:
    """The whole allocation for the epilog's own job. While it is COMPLETING, scontrol lists only the
    nodes still completing (a per-node Epilog sees a 2-node job as 1 node), and the node count
    drives the multi-node rules; the epilog environment still names every node."""
    node_list = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
    nodes = expand(node_list) if node_list else []
    count = env.get("SLURM_JOB_NUM_NODES", "")
    count_n = int(count) if count.isdigit() else 0
    raw = env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID")
    for job in jobs:
        if not raw or job.raw_id != raw:
            # Another job's environment (slurmdiag epilog JOBID run inside a job), or a het job's
            # other component: its allocation is not this one's.
            continue
        if len(nodes) > len(job.nodes):
            job.nodes, job.node_list = nodes, node_list
        job.num_nodes = max(job.num_nodes, count_n, len(job.nodes))


def job_from_env(job_id: str, env: Mapping[str, str]) -> JobInfo:
    """What the epilog environment alone says, when Slurm's commands cannot answer."""
    array_job, array_task = env.get("SLURM_ARRAY_JOB_ID", ""), env.get("SLURM_ARRAY_TASK_ID", "")
    node_list = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST") or ""
    stdout = env.get("SLURM_JOB_STDOUT", "")
    return JobInfo(
        job_id=job_id,
        raw_id=env.get("SLURM_JOB_ID", ""),
        name=env.get("SLURM_JOB_NAME", ""),
        user=env.get("SLURM_JOB_USER", ""),
        exit_code=env.get("SLURM_JOB_EXIT_CODE2", ""),
        derived_exit_code=_wait_status(env.get("SLURM_JOB_DERIVED_EC")),
        node_list=node_list,
        nodes=expand(node_list) if node_list else [],
        num_nodes=int(env.get("SLURM_JOB_NUM_NODES", "0") or 0) if env.get("SLURM_JOB_NUM_NODES", "").isdigit() else 0,
        restarts=int(env["SLURM_JOB_RESTART_COUNT"]) if env.get("SLURM_JOB_RESTART_COUNT", "").isdigit() else 0,
        stdout=stdout,
        stderr=env.get("SLURM_JOB_STDERR", "") or stdout,
        work_dir=env.get("SLURM_JOB_WORK_DIR", ""),
        array_job_id=array_job,
        array_task_id=array_task,
        source="epilog environment",
    )


def drop_privileges(env: Mapping[str, str], log: Log) -> None:
    """Become the job's user (when running as root and Slurm says who it is)."""
    if os.geteuid() != 0:
        return
    uid, gid = env.get("SLURM_JOB_UID", ""), env.get("SLURM_JOB_GID", "")
    if not uid.isdigit() or uid == "0":
        return
    os.setgroups([])
    if gid.isdigit():
        os.setgid(int(gid))
    os.setuid(int(uid))


class _OutOfTime(Exception):
    pass


def _alarm(_signum, _frame):
    raise _OutOfTime


def run_epilog(opts: EpilogOptions, env: Mapping[str, str] | None = None) -> int:
    """Always 0: the epilog must not fail because of us."""
    env = os.environ if env is None else env
    log = Log(opts.log_file)
    try:
        if not should_run_here(env) and not opts.all_nodes:
            return 0
        job_id = opts.job_id or job_id_from_env(env)
        if not job_id:
            log("no job: SLURM_JOB_ID is not set and no JOBID was given")
            return 0
        if opts.wait_final and not _detach():
            return 0  # the parent: the detached child does the work
        if opts.drop_privileges:
            drop_privileges(env, log)
        _run_bounded(job_id, opts, env, log)
    except SlurmError as exc:  # a set-up problem (no output directory), not a bug of ours
        log(f"job {opts.job_id or job_id_from_env(env)}: {exc}")
    except BaseException as exc:  # noqa: BLE001 - never fail the epilog, whatever happens
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return 0
        log(f"job {opts.job_id or job_id_from_env(env)}: internal error: {type(exc).__name__}: {exc}")
    return 0


def _detach() -> bool:
    """Double fork: True in the detached grandchild, False in the caller (which returns at once).

    slurmd reads the epilog's stdout/stderr until they close, so the grandchild keeps none of
    them (nor any other inherited descriptor); a new session keeps slurmd's kill of the epilog's
    process group from reaching it, and ``/`` as its directory keeps no file system busy."""
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child > 0:
        os.waitpid(child, 0)  # the first child exits at once: reap it
        return False
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    os.chdir("/")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.closerange(3, 1024)  # the devnull descriptor too, and whatever slurmd left open
    return True


def _run_bounded(job_id: str, opts: EpilogOptions, env: Mapping[str, str], log: Log) -> None:
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, max(opts.max_seconds, 1.0))
    try:
        paths = _diagnose_and_write(job_id, opts, env, log, start)
        if paths:  # --only-failed on a clean job has already said why nothing was written
            log(f"job {job_id}: wrote {', '.join(paths)} in {time.monotonic() - start:.2f} s")
    except _OutOfTime:
        log(f"job {job_id}: gave up after --max-seconds={opts.max_seconds:g}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _query(job_id: str, opts: EpilogOptions, env: Mapping[str, str], log: Log, start: float) -> list[JobInfo]:
    try:
        jobs = query_job(job_id, raw=True)
    except SlurmError as exc:
        log(f"job {job_id}: {exc}; using the epilog environment only")
        return [job_from_env(job_id, env)]
    if opts.wait_final:
        # A detached run waits for slurmctld to settle the job (an epilog sees COMPLETING), bounded.
        deadline = start + opts.max_seconds * WAIT_FINAL_SHARE
        while any(j.base_state in UNSETTLED_STATES for j in jobs) and time.monotonic() < deadline:
            time.sleep(SETTLED_WAIT_S)
            try:
                jobs = query_job(job_id, raw=True)
            except SlurmError:
                break
        if any(j.base_state in UNSETTLED_STATES for j in jobs):
            log(
                f"job {job_id}: still {jobs[0].base_state} after {time.monotonic() - start:.0f} s; reporting that state"
            )
    allocation_from_env(jobs, env)
    for job in jobs:
        if not job.derived_exit_code and job.job_id == job_id:
            job.derived_exit_code = _wait_status(env.get("SLURM_JOB_DERIVED_EC"))
    return jobs


def _diagnose_and_write(job_id: str, opts: EpilogOptions, env: Mapping[str, str], log: Log, start: float) -> list[str]:
    from diag.api import diagnose_job, load_rules
    from diag.formats.markdown import render_markdown
    from diag.input.sources import SCAN_BYTES_PER_SECOND, budget_bytes

    jobs = _query(job_id, opts, env, log, start)
    if len(jobs) == 1:
        job_id = jobs[0].job_id  # an array task's files and report carry 123_4, not its numeric id
    rules = load_rules(opts.rule_dirs, opts.disabled)
    files, _ = job_files(jobs)
    left = opts.max_seconds - (time.monotonic() - start)
    max_bytes = budget_bytes(files, max(left * 0.6, 0.5), SCAN_BYTES_PER_SECOND)
    # With a fleet directory the scan also samples error lines no rule knows (fleet templates).
    report = diagnose_job(jobs, rules, job_id=job_id, max_bytes_per_file=max_bytes, sample_errors=bool(opts.fleet_dir))
    written = []
    if opts.fleet_dir:
        # Every job, clean ones too: a node's failure rate needs the jobs it ran without trouble.
        try:
            written.append(_write_fleet_record(report, rules, jobs, opts, env))
        except OSError as exc:  # the job's own report still gets written
            log(f"job {job_id}: no fleet record in {opts.fleet_dir}: {exc.strerror or exc}")
    if opts.only_failed and not _worth_reporting(report, opts.fail_on):
        log(f"job {job_id}: no finding at or above {opts.fail_on} (--only-failed): no report written or posted")
        return written
    out_dir = opts.output_dir or _next_to_output(jobs, files)
    # The files stay by the job's output, readable by its user: masked only when asked.
    (kept,), redacted = prepare([report], "markdown", OutputOptions(redact=bool(opts.redact)))
    renders: dict[str, tuple[str, Callable[[], str]]] = {
        "markdown": ("md", lambda: render_markdown(kept, redacted)),
        "json": ("json", lambda: json.dumps(kept.to_json(), indent=2) + "\n"),
    }
    for fmt in opts.formats:
        ext, render = renders[fmt]
        path = os.path.join(out_dir, f"slurmdiag-{job_id}.{ext}")
        write_atomic(path, render())
        written.append(path)
    if opts.webhook:
        _post(report, job_id, opts, log, written[0] if written else None)
    return written


def _write_fleet_record(report, rules, jobs: Sequence[JobInfo], opts: EpilogOptions, env: Mapping[str, str]) -> str:
    from diag.fleet.record import build_record, default_cluster, slurm_meta, write_record

    cluster = opts.cluster or default_cluster(env)
    record = build_record(report, rules, cluster=cluster, producer="epilog", meta=slurm_meta(jobs))
    return write_record(opts.fleet_dir, record)


def _worth_reporting(report, fail_on: str) -> bool:
    from diag.catalog.causes import severity_rank

    return any(severity_rank(f.severity) >= severity_rank(fail_on) for f in report.findings)


def _post(report, job_id: str, opts: EpilogOptions, log: Log, report_path: str | None = None) -> None:
    """The chat alert: leaves the cluster, so redacted unless --no-redact; only for a finding at or
    above --fail-on (a healthy job is never posted); it names the report file written."""
    from diag.formats import worth_notifying

    if not worth_notifying(report, opts.fail_on):
        log(f"job {job_id}: no finding at or above {opts.fail_on}: the alert was not posted")
        return
    fmt = opts.webhook_format or "text"  # text: the platform is inferred from the URL
    hook = OutputOptions(redact=opts.redact, webhook=opts.webhook, notify_on=opts.fail_on, report_url=report_path)
    reports, redacted = prepare([report], fmt, hook)
    failure = deliver(reports, fmt, hook, redacted)
    log(f"job {job_id}: {failure}" if failure else f"job {job_id}: posted the alert to the webhook")


def _next_to_output(jobs: Sequence[JobInfo], files: Sequence[str]) -> str:
    for job in jobs:
        for pattern in (job.stdout, job.stderr):
            if pattern and os.path.isabs(pattern) and os.path.isdir(os.path.dirname(pattern)):
                return os.path.dirname(pattern)
    if files:
        return os.path.dirname(files[0]) or "."
    for job in jobs:
        if job.work_dir and os.path.isdir(job.work_dir):
            return job.work_dir
    raise SlurmError(f"job {jobs[0].job_id}: no directory to write the report to (give --output-dir)")
