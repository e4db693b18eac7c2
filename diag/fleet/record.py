"""The per-job fleet record, schema ``slurmdiag.fleet/1``: one JSON line per job, a few KB at most.

It keeps what aggregation needs (who ran where, when, how it ended, which causes named which hosts)
and nothing a reader of one job's report needs: only the first evidence line's ``file:line``,
redacted like an alert. The one exception is ``error_sample``: for a job no rule explains, and
for a healthy one as the baseline, up to 20 framed error lines with their numbers, addresses,
paths and host names masked (diag.input.mask), which ``fleet templates`` mines. Fields are flat and
typed the same in every record so that ``fleet compact`` reads them with one fixed schema; a
field added later is null in older records (the schema stays ``slurmdiag.fleet/1``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from diag import __version__
from diag.catalog.model import RuleSet
from diag.files import write_atomic
from diag.formats.redact import Redactor, redact_report
from diag.input.mask import mask
from diag.report import Report
from diag.scan.facts import UNNAMED_HOST

SCHEMA = "slurmdiag.fleet/1"
MAX_FINDINGS = 16  # a job with more is already explained by its first ones; keeps a record small
MAX_LIST = 64  # hosts/ranks per finding, nodes per job are not capped (the denominators need them all)
MAX_TEXT = 200
FINDINGS_BYTES = 3000  # the findings' share of a record; nodes are not capped (the denominators need them all)
# What makes a job failed and a finding blaming, for the report's counts (summary.py) and for
# which jobs keep an error sample (sample_kind).
BLAMING = ("error", "critical")
FAILED_STATES = ("FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")
MAX_SAMPLE_LINES = 20  # distinct masked error lines per job
SAMPLE_BYTES = 2000  # their share of a record
_SLURM_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

# The fixed columns of a record, with their DuckDB types: compact reads every line with this schema,
# so a field added here must be added to both (and a new schema version if its meaning changes).
FINDING_TYPE = (
    "STRUCT(id VARCHAR, role VARCHAR, severity VARCHAR, confidence DOUBLE, explained_by VARCHAR, "
    "hosts VARCHAR[], ranks BIGINT[], devices VARCHAR[], evidence VARCHAR)[]"
)
SAMPLE_TYPE = "STRUCT(text VARCHAR, host VARCHAR, count BIGINT)[]"
MAX_DEVICES = 16
# The device an evidence line names, so that a bad node's report can say which HCA or GPU: verbs
# device names (mlx5_3, bnxt_re0, irdma1, efa_0, hfi1_0, qedr0) and a GPU's PCI address as NVRM's
# Xid lines print it (``Xid (PCI:0000:5d:00)``, ``GPU 0000:5d:00.0``).
_HCA = re.compile(r"\b(mlx[45]_\d+|bnxt_re\d+|irdma\d+|efa_\d+|hfi1_\d+|qedr\d+)\b")
_GPU = re.compile(r"(?:\bPCI:|\bGPU )([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})")
COLUMNS: dict[str, str] = {
    "schema": "VARCHAR",
    "cluster": "VARCHAR",
    "job_id": "VARCHAR",
    "raw_id": "VARCHAR",
    "array_job_id": "VARCHAR",
    "array_task_id": "VARCHAR",
    "het_job_id": "VARCHAR",
    "het_offset": "VARCHAR",
    "user": "VARCHAR",
    "account": "VARCHAR",
    "partition": "VARCHAR",
    "start_time": "VARCHAR",
    "end_time": "VARCHAR",
    "scanned_at": "VARCHAR",
    "state": "VARCHAR",
    "exit_code": "VARCHAR",
    "derived_exit_code": "VARCHAR",
    "nodes": "VARCHAR[]",
    "nccl_versions": "VARCHAR[]",
    "slurmdiag_version": "VARCHAR",
    "rules_version": "VARCHAR",
    "rules_sha256": "VARCHAR",
    "producer": "VARCHAR",
    "top": "VARCHAR",
    "findings": FINDING_TYPE,
    "error_sample": SAMPLE_TYPE,
}


def rules_fingerprint(rules: RuleSet) -> tuple[str, str]:
    """(version, sha256) of the rule contents: two scans with the same hash would say the same of a
    job, so a rescan is needed only when it changes (a site rule edited, a new release)."""
    digest = hashlib.sha256()
    for rule in sorted(rules.rules, key=lambda r: r.id):
        digest.update(f"{rule.id}\0".encode())
        try:
            digest.update(Path(rule.path).read_bytes())
        except OSError:
            digest.update(repr(rule).encode())  # a rule built in memory: its fields stand for its file
        digest.update(b"\0")
    return f"{__version__}/{len(rules.rules)}", digest.hexdigest()


def utc_iso(value: str | float | None) -> str | None:
    """Slurm's local ``2026-12-03T09:00:00`` (or a POSIX time) -> ``2026-12-03T09:00:00Z``."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        stamp = dt.datetime.fromtimestamp(value, dt.timezone.utc)
    else:
        if not _SLURM_TIME.match(value):
            return None
        parsed = dt.datetime.fromisoformat(value.rstrip("Z"))
        # Slurm prints the controller's local time without a zone: this host's zone is the best guess.
        stamp = parsed.replace(tzinfo=dt.timezone.utc) if value.endswith("Z") else parsed.astimezone(dt.timezone.utc)
    return stamp.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(text: str | None) -> str | None:
    return text if text is None or len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def build_record(
    report: Report,
    rules: RuleSet | tuple[str, str],
    *,
    cluster: str,
    producer: str,
    meta: Mapping[str, object] | None = None,
    now: float | None = None,
) -> dict:
    """The fleet record of one diagnosed job.

    Slurm's record (``report.slurm``, from ``slurmdiag job``/the epilog) gives the job's identity,
    user, times, state and node list; ``meta`` fills or overrides fields Slurm's record lacks
    (account, partition; an archive's file times). Without any node list the hosts the logs name
    stand for the allocation: a node that printed nothing is then not counted as having run the job.
    """
    version, digest = rules if isinstance(rules, tuple) else rules_fingerprint(rules)
    slurm = report.slurm[0] if report.slurm else {}
    nodes: list[str] = []
    for part in report.slurm or []:
        nodes += [n for n in part.get("nodes") or [] if n not in nodes]
    if not nodes:
        seen = (
            set(report.facts.hosts) | set(report.facts.slurm_task_hosts) | {h for f in report.findings for h in f.hosts}
        )
        nodes = sorted(h for h in seen if h and h != UNNAMED_HOST)
    job_id = str(slurm.get("job_id") or report.job or "")
    array_job, _, array_task = job_id.partition("_") if "_" in job_id else ("", "", "")
    het_job, _, het_offset = job_id.partition("+") if "+" in job_id else ("", "", "")
    redacted, _ = redact_report(report)  # secrets only: host names are the point of a fleet record
    findings = []
    for f in redacted.findings[:MAX_FINDINGS]:
        first = min(f.evidence, key=lambda e: e.order, default=None)
        findings.append(
            {
                "id": f.id,
                "role": f.role,
                "severity": f.severity,
                "confidence": round(f.confidence, 2),
                "explained_by": f.explained_by,
                "hosts": [h for h in f.hosts if h and h != UNNAMED_HOST][:MAX_LIST],
                "ranks": f.ranks[:MAX_LIST],
                "devices": devices(f),
                "evidence": _short(f"{first.path}:{first.line}") if first else None,
            }
        )
    findings = fit(findings)
    record = {
        "schema": SCHEMA,
        "cluster": cluster,
        "job_id": job_id,
        "raw_id": None,  # the report's record lacks it: slurm_meta() gives it
        "array_job_id": array_job or None,
        "array_task_id": array_task or None,
        "het_job_id": het_job or None,
        "het_offset": het_offset or None,
        "user": slurm.get("user") or None,
        "account": None,
        "partition": None,
        "start_time": utc_iso(slurm.get("start_time")),
        "end_time": utc_iso(slurm.get("end_time")),
        "scanned_at": utc_iso(now if now is not None else dt.datetime.now(dt.timezone.utc).timestamp()),
        "state": slurm.get("state") or None,
        "exit_code": slurm.get("exit_code") or None,
        "derived_exit_code": slurm.get("derived_exit_code") or None,
        "nodes": nodes,
        "nccl_versions": sorted(report.facts.versions),
        "slurmdiag_version": __version__,
        "rules_version": version,
        "rules_sha256": digest,
        "producer": producer,
        "top": findings[0]["id"] if findings else None,
        "findings": findings,
    }
    for key, value in (meta or {}).items():
        if key in COLUMNS and value not in (None, ""):
            record[key] = utc_iso(value) if key.endswith("_time") else value
    record["error_sample"] = error_sample(report, record.get("state"), nodes)
    return record


