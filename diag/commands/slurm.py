"""`slurmdiag job` and `slurmdiag epilog`: a job by its Slurm id."""

from __future__ import annotations

import sys

import click

from diag.commands.common import (
    FAIL_ON,
    emit,
    fail,
    report_options,
    rules_or_exit,
)  # fmt: skip
from diag.formats import (
    OutputOptions,
)  # fmt: skip


@click.command()
@click.argument("job_id", metavar="JOBID")
@report_options
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
        fail(str(exc))
    rules = rules_or_exit(rule_dirs, disable)
    max_bytes = None
    if max_seconds:
        max_bytes = budget_bytes(job_files(jobs)[0], max_seconds * 0.8, SCAN_BYTES_PER_SECOND)
    report = diagnose_job(jobs, rules, job_id=job_id, max_bytes_per_file=max_bytes)
    opts = OutputOptions(redact=redact, redact_hosts=redact_hosts, webhook=webhook, notify_on=notify_on,
                         report_url=report_url)  # fmt: skip
    emit([report], report.problems, fmt, output, fail_on, color, opts, need_input=False)


@click.command()
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
