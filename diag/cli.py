"""Command line: a thin layer over :mod:`diag.api`.

Exit codes: 0 no finding at or above ``--fail-on``; 1 at least one; 2 usage, rule or input error
(nothing could be read, an empty input); 130 interrupted (Ctrl-C). Reports go to stdout (or
``-o``); messages go to stderr.
"""

from __future__ import annotations

import os
import sys
import time

import click

from diag import __version__
from diag.formats import (
    CHAT_FORMATS,
    FORMATS,
    NOTIFY_DEFAULT,
    FormatError,
    OutputOptions,
    deliver,
    prepare,
    render,
    worth_notifying,
)
from diag.formats.safe import safe_text
from diag.scan.engines import ENGINE_NAMES

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130  # 130: 128 + SIGINT, the shell convention
EXIT_CODES = (
    ("0", "no finding at or above --fail-on (default: error)"),
    ("1", "at least one finding at or above --fail-on"),
    ("2", "usage, rule or input error: nothing could be read, an empty input, a webhook that failed"),
    ("130", "interrupted (Ctrl-C)"),
)
# -o's extension names the format when --format is not given (ruff, semgrep and pandoc do the same).
FORMAT_BY_EXTENSION = {
    ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
    ".sarif": "sarif", ".xml": "junit", ".prom": "prometheus", ".txt": "text",
}  # fmt: skip
_STARTED = time.monotonic()  # scan duration for --format prometheus: rules, reading and diagnosis
SEVERITIES = ("info", "warning", "error", "critical")
FAIL_ON = (*SEVERITIES, "never")