def sample_kind(state: str | None, findings: Sequence) -> str | None:
    """``unexplained`` (failed, and no root cause but unexplained-failure), ``healthy`` (not failed,
    no error at all: the baseline whose lines are subtracted) or None. ``findings``: dicts or Findings,
    with id, role, severity and explained_by, as ``fleet report`` counts them."""

    def get(f, name):
        return f.get(name) if isinstance(f, Mapping) else getattr(f, name)

    errors = [f for f in findings or [] if get(f, "severity") in BLAMING and not get(f, "explained_by")]
    failed = (state or "").split(" ")[0] in FAILED_STATES or bool(errors)
    if not failed:
        return "healthy" if (state or "COMPLETED").startswith("COMPLETED") else None
    roots = [f for f in errors if get(f, "role") == "root" and get(f, "id") != "unexplained-failure"]
    return None if roots else "unexplained"


def error_sample(report: Report, state: str | None, nodes: Sequence[str]) -> list[dict]:
    """The job's sampled error lines as the record keeps them: only for an unexplained or healthy
    job; secrets redacted, then masked (the job's own node names too); one line per masked text, at
    most MAX_SAMPLE_LINES and SAMPLE_BYTES, taken alternately from the job's first lines (where a
    failure starts) and its last ones (what it died of), kept in file order."""
    if not report.error_sample or sample_kind(state, report.findings) is None:
        return []
    redactor = Redactor()
    hosts = set(nodes) | set(report.facts.hosts)
    entries: list[dict] = []
    for payload, host, count in report.error_sample:
        text = mask(redactor.text(payload) or "", hosts)
        if text:
            entries.append({"text": text, "host": host if host and host != UNNAMED_HOST else None, "count": count})
    front, back = 0, len(entries) - 1
    order: list[int] = []
    while front <= back:
        order.append(front)
        front += 1
        if front <= back:
            order.append(back)
            back -= 1
    chosen: dict[str, int] = {}  # text -> index of the entry kept for it
    used = 2
    for i in order:
        entry = entries[i]
        if entry["text"] in chosen:
            entries[chosen[entry["text"]]]["count"] += entry["count"]
            continue
        size = len(json.dumps(entry, ensure_ascii=False, separators=(",", ":"))) + 1
        if used + size > SAMPLE_BYTES or len(chosen) >= MAX_SAMPLE_LINES:
            continue
        used += size
        chosen[entry["text"]] = i
    return [entries[i] for i in sorted(chosen.values())]


