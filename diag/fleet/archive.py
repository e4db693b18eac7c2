"""``slurmdiag fleet scan ARCHIVE... --out DIR [--shard i/N]``: the fleet records of jobs whose logs a
site keeps in an archive, for sites without accounting (or to rescan after the rules changed).

Meant to run as a Slurm job array: every task lists the archive the same way, keeps the jobs whose
key hashes to its shard, diagnoses them in one process and writes one shard file by create-and-rename.
How jobs are found:

* a folder whose log names carry several job ids (``slurm-123.out``, ``train-124_4.err``) holds one
  job per id (:func:`diag.slurm.jobid.group_by_job`);
* any other folder with logs is one job (its id from the names, else the folder's name);
* Slurm's record of a job, where the site saved one, is read from ``sacct.json`` (``sacct --json``),
  ``sacct.txt`` (``sacct -P`` with its header line) or ``scontrol.txt`` (``scontrol show job``) in
  the job's folder or any folder above it: user, account, partition, state, times and node list.
  Without one the user is the log file's owner and the nodes are the hosts the logs name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pwd
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from diag.api import diagnose_job, diagnose_sources
from diag.catalog.model import RuleSet
from diag.files import write_atomic
from diag.fleet.record import build_record, dumps, rules_fingerprint, slurm_meta
from diag.input.sources import LOG_SUFFIXES, SCAN_BYTES_PER_SECOND, Source, budget_bytes
from diag.slurm.jobid import group_by_job, guess_job_id, job_id_of
from diag.slurm.query import JobInfo, parse_sacct_json, parse_sacct_parsable, parse_scontrol

SIDECARS = ("sacct.json", "sacct.txt", "scontrol.txt")


@dataclass
class ArchiveJob:
    job_id: str
    files: list[str]
    folder: str
    slurm: list[JobInfo] = field(default_factory=list)


def parse_shard(text: str) -> tuple[int, int]:
    """``3/64`` -> (3, 64); raises ValueError on anything else."""
    index, _, count = text.partition("/")
    i, n = int(index), int(count)
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard {text}: want i/N with 0 <= i < N")
    return i, n


def in_shard(cluster: str, job_id: str, shard: tuple[int, int]) -> bool:
    """A stable hash (not Python's salted ``hash``): every array task must agree on who scans a job."""
    digest = hashlib.sha1(f"{cluster}\0{job_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard[1] == shard[0]


def _read_sidecar(path: str) -> list[JobInfo]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        return parse_sidecar(os.path.basename(path), text)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []  # a damaged record costs the job its Slurm fields, not its diagnosis


def parse_sidecar(name: str, text: str) -> list[JobInfo]:
    """Slurm's saved record(s) of jobs; ``raw`` carries Account and Partition, which JobInfo lacks.
    Steps (``123.batch``, ``123.0``) of a ``sacct`` without ``-X`` are left out: the job is the allocation."""
    if name == "sacct.json":
        return sacct_json_jobs(text)
    if name == "scontrol.txt":
        return parse_scontrol(text)
    header, _, body = text.partition("\n")  # sacct -P prints its field names first
    names = header.strip().split("|")
    lines = [line for line in body.splitlines() if line.strip()]
    jobs = parse_sacct_parsable("\n".join(lines), ",".join(names))
    for job, line in zip(jobs, lines):
        job.raw = dict(zip(names, line.split("|")))
    return [j for j in jobs if "." not in j.job_id]


def sacct_json_jobs(text: str) -> list[JobInfo]:
    """``sacct --json``'s jobs with what a fleet record wants beyond :func:`parse_sacct_json`:
    ``raw`` Account and Partition, start and end times (Slurm's local form, as ``sacct -P`` prints)."""
    data = json.loads(text)
    jobs = parse_sacct_json(text)
    for job, raw in zip(jobs, data.get("jobs", [])):
        job.raw = {"Account": str(raw.get("account") or ""), "Partition": str(raw.get("partition") or "")}
        job.start_time = job.start_time or _epoch((raw.get("time") or {}).get("start"))
        job.end_time = job.end_time or _epoch((raw.get("time") or {}).get("end"))
    return jobs


def _epoch(value) -> str:
    """sacct --json times: POSIX seconds (or a ``{"set", "number"}`` record) -> Slurm's local form."""
    if isinstance(value, dict):
        value = value.get("number") if value.get("set", True) else None
    if not isinstance(value, int) or value <= 0:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(value))


def _looks_like_log(name: str) -> bool:
    """The names ``slurmdiag DIR`` reads (.out .err .log .txt, gzipped or not): a job folder may also
    hold checkpoints and core files, which are no log and could be gigabytes."""
    base = name[:-3] if name.endswith(".gz") else name
    if name.startswith(".") or name in SIDECARS or not base.endswith(LOG_SUFFIXES):
        return False
    return not name.startswith("slurmdiag-")  # our own reports, when the epilog wrote them beside the logs


def discover(archives: Sequence[str]) -> Iterator[ArchiveJob]:
    """Every job in the archives, in a stable order (every shard task must list the same jobs)."""
    for root in archives:
        if os.path.isfile(root):
            yield ArchiveJob(job_id_of(root) or os.path.basename(root), [root], os.path.dirname(root) or ".")
            continue
        records: dict[str, dict[str, list[JobInfo]]] = {}
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            records[folder] = {}
            for side in SIDECARS:
                if side in files:
                    for job in _read_sidecar(os.path.join(folder, side)):
                        records[folder].setdefault(job.job_id, []).append(job)
                        if job.raw_id and job.raw_id != job.job_id:
                            records[folder].setdefault(job.raw_id, []).append(job)
            logs = sorted(os.path.join(folder, f) for f in files if _looks_like_log(f))
            if not logs:
                continue
            groups = group_by_job(logs)
            for jid, indexes in groups:
                paths = [logs[i] for i in indexes]
                # A folder without an id in its names is named by its path under the archive, so
                # alice/run and bob/run stay two jobs.
                job_id = jid or guess_job_id(paths) or (os.path.relpath(folder, root) if folder != root else None)
                if job_id is None:
                    # Loose files without any id at the archive's top: each its own job, named by its file.
                    for path in paths:
                        yield ArchiveJob(os.path.basename(path), [path], folder, _slurm_for(records, folder, root, ""))
                    continue
                yield ArchiveJob(job_id, paths, folder, _slurm_for(records, folder, root, job_id))


def _slurm_for(records: dict[str, dict[str, list[JobInfo]]], folder: str, root: str, job_id: str) -> list[JobInfo]:
    """The nearest saved record of this job: its own folder first, then each folder above, up to the root."""
    here = folder
    while True:
        found = records.get(here, {}).get(job_id)
        if found:
            return found
        if os.path.normpath(here) == os.path.normpath(root) or os.path.dirname(here) == here:
            return []
        here = os.path.dirname(here)


class _OutOfTime(Exception):
    pass


def _alarm(_signum, _frame):
    raise _OutOfTime


def _owner(path: str) -> str | None:
    try:
        uid = os.stat(path).st_uid
    except OSError:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def diagnose_archive_job(job: ArchiveJob, rules: RuleSet, max_seconds: float):
    """The Report of one archived job, read within ``max_seconds`` (head and tail of big files)."""
    max_bytes = budget_bytes(job.files, max(max_seconds * 0.8, 0.5), SCAN_BYTES_PER_SECOND)
    if job.slurm:
        # Slurm's verdict (NODE_FAIL, TIMEOUT ...) is merged in; the logs are the archived copies, not
        # the paths the record names (those may be gone or elsewhere by now).
        slurm = [dataclasses.replace(j, stdout="", stderr="", work_dir="") for j in job.slurm]
        return diagnose_job(
            slurm, rules, job_id=job.job_id, extra_paths=job.files, max_bytes_per_file=max_bytes, sample_errors=True
        )
    sources = [Source(p, max_bytes=max_bytes) for p in job.files]
    return diagnose_sources(sources, rules, job=job.job_id, jobs=1, sample_errors=True)


@dataclass
class ScanStats:
    listed: int = 0
    in_shard: int = 0
    skipped: int = 0  # already in the fleet directory with the same rules
    scanned: int = 0
    failed: list[str] = field(default_factory=list)  # "job: why"
    seconds: float = 0.0
    shard_path: str | None = None


@dataclass
class Unit:
    """One job to scan: how to diagnose it and what its record adds to the report's own fields."""

    job_id: str
    diagnose: Callable[[float], object]  # max_seconds -> Report
    meta: Callable[[], dict[str, object]]


def archive_units(archives: Sequence[str], rules: RuleSet) -> Iterator[Unit]:
    for job in discover(archives):
        yield Unit(
            job.job_id,
            lambda seconds, job=job: diagnose_archive_job(job, rules, seconds),
            lambda job=job: _archive_meta(job),
        )


def scan_archive(archives: Sequence[str], out_dir: str, rules: RuleSet, **kwargs) -> ScanStats:
    """Diagnose this shard's jobs of the archives and write their records as one shard file."""
    return scan_units(archive_units(archives, rules), out_dir, rules, **kwargs)


def scan_units(
    units: Iterable[Unit],
    out_dir: str,
    rules: RuleSet,
    *,
    cluster: str,
    shard: tuple[int, int] = (0, 1),
    max_seconds: float = 30.0,
    known: Iterable[tuple[str, str, str]] = (),
    log: Callable[[str], None] = lambda _m: None,
) -> ScanStats:
    """Diagnose this shard's jobs and write their records as one shard file under ``out_dir/shards``."""
    started = time.monotonic()
    fingerprint = rules_fingerprint(rules)
    done = set(known)
    stats = ScanStats()
    lines: list[str] = []
    # The hard per-job limit is an alarm, which only the main thread can set; elsewhere (a Dask or
    # Ray worker thread mapping this function) the byte budget alone bounds a job.
    timed = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGALRM, _alarm) if timed else None
    try:
        for unit in units:
            stats.listed += 1
            if not in_shard(cluster, unit.job_id, shard):
                continue
            stats.in_shard += 1
            if (cluster, unit.job_id, fingerprint[1]) in done:
                stats.skipped += 1
                continue
            if timed:
                signal.setitimer(signal.ITIMER_REAL, max(max_seconds, 0.1))
            try:
                report = unit.diagnose(max_seconds)
            except _OutOfTime:
                stats.failed.append(f"{unit.job_id}: gave up after --max-seconds={max_seconds:g}")
                continue
            except Exception as exc:  # noqa: BLE001 - one bad job must not cost the shard its others
                stats.failed.append(f"{unit.job_id}: {type(exc).__name__}: {exc}")
                continue
            finally:
                if timed:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            record = build_record(report, fingerprint, cluster=cluster, producer="scan", meta=unit.meta())
            lines.append(dumps(record))
            stats.scanned += 1
    finally:
        if timed:
            signal.signal(signal.SIGALRM, old)
    if lines:
        shards = os.path.join(out_dir, "shards")
        os.makedirs(shards, exist_ok=True)
        name = f"scan-{shard[0]}of{shard[1]}-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.jsonl"
        stats.shard_path = os.path.join(shards, name)
        write_atomic(stats.shard_path, "".join(lines))
    stats.seconds = time.monotonic() - started
    log(
        f"shard {shard[0]}/{shard[1]}: {stats.in_shard} of {stats.listed} jobs are this shard's, "
        f"{stats.skipped} already scanned with these rules, {stats.scanned} scanned, {len(stats.failed)} failed "
        f"in {stats.seconds:.1f} s"
    )
    return stats


def _archive_meta(job: ArchiveJob) -> dict[str, object]:
    """What an archive says when Slurm's record does not: the logs' owner and last write."""
    meta: dict[str, object] = {}
    if job.slurm:
        meta.update(slurm_meta(job.slurm))
        if not job.slurm[0].user:
            meta["user"] = _owner(job.files[0])
        if not job.slurm[0].end_time:
            meta["end_time"] = _last_write(job.files)
    else:
        meta.update(user=_owner(job.files[0]), end_time=_last_write(job.files))
    return meta


def _last_write(paths: Sequence[str]) -> float | None:
    times = []
    for path in paths:
        try:
            times.append(os.stat(path).st_mtime)
        except OSError:
            continue
    return max(times) if times else None