class DefaultGroup(click.Group):
    """``slurmdiag PATH...`` means ``slurmdiag diagnose PATH...``; its --help shows the default
    command's options and the exit codes too (the first thing people type)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V")):
            args = ["diagnose", *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        default = self.commands["diagnose"]
        with click.Context(default, info_name="diagnose", parent=ctx) as sub:
            rows = [
                r
                for p in default.get_params(sub)
                if isinstance(p, click.Option) and p.name != "help" and (r := p.get_help_record(sub)) is not None
            ]
        with formatter.section("Options of the default command (slurmdiag [diagnose] PATHS...)"):
            formatter.write_dl(rows)
        with formatter.section("Exit codes"):
            formatter.write_dl(list(EXIT_CODES))


def _fail(message: str) -> None:
    click.echo(f"slurmdiag: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _load_rules(rule_dirs: tuple[str, ...], disabled: tuple[str, ...], analyzers: bool = True):
    """The rules, or a one-line exit 2. ``analyzers=False``: the catalogue alone (rules, explain),
    without importing the scanner and the analyzers."""
    from diag.catalog.model import RuleError

    if analyzers:
        from diag.api import load_rules
    else:
        from diag.catalog.load import load_rules

    try:
        return load_rules(rule_dirs, disabled)
    except RuleError as exc:
        _fail(str(exc))


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="slurmdiag", message="%(prog)s %(version)s")
def cli() -> None:
    """Name the root cause of a failed or slow multi-node GPU job from its logs.

    \b
    slurmdiag /pfs/logs/job-123.err            diagnose (files, dirs, globs, .gz, - for stdin)
    slurmdiag rules                            list the rules
    slurmdiag explain ib-devices-not-mounted   one rule in full
    """


def _report_options(fn):
    """The options every diagnosing command shares (diagnose, job)."""
    options = (
        click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None,
                     help="Report format (default: from the -o extension: .json .md .html .sarif .xml (junit) "
                          ".prom .txt; else text)."),
        click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report here."),
        click.option("--fail-on", type=click.Choice(FAIL_ON), default="error", show_default=True,
                     help="Exit 1 when a finding has this severity or worse."),
        click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False),
                     help="Extra rule directory (repeatable; also $SLURMDIAG_RULES)."),
        click.option("--disable", multiple=True, metavar="ID", help="Turn a rule off (repeatable)."),
        click.option("--redact/--no-redact", default=None,
                     help="Mask tokens, keys and e-mail addresses in log text (default: on for chat formats and "
                          "--webhook, off otherwise)."),
        click.option("--redact-hosts", is_flag=True, help="Also mask host names and IP addresses (implies --redact)."),
        click.option("--webhook", metavar="URL", envvar="SLURMDIAG_WEBHOOK",
                     help="POST the alert to this Slack/Teams/Mattermost webhook (a secret: prefer "
                          "$SLURMDIAG_WEBHOOK; never printed)."),
        click.option("--notify-on", "--min-severity", "notify_on", type=click.Choice(SEVERITIES), default=None,
                     help="Post to the webhook only when a finding has this severity or worse (default: error; "
                          "a healthy job is never posted)."),
        click.option("--report-url", metavar="URL|PATH",
                     help="Where the full report is, named in alerts (default: the -o path of a non-chat format)."),
    )  # fmt: skip
    for option in reversed(options):
        fn = option(fn)
    return fn


@cli.command()
@click.argument("paths", nargs=-1)
@_report_options
@click.option(
    "--job", metavar="ID", help="Job id shown in reports and alerts (default: from file names like slurm-12345.out)."
)
@click.option("--per-file", is_flag=True, help="Diagnose each file on its own instead of as one job.")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), default="auto", show_default=True,
              help="What locates candidate lines: the fastest installed (auto), hyperscan, re2 or python.")  # fmt: skip
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, show_default=True,
              help="Worker processes for large inputs; 0: the usable cores, at most 8 (or $SLURMDIAG_JOBS).")  # fmt: skip
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
@click.option("--expect-busbw", type=click.FloatRange(min=0, min_open=True), metavar="GB/S",
              help="nccl-tests: the busbw (GB/s) this fabric should reach at the largest size.")  # fmt: skip
def diagnose(paths, fmt, output, fail_on, rule_dirs, disable, redact, redact_hosts, webhook, notify_on, report_url, job,
             per_file, engine, jobs, color, expect_busbw) -> None:  # fmt: skip
    """Diagnose the job whose logs are at PATHS."""
    from diag.api import diagnose_paths
    from diag.scan.engines import EngineUnavailable

    if not paths:
        if sys.stdin.isatty():
            _fail("no input: give log files, directories or globs, or - for standard input (see --help)")
        paths = ("-",)
    rules = _load_rules(rule_dirs, disable)
    try:
        reports, problems = diagnose_paths(
            paths, rules, per_file=per_file, job=job, engine=engine, expect_busbw=expect_busbw, jobs=jobs or None
        )
    except EngineUnavailable as exc:
        _fail(f"engine {engine}: {exc}")
    if len(reports) > 1 and not per_file:
        from diag.formats.safe import safe_text

        names = ", ".join(safe_text(str(r.job or "files without a job id")) for r in reports)
        click.echo(f"slurmdiag: the file names carry {len(reports)} jobs ({names}): one report each "
                   "(--job ID reads them as one job)", err=True)  # fmt: skip
    opts = OutputOptions(job=job, redact=redact, redact_hosts=redact_hosts, webhook=webhook, per_file=per_file,
                         notify_on=notify_on, report_url=report_url)  # fmt: skip
    _emit(reports, problems, fmt, output, fail_on, color, opts)


def output_format(fmt: str | None, output: str | None) -> str:
    """--format, else the one -o's extension names, else text."""
    if fmt:
        return fmt
    if output:
        return FORMAT_BY_EXTENSION.get(os.path.splitext(output)[1].lower(), "text")
    return "text"


