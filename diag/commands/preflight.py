"""`slurmdiag lint` before a job runs, `slurmdiag follow` while it runs."""

from __future__ import annotations

import click

from diag.commands.common import (
    FAIL_ON,
    emit,
    fail,
    report_options,
    rules_or_exit,
)  # fmt: skip
from diag.formats import (
    FORMATS,
    OutputOptions,
)  # fmt: skip


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, required=True, type=click.UNPROCESSED, metavar="SCRIPT... [-- SBATCH-ARGS...]")
@click.option(
    "--profile",
    type=click.Path(dir_okay=False),
    envvar="SLURMDIAG_SITE",
    help="Site profile (YAML: NICs, HCAs, MPI plugins, mounts); also $SLURMDIAG_SITE.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default=None,
    help="Report format (default: from the -o extension, else text).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report here.")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    help="Exit 1 when a finding has this severity or worse.",
)
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID", help="Turn a rule (and its check) off (repeatable).")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
def lint(args, profile, fmt, output, fail_on, rule_dirs, disable, color) -> None:
    """Read sbatch SCRIPTs before they run and name the causes they would meet (the same ids as a
    diagnosis). Options after the scripts (after --) are sbatch's command line: they override
    #SBATCH lines, as in sbatch. Several scripts (a pre-commit hook) give one report each."""
    from diag.lint import LintError, lint_file
    from diag.lint.checks import check_names
    from diag.lint.profile import ProfileError, load_profile

    # The scripts are the words before the first option (click drops the '--' itself).
    split = next((i for i, a in enumerate(args) if a.startswith("-")), len(args))
    scripts, sbatch_args = args[:split], list(args[split:])
    if not scripts:
        fail("no script: slurmdiag lint SCRIPT [-- SBATCH-ARGS...]")
    rules = rules_or_exit(rule_dirs, disable, analyzers=False)
    problems = check_names(rules.rules)
    if problems:
        fail(problems[0])
    try:
        site = load_profile(profile)
        reports = [lint_file(script, rules, sbatch_args, site) for script in scripts]
    except (ProfileError, LintError) as exc:
        fail(str(exc))
    emit(reports, [], fmt, output, fail_on, color, OutputOptions(per_file=len(reports) > 1), need_input=False)


