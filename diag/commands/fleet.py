"""`slurmdiag fleet scan|compact|report`: every job of a cluster."""

from __future__ import annotations

import os

import click

from diag.commands.common import (
    fail,
    rules_or_exit,
    write_stdout,
)  # fmt: skip
from diag.formats.safe import safe_text


@click.group()
def fleet() -> None:
    """Every finished job of a cluster, diagnosed and aggregated (see README, Fleet).

    \b
    slurmdiag epilog --fleet-dir DIR                  one record per job, as it ends
    slurmdiag fleet scan ARCHIVE... --out DIR         jobs from an archive of logs (sbatch --array)
    slurmdiag fleet scan --since now-1days --out DIR  jobs that ended in a window (one sacct per task)
    slurmdiag fleet compact DIR                       fold records into the store (the only writer)
    slurmdiag fleet report DIR --since 7d             bad nodes, drain suggestions, causes, unexplained
    slurmdiag fleet report DIR --format html --output fleet.html   the same as a page with charts
    slurmdiag fleet templates DIR --since 7d          error lines no rule knows, mined into templates
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
@click.option(
    "--sacct",
    "sacct_form",
    type=click.Choice(("auto", "json", "parsable")),
    default="auto",
    show_default=True,
    help="With --since: sacct --json (auto: where it works, else -P) or -P only (parsable: ~20x less to "
    "transfer and parse per job than 22.05's JSON, for windows of tens of thousands of jobs).",
)
@click.option("--rescan", is_flag=True, help="Scan jobs already scanned with the same rules too.")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID")
def fleet_scan(archives, out_dir, since, until, shard, cluster, max_seconds, sacct_form, rescan, rule_dirs,
               disable) -> None:  # fmt: skip
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
        fail("give either ARCHIVE... or --since (with --until), not both and not neither")
    shard = shard or _array_shard()
    try:
        part = parse_shard(shard)
    except ValueError as exc:
        fail(str(exc))
    rules = rules_or_exit(rule_dirs, disable)
    if since:
        from diag.fleet.accounting import sacct_window, window_units
        from diag.slurm.query import SlurmError

        try:
            jobs = sacct_window(since, until, form=sacct_form)
        except SlurmError as exc:
            fail(str(exc))
        source = jobs[0].source if jobs else "sacct"
        click.echo(f"slurmdiag: {len(jobs)} finished job(s) in the window ({source})", err=True)
        units = window_units(jobs, rules)
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
        fail(str(exc))
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
    type=click.Choice(("text", "markdown", "json", "prometheus", "html")),
    default="text",
    show_default=True,
    help="prometheus: a textfile for node_exporter (bad nodes, causes, unexplained share); "
    "html: one self-contained page with charts (no script, works offline).",
)
@click.option(
    "--output",
    "output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the report to FILE (create-and-rename: a web server or reader never sees half a page).",
)
@click.option("--min-jobs", type=int, default=10, show_default=True, help="A node is judged from this many jobs on.")
@click.option("--min-users", type=int, default=2, show_default=True, help="Users who must have been hit on a node.")
def fleet_report(fleet_dir, since, until, fmt, output, min_jobs, min_users) -> None:
    """Bad nodes against the fleet baseline (with drain lines to paste), causes over time, unexplained share."""
    import datetime as dt

    from diag.fleet.store import FleetError
    from diag.fleet.summary import Thresholds, parse_duration, render, summarize

    try:
        parse_duration(since)
        end = dt.datetime.fromisoformat(until.replace("Z", "+00:00")) if until else None
    except ValueError as exc:
        fail(str(exc))
    if end is not None and end.tzinfo is None:
        end = end.replace(tzinfo=dt.timezone.utc)
    try:
        summary = summarize(fleet_dir, since, end, Thresholds(min_jobs=min_jobs, min_users=min_users))
    except FleetError as exc:
        fail(str(exc))
    text = render(summary, fmt)
    if output:
        from diag.files import write_atomic

        try:
            write_atomic(output, text)
        except OSError as exc:
            fail(f"{output}: {exc.strerror or exc}")
        return
    write_stdout(text)


@fleet.command("templates")
@click.argument("fleet_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--since", default="7d", show_default=True, help="Window length: 30m, 12h, 7d, 4w.")
@click.option("--until", help="Window end, ISO-8601 UTC (default: now).")
@click.option("--min-jobs", type=click.IntRange(1), default=2, show_default=True,
              help="A template must appear in this many unexplained jobs.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option("--top", type=click.IntRange(1), default=20, show_default=True, help="Templates shown.")
@click.option(
    "--drafts",
    "drafts_dir",
    type=click.Path(file_okay=False),
    help="Write a draft rule (status: experimental) per top template (at most 10) into this folder; "
    "never used unless passed with --rules.",
)
@click.option("--miner", type=click.Choice(("drain", "drain3")), default="drain", show_default=True,
              help="drain3 needs the optional package: pip install 'slurmdiag[templates]'.")  # fmt: skip
def fleet_templates(fleet_dir, since, until, min_jobs, fmt, top, drafts_dir, miner) -> None:
    """Error lines of unexplained failed jobs that no rule knows, mined into templates.

    Templates also seen in healthy jobs are left out; the rest are ranked by jobs, then nodes, then
    users. Lines come from the records' error_sample (masked: numbers, addresses, paths, hosts)."""
    from diag.fleet.mining import MinerUnavailable, make_miner
    from diag.fleet.store import FleetError
    from diag.fleet.summary import parse_duration
    from diag.fleet.templates import load_lines, mine, render, write_drafts

    try:
        parse_duration(since)
        end = _window_end(until)
        chosen = make_miner(miner)
        unexplained, healthy = load_lines(fleet_dir, since, end)
    except (ValueError, FleetError, MinerUnavailable) as exc:
        fail(str(exc))
    result = mine(unexplained, healthy, miner=chosen, min_jobs=min_jobs)
    result.since = since
    write_stdout(render(result, fmt, top))
    if drafts_dir:
        for path in write_drafts(result, drafts_dir, top=min(top, 10)):
            click.echo(f"slurmdiag: draft rule {safe_text(path)}", err=True)


def _window_end(until: str | None):
    import datetime as dt

    if not until:
        return None
    end = dt.datetime.fromisoformat(until.replace("Z", "+00:00"))
    return end if end.tzinfo is not None else end.replace(tzinfo=dt.timezone.utc)