def fit(findings: list[dict], budget: int = FINDINGS_BYTES) -> list[dict]:
    """Findings within ``budget`` bytes of JSON: a job with hundreds of ranks or hosts per finding
    keeps its record small. Symptoms and advice go first (the root causes are what a fleet counts),
    then the per-finding lists shrink; a finding naming more hosts than that blames no one node."""

    def size(items: list[dict]) -> int:
        return len(json.dumps(items, separators=(",", ":")))

    while size(findings) > budget and any(f["role"] != "root" for f in findings):
        last = max(i for i, f in enumerate(findings) if f["role"] != "root")
        findings = findings[:last] + findings[last + 1 :]
    for cap in (16, 4, 1):
        if size(findings) <= budget:
            break
        findings = [{**f, **{k: f[k][:cap] for k in ("hosts", "ranks", "devices")}} for f in findings]
    while size(findings) > budget and len(findings) > 1:
        findings = findings[:-1]
    return findings


def devices(finding) -> list[str]:
    """``host:mlx5_3`` / ``host:GPU@0000:5d:00`` for each device the finding's evidence names on a
    host it blames, in order of first appearance."""
    found: list[str] = []
    blamed = set(finding.hosts)
    for e in finding.evidence:
        if not e.host or e.host not in blamed:
            continue
        names = [m for m in _HCA.findall(e.text)] + [f"GPU@{m.lower()}" for m in _GPU.findall(e.text)]
        for name in names:
            if f"{e.host}:{name}" not in found:
                found.append(f"{e.host}:{name}")
    return found[:MAX_DEVICES]