@click.command()
@click.argument("paths", nargs=-1)
@report_options
@click.option("--jobid", metavar="JOBID", help="Follow this Slurm job: its files from Slurm, until it ends.")
@click.option(
    "--self",
    "self_",
    is_flag=True,
    help="Inside a batch script (`slurmdiag follow --self &`): follow $SLURM_JOB_ID, alerts to stderr, "
    "the report only with -o; ends with the script, always exits 0.",
)
@click.option(
    "--stall-after",
    type=click.FloatRange(min=0),
    default=None,
    metavar="MIN",
    help="Warn when no training progress line (step, loss, tqdm bar) came for MIN minutes "
    "(default 30 with --jobid/--self, else off; 0: off).",
)
@click.option(
    "--progress",
    "progress",
    multiple=True,
    metavar="REGEX",
    help="What a progress line looks like for --stall-after (repeatable; replaces the built-in patterns).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=2.0,
    show_default=True,
    metavar="S",
    help="Seconds between polls of the files' sizes.",
)
@click.option(
    "--idle",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    metavar="S",
    help="PATH mode: stop when the files have not grown for this long.",
)
@click.option(
    "--alert-on",
    type=click.Choice(FAIL_ON[:4]),
    default="error",
    show_default=True,
    help="Alert early on root causes at least this severe.",
)
@click.option(
    "--exec", "exec_cmd", metavar="CMD", help="Run CMD (a shell line) per alert, the finding's JSON on stdin."
)
@click.option("--max-alerts-per-minute", type=click.IntRange(min=1), default=6, show_default=True)
@click.option(
    "--job-poll",
    type=click.FloatRange(min=0.05),
    default=30.0,
    show_default=True,
    metavar="S",
    help="--jobid: seconds between asking Slurm (squeue/scontrol) whether the job still runs.",
)
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    metavar="S",
    help="--jobid: after the job ended, wait this long for its last bytes (shared file systems lag).",
)
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
def follow(paths, fmt, output, fail_on, rule_dirs, disable, redact, redact_hosts, webhook, notify_on, report_url, jobid,
           self_, stall_after, progress, interval, idle, alert_on, exec_cmd, max_alerts_per_minute, job_poll, settle,
           color) -> None:  # fmt: skip
    """Follow a running job's log files (PATHS, or --jobid): alert the first time an early root cause
    shows (once per cause and host), then print the full diagnosis of the finished files with the
    usual exit code. Files are polled (no inotify: it misses writes from other hosts on NFS/Lustre)."""
    from diag.follow import Follower, FollowOptions
    from diag.follow.alerts import alert_line, post_webhook, run_exec

    if self_:
        import os

        from diag.commands.follow_self import self_job_id

        started_by = os.getppid()  # now: the script may end while the rules load
        jobid = self_job_id(jobid)  # exit 2 without $SLURM_JOB_ID: a usage error, before any work
    if stall_after is None:
        stall_after = 30.0 if jobid else 0.0
    if progress:
        import re

        for pattern in progress:
            try:
                re.compile(pattern)
            except re.error as exc:
                fail(f"--progress {pattern!r}: {exc}")
    if not paths and not jobid:
        fail("nothing to follow: give log files, directories or globs, or --jobid")
    if "-" in paths:
        fail("follow polls files: standard input (-) cannot be followed; use slurmdiag - instead")
    rules = rules_or_exit(rule_dirs, disable)
    job_running = find_files = None
    nodes = 0
    if jobid:
        try:
            paths, job_running, find_files, nodes = _follow_job(jobid, paths)
        except SystemExit:
            if self_:
                raise SystemExit(0) from None  # Slurm could not be asked (message printed): never fail the job
            raise

    def on_alert(alert) -> None:
        click.echo(alert_line(alert, jobid), err=True)
        for failure in (run_exec(exec_cmd, alert, jobid) if exec_cmd else None,
                        post_webhook(webhook, alert, jobid) if webhook else None):  # fmt: skip
            if failure:
                click.echo(f"slurmdiag follow: {failure}", err=True)

    stall_s = stall_after * 60 or None
    if not jobid and stall_s:
        idle = max(idle, stall_s + 60)  # a hung job's log stops growing: idle must not end following first
    opts = FollowOptions(interval_s=interval, idle_s=idle if not jobid else float("inf"), min_severity=alert_on,
                         max_alerts_per_minute=max_alerts_per_minute, job=jobid, job_running=job_running,
                         job_poll_s=job_poll, after_end_s=settle, find_files=find_files, stall_s=stall_s,
                         progress=tuple(progress) or FollowOptions.progress, nodes=nodes)  # fmt: skip
    if self_:
        from diag.commands.follow_self import run_self

        run_self(paths, rules, opts, on_alert, output, fmt, redact, redact_hosts, started_by)
        return
    result = Follower(paths, rules, opts, on_alert).run()
    reports = result.reports
    if jobid:
        from diag.api import diagnose_job
        from diag.slurm.query import SlurmError, query_job

        try:
            reports = [diagnose_job(query_job(jobid), rules, job_id=jobid)]
        except SlurmError as exc:
            click.echo(f"slurmdiag follow: {exc}; diagnosing the files alone", err=True)
    out = OutputOptions(job=jobid, redact=redact, redact_hosts=redact_hosts, webhook=webhook, notify_on=notify_on,
                        report_url=report_url)  # fmt: skip
    emit(reports, result.problems, fmt, output, fail_on, color, out)


_LIVE_STATES = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED", "RESIZING", "REQUEUE_HOLD")


def _follow_job(jobid: str, paths: tuple[str, ...]):
    """The files of Slurm job ``jobid`` (plus ``paths``), a callable saying whether it still runs, one
    finding its per-rank files that appeared since, and its node count."""
    from diag.slurm.query import SlurmError, job_files, output_paths, query_job, rank_files

    try:
        jobs = query_job(jobid)
    except SlurmError as exc:
        fail(str(exc))
    existing, missing = job_files(jobs)
    # A pending job's files do not exist yet: follow the paths Slurm will write.
    files = list(dict.fromkeys([*existing, *missing, *(p for j in jobs for p in output_paths(j)), *paths]))
    failures = [0]

    def running() -> bool:
        try:
            state = (query_job(jobid)[0].state.split() or [""])[0]
        except (SlurmError, IndexError):
            failures[0] += 1
            return failures[0] < 3  # a slurmctld hiccup is not the end of the job
        failures[0] = 0
        return state in _LIVE_STATES

    def more_files() -> list[str]:
        # per-rank logs named after the job that appeared in its output directories since
        return [p for j in jobs for p in rank_files(j, output_paths(j))]

    return files, running, more_files, sum(j.num_nodes for j in jobs)
