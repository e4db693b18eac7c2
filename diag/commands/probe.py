"""`slurmdiag probe`: submit a short job that checks every node, then diagnose its output."""

from __future__ import annotations

import click

from diag.commands.common import emit, fail, report_options, rules_or_exit
from diag.formats import OutputOptions


@click.command()
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="How many nodes to probe.")
@click.option("--container-image", metavar="IMG", help="Probe inside this pyxis container (mounts /dev/infiniband).")
@click.option("--partition", metavar="P", help="Slurm partition.")
@click.option("--time", "time_minutes", type=click.IntRange(min=1), default=5, show_default=True,
              help="The job's time limit in minutes.")  # fmt: skip
@click.option("--shared-path", "shared_paths", multiple=True, metavar="PATH",
              help="A directory that should be one shared directory on every node (repeatable).")  # fmt: skip
@click.option("--wait", "wait_s", type=float, default=600, show_default=True,
              help="Seconds to wait for the job to end (queueing included); then exit 2 and leave it be.")  # fmt: skip
@click.option("--output-dir", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Where the job writes its output (must be visible here and from the first node).")  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Print the job script and submit nothing.")
@report_options
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
def probe(nodes, container_image, partition, time_minutes, shared_paths, wait_s, output_dir, dry_run, fmt, output,
          fail_on, rule_dirs, disable, redact, redact_hosts, webhook, notify_on, report_url, color) -> None:  # fmt: skip
    """Submit a short job that checks every node (verbs devices, NICs, ulimit -l, /dev/shm, shared
    paths, GPUs, a small NCCL all-reduce), wait for it, and diagnose its output. What a node could
    not check is listed as 'not checked', never as a pass. Exit codes as for `slurmdiag job`; 2 also
    when the job did not end within --wait."""
    import os

    from diag.api import diagnose_job
    from diag.probe import ProbeError, ProbeOptions, add_to_report, job_script, submit, wait_for
    from diag.slurm.query import SlurmError, job_files, query_job

    opts = ProbeOptions(nodes=nodes, container_image=container_image, partition=partition, time_minutes=time_minutes,
                        shared_paths=shared_paths, output_dir=os.path.abspath(output_dir))  # fmt: skip
    script = job_script(opts)
    if dry_run:
        click.echo(script, nl=False)
        return
    rules = rules_or_exit(rule_dirs, disable)
    try:
        job_id = submit(script)
        click.echo(f"slurmdiag: submitted probe job {job_id}; waiting up to {wait_s:g} s", err=True)
        wait_for(job_id, wait_s)
        jobs = query_job(job_id)
    except (ProbeError, SlurmError) as exc:
        fail(str(exc))
    report = diagnose_job(jobs, rules, job_id=job_id)
    add_to_report(report, job_files(jobs)[0], rules, opts)
    out = OutputOptions(redact=redact, redact_hosts=redact_hosts, webhook=webhook, notify_on=notify_on,
                        report_url=report_url)  # fmt: skip
    emit([report], report.problems, fmt, output, fail_on, color, out, need_input=False)