def _emit(reports, problems, fmt, output, fail_on, color, opts: OutputOptions, need_input=True) -> None:
    """Report input problems, render, write, and exit with the --fail-on status."""
    from diag.catalog.causes import severity_rank

    fmt = output_format(fmt, output)
    for problem in problems:
        click.echo(problem.message(), err=True)
    read_any = False
    for report in reports:
        for stats in report.inputs:
            if stats.error:
                click.echo(f"slurmdiag: {stats.path}: {stats.error}", err=True)
            if stats.bytes_read or not stats.error:
                read_any = True
    if need_input and not read_any:
        _fail("nothing could be read")
    if need_input and not any(stats.bytes_read for report in reports for stats in report.inputs):
        # An empty file or /dev/null on stdin (cron, CI): there is nothing to call healthy.
        names = [stats.path for report in reports for stats in report.inputs]
        shown = ", ".join("standard input" if n == "-" else n for n in names[:3]) + (" …" if len(names) > 3 else "")
        _fail(f"nothing to diagnose: {shown or 'the input'} {'is' if len(names) == 1 else 'are'} empty (0 bytes)")
    if opts.report_url is None and output and fmt not in CHAT_FORMATS:
        opts.report_url = os.path.abspath(output)
    opts.color = (output is None and sys.stdout.isatty()) if color is None else color
    opts.duration_s = time.monotonic() - _STARTED
    try:
        reports, redacted = prepare(reports, fmt, opts)
    except FormatError as exc:
        _fail(str(exc))
    text = render(reports, fmt, opts, redacted)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        _write_stdout(text)
    failure = deliver(reports, fmt, opts, redacted)
    if failure:
        _fail(failure)
    if opts.webhook and not any(worth_notifying(r, opts.notify_on) for r in reports):
        click.echo(f"slurmdiag: not posted: no finding at or above {opts.notify_on or NOTIFY_DEFAULT}", err=True)
    if fail_on == "never":
        sys.exit(EXIT_CLEAN)
    threshold = severity_rank(fail_on)
    worst = [severity_rank(f.severity) for r in reports for f in r.findings]
    sys.exit(EXIT_FINDINGS if worst and max(worst) >= threshold else EXIT_CLEAN)


def _write_stdout(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # A reader like `head` went away: not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


@cli.command()
@click.argument("job_id", metavar="JOBID")
@_report_options
@click.option("--max-seconds", type=float, default=None, help="Time budget: big files are read head and tail.")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
def job(job_id, fmt, output, fail_on, rule_dirs, disable, redact, redact_hosts, webhook, notify_on, report_url,
        max_seconds, color) -> None:  # fmt: skip
    """Diagnose Slurm job JOBID (123, array task 123_4, het component 123+1): ask Slurm for its
    state and output files, read them as one job, and weigh Slurm's verdict with the logs."""
    from diag.api import diagnose_job
    from diag.input.sources import SCAN_BYTES_PER_SECOND, budget_bytes
    from diag.slurm.query import SlurmError, job_files, query_job

    try:
        jobs = query_job(job_id)
    except SlurmError as exc:
        _fail(str(exc))
    rules = _load_rules(rule_dirs, disable)
    max_bytes = None
    if max_seconds:
        max_bytes = budget_bytes(job_files(jobs)[0], max_seconds * 0.8, SCAN_BYTES_PER_SECOND)
    report = diagnose_job(jobs, rules, job_id=job_id, max_bytes_per_file=max_bytes)
    opts = OutputOptions(redact=redact, redact_hosts=redact_hosts, webhook=webhook, notify_on=notify_on,
                         report_url=report_url)  # fmt: skip
    _emit([report], report.problems, fmt, output, fail_on, color, opts, need_input=False)


@cli.command()
@click.argument("job_id", metavar="[JOBID]", required=False)
@click.option("--output-dir", type=click.Path(file_okay=False), help="Where to write (default: by the .out).")
@click.option("--max-seconds", type=float, default=60.0, show_default=True, help="Time budget.")
@click.option("--log-file", type=click.Path(dir_okay=False), envvar="SLURMDIAG_EPILOG_LOG", help="Also log here.")
@click.option("--format", "formats", type=click.Choice(("markdown", "json")), multiple=True, help="Default: both.")
@click.option("--all-nodes", is_flag=True, help="Run on every node, not just the first.")
@click.option(
    "--wait-final",
    is_flag=True,
    help="Return at once; a detached process waits (at most half of --max-seconds) for the final JobState.",
)
@click.option("--keep-privileges", is_flag=True, help="As root, do not become the job's user.")
@click.option(
    "--only-failed", is_flag=True, help="Write and post nothing for a job with no finding at or above --fail-on."
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON[:-1]),
    default="error",
    show_default=True,
    help="With --only-failed: the least severity worth a report.",
)
@click.option(
    "--webhook",
    metavar="URL",
    envvar="SLURMDIAG_WEBHOOK",
    help="Also POST the alert to this Slack/Teams/Mattermost webhook (prefer $SLURMDIAG_WEBHOOK).",
)
@click.option(
    "--webhook-format",
    type=click.Choice(("slack", "teams", "mattermost")),
    help="The webhook's platform (default: from its URL).",
)
@click.option(
    "--redact/--no-redact",
    default=None,
    help="Mask tokens, keys and e-mail addresses (default: in the webhook alert, not in the files).",
)
@click.option(
    "--fleet-dir",
    type=click.Path(file_okay=False),
    envvar="SLURMDIAG_FLEET_DIR",
    help="Also write the job's fleet record (every job, clean ones too) under DIR/spool/ for `fleet compact`.",
)
@click.option(
    "--cluster", help="The fleet record's cluster name (default: $SLURM_CLUSTER_NAME, slurm.conf ClusterName)."
)
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID")
def epilog(job_id, output_dir, max_seconds, log_file, formats, all_nodes, wait_final, keep_privileges, only_failed,
           fail_on, webhook, webhook_format, redact, fleet_dir, cluster, rule_dirs, disable) -> None:  # fmt: skip
    """Diagnose the job that just ended (SLURM_JOB_ID, or JOBID as strigger passes it) and write
    slurmdiag-JOBID.md/.json. Always exits 0: an epilog must never fail because of slurmdiag."""
    from diag.epilog import EpilogOptions, run_epilog

    opts = EpilogOptions(job_id=job_id, output_dir=output_dir, max_seconds=max_seconds, log_file=log_file,
                         formats=formats or ("markdown", "json"), all_nodes=all_nodes, wait_final=wait_final,
                         drop_privileges=not keep_privileges, rule_dirs=rule_dirs, disabled=disable,
                         only_failed=only_failed, fail_on=fail_on, webhook=webhook, webhook_format=webhook_format,
                         redact=redact, fleet_dir=fleet_dir, cluster=cluster)  # fmt: skip
    sys.exit(run_epilog(opts))


