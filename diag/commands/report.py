"""`slurmdiag [diagnose] PATH...`: the default command."""

from __future__ import annotations

import sys

import click

from diag.commands.common import (
    emit,
    fail,
    report_options,
    rules_or_exit,
)  # fmt: skip
from diag.formats import (
    OutputOptions,
)  # fmt: skip
from diag.scan.engines import ENGINE_NAMES


@click.command()
@click.argument("paths", nargs=-1)
@report_options
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
            fail("no input: give log files, directories or globs, or - for standard input (see --help)")
        paths = ("-",)
    rules = rules_or_exit(rule_dirs, disable)
    try:
        reports, problems = diagnose_paths(
            paths, rules, per_file=per_file, job=job, engine=engine, expect_busbw=expect_busbw, jobs=jobs or None
        )
    except EngineUnavailable as exc:
        fail(f"engine {engine}: {exc}")
    if len(reports) > 1 and not per_file:
        from diag.formats.safe import safe_text

        names = ", ".join(safe_text(str(r.job or "files without a job id")) for r in reports)
        click.echo(f"slurmdiag: the file names carry {len(reports)} jobs ({names}): one report each "
                   "(--job ID reads them as one job)", err=True)  # fmt: skip
    opts = OutputOptions(job=job, redact=redact, redact_hosts=redact_hosts, webhook=webhook, per_file=per_file,
                         notify_on=notify_on, report_url=report_url)  # fmt: skip
    emit(reports, problems, fmt, output, fail_on, color, opts)
