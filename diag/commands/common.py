"""What the commands share: exit codes, the report options, loading rules, rendering and exiting.

Every command is a small function over the library (diag.api and its neighbours); this module
and its siblings only turn options into calls and results into output and an exit code.
"""

from __future__ import annotations

import os
import sys
import time

import click

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
)  # fmt: skip

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
STARTED = time.monotonic()  # scan duration for --format prometheus: rules, reading and diagnosis
SEVERITIES = ("info", "warning", "error", "critical")
FAIL_ON = (*SEVERITIES, "never")


def fail(message: str) -> None:
    click.echo(f"slurmdiag: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def rules_or_exit(rule_dirs: tuple[str, ...], disabled: tuple[str, ...], analyzers: bool = True):
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
        fail(str(exc))


def report_options(fn):
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


def output_format(fmt: str | None, output: str | None) -> str:
    """--format, else the one -o's extension names, else text."""
    if fmt:
        return fmt
    if output:
        return FORMAT_BY_EXTENSION.get(os.path.splitext(output)[1].lower(), "text")
    return "text"


def emit(reports, problems, fmt, output, fail_on, color, opts: OutputOptions, need_input=True) -> None:
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
        fail("nothing could be read")
    if need_input and not any(stats.bytes_read for report in reports for stats in report.inputs):
        # An empty file or /dev/null on stdin (cron, CI): there is nothing to call healthy.
        names = [stats.path for report in reports for stats in report.inputs]
        shown = ", ".join("standard input" if n == "-" else n for n in names[:3]) + (" …" if len(names) > 3 else "")
        fail(f"nothing to diagnose: {shown or 'the input'} {'is' if len(names) == 1 else 'are'} empty (0 bytes)")
    if opts.report_url is None and output and fmt not in CHAT_FORMATS:
        opts.report_url = os.path.abspath(output)
    opts.color = (output is None and sys.stdout.isatty()) if color is None else color
    opts.duration_s = time.monotonic() - STARTED
    try:
        reports, redacted = prepare(reports, fmt, opts)
    except FormatError as exc:
        fail(str(exc))
    text = render(reports, fmt, opts, redacted)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        write_stdout(text)
    failure = deliver(reports, fmt, opts, redacted)
    if failure:
        fail(failure)
    if opts.webhook and not any(worth_notifying(r, opts.notify_on) for r in reports):
        click.echo(f"slurmdiag: not posted: no finding at or above {opts.notify_on or NOTIFY_DEFAULT}", err=True)
    if fail_on == "never":
        sys.exit(EXIT_CLEAN)
    threshold = severity_rank(fail_on)
    worst = [severity_rank(f.severity) for r in reports for f in r.findings]
    sys.exit(EXIT_FINDINGS if worst and max(worst) >= threshold else EXIT_CLEAN)


def write_stdout(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # A reader like `head` went away: not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def builtin_dir():
    from diag.catalog.load import builtin_rules_dir

    return builtin_rules_dir()