@cli.command(context_settings={"ignore_unknown_options": True})
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
        _fail("no script: slurmdiag lint SCRIPT [-- SBATCH-ARGS...]")
    rules = _load_rules(rule_dirs, disable, analyzers=False)
    problems = check_names(rules.rules)
    if problems:
        _fail(problems[0])
    try:
        site = load_profile(profile)
        reports = [lint_file(script, rules, sbatch_args, site) for script in scripts]
    except (ProfileError, LintError) as exc:
        _fail(str(exc))
    _emit(reports, [], fmt, output, fail_on, color, OutputOptions(per_file=len(reports) > 1), need_input=False)


@cli.command()
@click.argument("paths", nargs=-1)
@_report_options
@click.option("--jobid", metavar="JOBID", help="Follow this Slurm job: its files from Slurm, until it ends.")
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
           interval, idle, alert_on, exec_cmd, max_alerts_per_minute, job_poll, settle, color) -> None:  # fmt: skip
    """Follow a running job's log files (PATHS, or --jobid): alert the first time an early root cause
    shows (once per cause and host), then print the full diagnosis of the finished files with the
    usual exit code. Files are polled (no inotify: it misses writes from other hosts on NFS/Lustre)."""
    from diag.follow import Follower, FollowOptions
    from diag.follow.alerts import alert_line, post_webhook, run_exec

    if not paths and not jobid:
        _fail("nothing to follow: give log files, directories or globs, or --jobid")
    if "-" in paths:
        _fail("follow polls files: standard input (-) cannot be followed; use slurmdiag - instead")
    rules = _load_rules(rule_dirs, disable)
    job_running = find_files = None
    if jobid:
        paths, job_running, find_files = _follow_job(jobid, paths)

    def on_alert(alert) -> None:
        click.echo(alert_line(alert, jobid), err=True)
        for failure in (run_exec(exec_cmd, alert, jobid) if exec_cmd else None,
                        post_webhook(webhook, alert, jobid) if webhook else None):  # fmt: skip
            if failure:
                click.echo(f"slurmdiag follow: {failure}", err=True)

    opts = FollowOptions(interval_s=interval, idle_s=idle if not jobid else float("inf"), min_severity=alert_on,
                         max_alerts_per_minute=max_alerts_per_minute, job=jobid, job_running=job_running,
                         job_poll_s=job_poll, after_end_s=settle, find_files=find_files)  # fmt: skip
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
    _emit(reports, result.problems, fmt, output, fail_on, color, out)