def dumps(record: Mapping) -> str:
    """One line, keys in schema order: the same job gives the same bytes."""
    return json.dumps({k: record.get(k) for k in COLUMNS}, ensure_ascii=False, separators=(",", ":")) + "\n"


def key(record: Mapping) -> tuple[str, str, str]:
    """What newest-wins de-duplicates on."""
    return (str(record.get("cluster")), str(record.get("job_id")), str(record.get("rules_sha256")))


def spool_path(fleet_dir: str, record: Mapping) -> str:
    """``DIR/spool/<yyyy-mm-dd>/<cluster>-<jobid>.json``: one file per job, one folder per day so no
    folder grows past a day's jobs."""
    day = (record.get("end_time") or record.get("scanned_at") or "unknown")[:10]
    name = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{record.get('cluster')}-{record.get('job_id')}")
    return os.path.join(fleet_dir, "spool", day, f"{name}.json")


SPOOL_MODE = 0o1733  # every user's epilog adds files; none can list, delete or replace another's


def write_record(fleet_dir: str, record: Mapping) -> str:
    """Write one job's record under ``DIR/spool/<day>/``. The epilog runs as the job's user, so the
    folders it creates are opened to the other users' epilogs (sticky, write and search only)."""
    path = spool_path(fleet_dir, record)
    spool = os.path.join(fleet_dir, "spool")
    for folder in (fleet_dir, spool, os.path.dirname(path)):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        os.chmod(folder, SPOOL_MODE)  # mkdir's mode would be cut by the umask
    write_atomic(path, dumps(record))
    return path


def default_cluster(env: Mapping[str, str] | None = None) -> str:
    """``$SLURM_CLUSTER_NAME`` (set in epilogs), else ``ClusterName`` of slurm.conf, else ``default``."""
    env = os.environ if env is None else env
    if env.get("SLURM_CLUSTER_NAME"):
        return env["SLURM_CLUSTER_NAME"]
    conf = env.get("SLURM_CONF", "/etc/slurm/slurm.conf")
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in Path(conf).read_text().splitlines():
            m = re.match(r"\s*ClusterName\s*=\s*(\S+)", line, re.I)
            if m:
                return m[1]
    return "default"


def slurm_meta(jobs: Sequence) -> dict[str, object]:
    """What the report's copy of Slurm's record leaves out: the numeric job id, account, partition."""
    if not jobs:
        return {}
    raw = getattr(jobs[0], "raw", {}) or {}
    return {
        "raw_id": jobs[0].raw_id or None,
        "account": raw.get("Account") or None,
        "partition": raw.get("Partition") or None,
    }