_LIVE_STATES = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED", "RESIZING", "REQUEUE_HOLD")


def _follow_job(jobid: str, paths: tuple[str, ...]):
    """The files of Slurm job ``jobid`` (plus ``paths``), a callable saying whether it still runs and
    one finding its per-rank files that appeared since."""
    from diag.slurm.query import SlurmError, job_files, output_paths, query_job, rank_files

    try:
        jobs = query_job(jobid)
    except SlurmError as exc:
        _fail(str(exc))
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

    return files, running, more_files


@cli.command("rules")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True)
@click.option("--export-patterns", is_flag=True, help="Print every signature regex, one per line (for grep/rg -f).")
def list_rules(rule_dirs, fmt, export_patterns) -> None:
    """List the rules: id, severity, role, title (json: each rule's fields, for scripts)."""
    from diag.catalog.docs import rules_json, rules_table

    rules = _load_rules(rule_dirs, (), analyzers=False)
    if export_patterns:
        from diag.scan.facts import FACT_SIGNATURES

        sigs = [s for r in rules.rules for s in r.signatures] + list(FACT_SIGNATURES)
        _write_stdout("".join(f"{p}\n" for p in dict.fromkeys(s.pattern for s in sigs)))
        return
    _write_stdout(rules_json(rules) if fmt == "json" else rules_table(rules, fmt))


def _complete_rule_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of rule ids (built-in, $SLURMDIAG_RULES and any --rules given so far)."""
    from click.shell_completion import CompletionItem

    from diag.catalog.load import load_rules

    try:
        rules = load_rules(ctx.params.get("rule_dirs") or ())
    except Exception:  # noqa: BLE001 - a completion must never print a traceback into the shell
        return []
    low = incomplete.lower()
    return [CompletionItem(r.id, help=r.title) for r in sorted(rules.rules, key=lambda r: r.id) if r.id.startswith(low)]


@cli.command()
@click.argument("rule_id", shell_complete=_complete_rule_id)
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
def explain(rule_id, rule_dirs) -> None:
    """Print one rule in full: what it means, what it matches, how to fix it. Ids are
    case-insensitive; a near miss gets a did-you-mean."""
    import difflib

    from diag.catalog.docs import explain_rule

    rules = _load_rules(rule_dirs, (), analyzers=False).by_id()
    wanted = rule_id.strip().lower()
    if wanted not in rules:
        close = difflib.get_close_matches(wanted, list(rules), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        _fail(f"no rule has the id {rule_id!r}{hint} (see 'slurmdiag rules')")
    _write_stdout(explain_rule(rules[wanted]))


@cli.command("eval")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID")
@click.option(
    "--split",
    type=click.Choice(("all", "dev", "holdout", "corpus")),
    default="all",
    show_default=True,
    help="Only the cases of this split (corpus/wild cases are split by a hash of their source URL).",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="PERCENT",
              help="Exit 1 when top-1 (failing jobs) or healthy-clean falls below this.")  # fmt: skip
def evaluate(dirs, rule_dirs, disable, split, fmt, fail_under) -> None:
    """Diagnose every labelled case under DIRS (folders with expected.yaml or case.yaml) and print
    top-1 / top-3 / healthy-clean per split, a per-cause table and the cases that miss."""
    import json

    from diag.harness import CaseError, evaluate_cases, find_cases, render_summary, summarize

    rules = _load_rules(rule_dirs, disable)
    try:
        cases = [c for c in find_cases(dirs) if split == "all" or c.split == split]
    except CaseError as exc:
        _fail(str(exc))
    if not cases:
        _fail(f"no labelled case (a folder with expected.yaml or case.yaml) under {', '.join(dirs)}")
    summary = summarize(evaluate_cases(cases, rules))
    _write_stdout(json.dumps(summary, indent=2) + "\n" if fmt == "json" else render_summary(summary))
    if fail_under is not None:
        total = summary["splits"]["all"]
        rates = [r for r in (total["top1"], total["healthy_clean"]) if r is not None]
        sys.exit(EXIT_FINDINGS if any(100 * r < fail_under for r in rates) else EXIT_CLEAN)


@cli.command("test-rules")
@click.argument("cases", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False),
              help="The rule directory to test (repeatable); its rules' examples are checked.")  # fmt: skip
def test_rules(cases, rule_dirs) -> None:
    """Check rules the way this project checks its own: every rule's examples through the real
    scanner (the built-in rules, or only those in --rules directories), then every labelled case
    folder under CASES. Exit 1 on the first kind of failure, with one line per failure."""
    from diag.catalog.load import load_rules as load_catalog
    from diag.harness import CaseError, check_case, check_examples, find_cases

    rules = _load_rules(rule_dirs, ())
    only = None
    if rule_dirs:
        try:
            only = {r.id for r in load_catalog(rule_dirs).rules if not r.path.startswith(str(_builtin_dir()))}
        except Exception as exc:  # noqa: BLE001 - already reported by _load_rules when it matters
            _fail(str(exc))
    failures = [f.message() for f in check_examples(rules, only)]
    checked = sum(len(r.examples_match) + len(r.examples_no_match) for r in rules.rules if only is None or r.id in only)
    try:
        results = [check_case(c, rules) for c in find_cases(cases)]
    except CaseError as exc:
        _fail(str(exc))
    failures += [f"{r.case.path}: {p}" for r in results for p in r.problems]
    for line in failures:
        click.echo(line)
    click.echo(f"{checked} example lines, {len(results)} cases: {len(failures)} failure(s)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_CLEAN)


@cli.group()
def fleet() -> None:
    """Every finished job of a cluster, diagnosed and aggregated (see README, Fleet).

    \b
    slurmdiag epilog --fleet-dir DIR                  one record per job, as it ends
    slurmdiag fleet scan ARCHIVE... --out DIR         jobs from an archive of logs (sbatch --array)
    slurmdiag fleet scan --since now-1days --out DIR  jobs that ended in a window (one sacct per task)
    slurmdiag fleet compact DIR                       fold records into the store (the only writer)
    slurmdiag fleet report DIR --since 7d             bad nodes, drain suggestions, causes, unexplained
    """


@fleet.command("scan")
@click.argument("archives", nargs=-1, type=click.Path(exists=True))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="The fleet directory.")
@click.option("--since", help="Without ARCHIVE: the jobs that ended from this time on, by one bulk sacct query.")
@click.option("--until", default="now", show_default=True, help="With --since: the window's end (sacct -E).")
@click.option(
    "--shard",
    default=None,
    metavar="i/N",
    help="This task's share of the jobs (default: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT, else 0/1).",
)
@click.option("--cluster", help="Cluster name in the records (default: $SLURM_CLUSTER_NAME, slurm.conf ClusterName).")
@click.option(
    "--max-seconds",
    type=float,
    default=30.0,
    show_default=True,
    help="Per job: past this budget only the head and tail of big files are read; a job still running is dropped.",
)
@click.option("--rescan", is_flag=True, help="Scan jobs already scanned with the same rules too.")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID")
def fleet_scan(archives, out_dir, since, until, shard, cluster, max_seconds, rescan, rule_dirs, disable) -> None:
    """Diagnose finished jobs; write this task's records as one shard file under OUT/shards.

    \b
    ARCHIVE...: an archive of job logs: one job per folder, or per job id in the file names where
      a folder holds several; Slurm's record is read from a saved sacct.json, sacct.txt (sacct -P)
      or scontrol.txt beside the logs or above them.
    --since T0 [--until T1]: the jobs that ended in the window, from one sacct query per task."""
    from diag.fleet.archive import archive_units, parse_shard, scan_units
    from diag.fleet.record import default_cluster
    from diag.fleet.store import known_keys

    if bool(archives) == bool(since):
        _fail("give either ARCHIVE... or --since (with --until), not both and not neither")
    shard = shard or _array_shard()
    try:
        part = parse_shard(shard)
    except ValueError as exc:
        _fail(str(exc))
    rules = _load_rules(rule_dirs, disable)
    if since:
        from diag.fleet.accounting import sacct_window, window_units
        from diag.slurm.query import SlurmError

        try:
            units = window_units(sacct_window(since, until), rules)
        except SlurmError as exc:
            _fail(str(exc))
    else:
        units = archive_units(list(archives), rules)
    known = set() if rescan else known_keys(out_dir)
    stats = scan_units(units, out_dir, rules, cluster=cluster or default_cluster(), shard=part,
                       max_seconds=max_seconds, known=known, log=lambda m: click.echo(f"slurmdiag: {m}", err=True))  # fmt: skip
    for line in stats.failed:
        click.echo(f"slurmdiag: {safe_text(line)}", err=True)
    if stats.shard_path:
        click.echo(stats.shard_path)


def _array_shard() -> str:
    task, count = os.environ.get("SLURM_ARRAY_TASK_ID", ""), os.environ.get("SLURM_ARRAY_TASK_COUNT", "")
    low = os.environ.get("SLURM_ARRAY_TASK_MIN", "0")
    if task.isdigit() and count.isdigit() and low.isdigit():
        return f"{int(task) - int(low)}/{count}"
    return "0/1"


@fleet.command("compact")
@click.argument("fleet_dir", type=click.Path(file_okay=False, exists=True))
def fleet_compact(fleet_dir) -> None:
    """Fold the spool and shard files into the Parquet store (newest wins per cluster, job and rules).

    The only writer: run it once at a time (a dependent job after the scan array, or nightly).
    Lines that are not records are reported as file:line and skipped; their file moves to rejected/."""
    from diag.fleet.store import FleetError, compact

    try:
        result = compact(fleet_dir)
    except FleetError as exc:
        _fail(str(exc))
    for line in result.rejected:
        click.echo(f"slurmdiag: skipped {safe_text(line)}", err=True)
    click.echo(f"{result.records} records from {result.files} files into {len(result.months)} month(s); "
               f"{result.rows} jobs in the store; {len(result.rejected)} line(s) rejected")  # fmt: skip


@fleet.command("report")
@click.argument("fleet_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--since", default="7d", show_default=True, help="Window length: 30m, 12h, 7d, 4w.")
@click.option("--until", help="Window end, ISO-8601 UTC (default: now).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "markdown", "json", "prometheus")),
    default="text",
    show_default=True,
    help="prometheus: a textfile for node_exporter (bad nodes, causes, unexplained share).",
)
@click.option("--min-jobs", type=int, default=10, show_default=True, help="A node is judged from this many jobs on.")
@click.option("--min-users", type=int, default=2, show_default=True, help="Users who must have been hit on a node.")
def fleet_report(fleet_dir, since, until, fmt, min_jobs, min_users) -> None:
    """Bad nodes against the fleet baseline (with drain lines to paste), causes over time, unexplained share."""
    import datetime as dt

    from diag.fleet.store import FleetError
    from diag.fleet.summary import Thresholds, parse_duration, render, summarize

    try:
        parse_duration(since)
        end = dt.datetime.fromisoformat(until.replace("Z", "+00:00")) if until else None
    except ValueError as exc:
        _fail(str(exc))
    if end is not None and end.tzinfo is None:
        end = end.replace(tzinfo=dt.timezone.utc)
    try:
        summary = summarize(fleet_dir, since, end, Thresholds(min_jobs=min_jobs, min_users=min_users))
    except FleetError as exc:
        _fail(str(exc))
    _write_stdout(render(summary, fmt))


def _builtin_dir():
    from diag.catalog.load import builtin_rules_dir

    return builtin_rules_dir()


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (KeyboardInterrupt, click.exceptions.Abort)):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def main() -> None:
    try:
        # The name fixed: usage lines and the completion variable (_SLURMDIAG_COMPLETE) are the same
        # under `python -m diag` as under the installed command.
        cli.main(prog_name="slurmdiag", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("slurmdiag: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("slurmdiag: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - never show a traceback to the user
        if _caused_by_interrupt(exc):
            # Ctrl-C while a worker pool starts or stops: its cleanup raises in place of the interrupt.
            click.echo("slurmdiag: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        if os.environ.get("SLURMDIAG_DEBUG"):
            raise
        click.echo(f"slurmdiag: internal error: {type(exc).__name__}: {exc} (set SLURMDIAG_DEBUG=1 for details)",
                   err=True)  # fmt: skip
        sys.exit(EXIT_ERROR)
