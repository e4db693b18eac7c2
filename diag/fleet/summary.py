"""``slurmdiag fleet report DIR``: what the store says about the cluster over a window.

* **Bad nodes.** For every node: the jobs it ran in the window and the jobs in which a root finding
  (error or critical, not explained by another) named it. The fleet's rate of such blame per
  job-node pair is the baseline. A node is reported when (a) it ran at least ``min_jobs`` jobs and was
  blamed in ``min_blamed`` of them, by at least ``min_users`` users, (b) its blame count is
  improbable under the baseline (one-sided binomial test, Bonferroni over the nodes tested), and
  (c) it stays improbable with the jobs of its most-blaming user taken out, so one user's broken
  script, however often run, cannot brand a node. Nodes are ranked by the Wilson lower bound of
  their blame rate. Each comes with a ready-to-paste ``scontrol`` drain line; nothing is drained.
* **Causes over time.** Jobs per root cause in this window and the one before, with the change.
* **Unexplained share.** Of the failed jobs, those no rule explains.
* **Timeline.** The window cut into buckets (7 to 30 of them: hours for a day, days for a week or a
  month, weeks beyond) with the failed jobs of each under their first root cause, and the unexplained
  ones: what the HTML page plots (``page.py``) and JSON's additive ``timeline`` carries.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from diag.fleet.record import BLAMING, FAILED_STATES
from diag.fleet.stats import binomial_sf, wilson_lower, wilson_upper
from diag.fleet.store import FleetError, duckdb_module, sql_str, store_glob
from diag.formats.prometheus import escape_label
from diag.formats.safe import safe_text

CONTEXT_NODES = 4
_DURATION = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
# Bucket sizes a person reads without arithmetic; the largest giving at least 7 buckets is used.
BUCKETS = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800, 2419200)


def parse_duration(text: str) -> dt.timedelta:
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"{text!r}: want a number and a unit, e.g. 7d, 12h, 30m")
    return dt.timedelta(seconds=int(m[1]) * _UNITS[m[2]])


@dataclass
class Thresholds:
    min_jobs: int = 10
    min_blamed: int = 3
    min_users: int = 2
    alpha: float = 0.01  # family-wise, over all nodes tested


@dataclass
class NodeVerdict:
    node: str
    jobs: int
    users: int
    blamed: int
    blamed_users: int
    rate: float
    wilson_low: float
    p_value: float
    p_value_without_top_user: float
    causes: dict[str, int]
    devices: dict[str, int]  # HCA / GPU of this node named by the blaming findings, with their job counts
    first_seen: str | None
    last_seen: str | None
    drain: str = ""
    wilson_high: float = 1.0  # for the page's interval bar; not in JSON (the lower bound ranks)

    def to_json(self) -> dict:
        return {
            "node": self.node,
            "jobs": self.jobs,
            "users": self.users,
            "blamed_jobs": self.blamed,
            "blamed_users": self.blamed_users,
            "rate": round(self.rate, 4),
            "wilson_lower": round(self.wilson_low, 4),
            "p_value": float(f"{self.p_value:.3g}"),
            "p_value_without_top_user": float(f"{self.p_value_without_top_user:.3g}"),
            "causes": self.causes,
            "devices": self.devices,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "drain": self.drain,
        }


@dataclass
class Bucket:
    """One slice of the window: its jobs, the failed ones under their first root cause, the unexplained."""

    start: str
    end: str
    partial: bool = False  # part of it lies outside the window: its counts are not comparable
    jobs: int = 0
    failed: int = 0
    unexplained: int = 0
    causes: Counter = field(default_factory=Counter)

    @property
    def unexplained_share(self) -> float | None:
        return self.unexplained / self.failed if self.failed else None

    def to_json(self) -> dict:
        return {
            "start": self.start,
            "end": self.end,
            "partial": self.partial,
            "jobs": self.jobs,
            "failed_jobs": self.failed,
            "unexplained_jobs": self.unexplained,
            "causes": dict(sorted(self.causes.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


@dataclass
class NodeContext:
    """A node judged but not reported: drawn in grey beside the bad ones, so a reader sees the gap."""

    node: str
    jobs: int
    blamed: int
    users: int
    rate: float
    wilson_low: float
    wilson_high: float


@dataclass
class FleetSummary:
    since: str
    start: str
    end: str
    jobs: int = 0
    nodes: int = 0
    baseline: float = 0.0
    nodes_tested: int = 0
    bad_nodes: list[NodeVerdict] = field(default_factory=list)
    causes: list[dict] = field(default_factory=list)  # {cause, jobs, previous, delta}
    failed: int = 0
    unexplained: int = 0
    thresholds: Thresholds = field(default_factory=Thresholds)
    clusters: list[str] = field(default_factory=list)
    bucket_seconds: int = 86400
    buckets: list[Bucket] = field(default_factory=list)
    context_nodes: list[NodeContext] = field(default_factory=list)  # page only

    @property
    def unexplained_share(self) -> float:
        return self.unexplained / self.failed if self.failed else 0.0

    def to_json(self) -> dict:
        return {
            "schema": "slurmdiag.fleet-report/1",
            "window": {"since": self.since, "start": self.start, "end": self.end},
            "jobs": self.jobs,
            "nodes": self.nodes,
            "baseline_rate": round(self.baseline, 5),
            "nodes_tested": self.nodes_tested,
            "thresholds": self.thresholds.__dict__,
            "bad_nodes": [n.to_json() for n in self.bad_nodes],
            "causes": self.causes,
            "failed_jobs": self.failed,
            "unexplained_jobs": self.unexplained,
            "unexplained_share": round(self.unexplained_share, 4),
            # Added to /1 (readers of the fields above are unaffected): what a plot needs.
            "clusters": self.clusters,
            "timeline": {"bucket_seconds": self.bucket_seconds, "buckets": [b.to_json() for b in self.buckets]},
        }


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _rows(con, fleet_dir: str, start: str, end: str) -> list[tuple]:
    """(job key, user, nodes, end, state, findings) of the jobs that ended in [start, end)."""
    return con.execute(
        f"""
        SELECT cluster, job_id, coalesce(user, '?'), nodes, coalesce(end_time, scanned_at) AS t, state,
               [struct_pack(id := f.id, role := f.role, severity := f.severity,
                            explained_by := f.explained_by, hosts := f.hosts, devices := f.devices)
                for f in findings] AS fs
        FROM read_parquet({sql_str(store_glob(fleet_dir))})
        WHERE coalesce(end_time, scanned_at) >= ? AND coalesce(end_time, scanned_at) < ?
        -- several rules hashes of one job: the latest scan speaks for it
        QUALIFY row_number() OVER (PARTITION BY cluster, job_id ORDER BY scanned_at DESC) = 1
        """,
        [start, end],
    ).fetchall()


def _roots(findings) -> list[dict]:
    return [f for f in findings or [] if f["role"] == "root" and not f["explained_by"] and f["severity"] in BLAMING]


def summarize(
    fleet_dir: str,
    since: str = "7d",
    until: dt.datetime | None = None,
    thresholds: Thresholds | None = None,
) -> FleetSummary:
    import glob

    duckdb = duckdb_module()
    if not glob.glob(store_glob(fleet_dir)):
        raise FleetError(f"{fleet_dir}: no store yet (run `slurmdiag fleet compact {fleet_dir}` first)")
    th = thresholds or Thresholds()
    end = until or dt.datetime.now(dt.timezone.utc)
    span = parse_duration(since)
    start, previous_start = end - span, end - 2 * span
    summary = FleetSummary(since=since, start=_iso(start), end=_iso(end), thresholds=th)
    con = duckdb.connect()
    try:
        rows = _rows(con, fleet_dir, _iso(start), _iso(end))
        previous = _rows(con, fleet_dir, _iso(previous_start), _iso(start))
    finally:
        con.close()
    summary.jobs = len(rows)
    summary.clusters = sorted({row[0] for row in rows if row[0]})
    _bad_nodes(summary, rows, th)
    _causes(summary, rows, previous)
    summary.bucket_seconds = bucket_size(span)
    summary.buckets = _buckets(start, end, summary.bucket_seconds)
    first = _parse_iso(summary.buckets[0].start) if summary.buckets else None
    for _c, _j, _u, _nodes, when, state, findings in rows:
        bucket = _bucket_of(summary.buckets, first, summary.bucket_seconds, when)
        if bucket:
            bucket.jobs += 1
        if not _failed(state, findings):
            continue
        summary.failed += 1
        cause = _first_cause(findings)
        if cause is None:
            summary.unexplained += 1
        if bucket:
            bucket.failed += 1
            if cause is None:
                bucket.unexplained += 1
            else:
                bucket.causes[cause] += 1
    return summary


def _failed(state: str | None, findings) -> bool:
    return (state or "").split(" ")[0] in FAILED_STATES or any(
        f["severity"] in BLAMING and not f["explained_by"] for f in findings or []
    )


def _first_cause(findings) -> str | None:
    """The root cause a failed job is counted under (findings come ranked, most important first);
    None when nothing but ``unexplained-failure`` explains it."""
    return next((f["id"] for f in _roots(findings) if f["id"] != "unexplained-failure"), None)


def bucket_size(span: dt.timedelta) -> int:
    """Seconds per bucket: the largest readable size that cuts the window into at least 7 buckets
    (7d -> days, 30d -> days, 24h -> 3 h, 90d -> weeks), so a chart has 7 to ~30 bars."""
    seconds = span.total_seconds()
    fitting = [b for b in BUCKETS if seconds / b >= 7]
    return fitting[-1] if fitting else BUCKETS[0]


def _buckets(start: dt.datetime, end: dt.datetime, size: int) -> list[Bucket]:
    # Edges on multiples of the size since the epoch (UTC midnight for days), so a bucket is "Dec 3",
    # not "Dec 3 12:24 to Dec 4 12:24"; the first and last may stick out of the window (partial).
    # Weeks since the epoch start on Thursdays; shift them to Mondays.
    shift = 4 * 86400 if size == 604800 else 0
    t0, t1 = start.timestamp(), end.timestamp()
    edge = (t0 - shift) // size * size + shift
    out = []
    while edge < t1 and len(out) < 400:
        lo, hi = (
            dt.datetime.fromtimestamp(edge, dt.timezone.utc),
            dt.datetime.fromtimestamp(edge + size, dt.timezone.utc),
        )
        out.append(Bucket(start=_iso(lo), end=_iso(hi), partial=edge < t0 or edge + size > t1))
        edge += size
    return out


def _parse_iso(text: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def _bucket_of(buckets: list[Bucket], first: dt.datetime | None, size: int, when: str | None) -> Bucket | None:
    moment = _parse_iso(when) if when else None
    if first is None or moment is None:
        return None
    index = int((moment - first).total_seconds() // size)
    return buckets[index] if 0 <= index < len(buckets) else None


def _bad_nodes(summary: FleetSummary, rows: list[tuple], th: Thresholds) -> None:
    per_user: dict[str, Counter] = defaultdict(Counter)  # node -> user -> jobs run
    blamed_by: dict[str, Counter] = defaultdict(Counter)  # node -> user -> jobs blamed
    causes: dict[str, Counter] = defaultdict(Counter)
    hardware: dict[str, Counter] = defaultdict(Counter)
    seen: dict[str, list[str]] = {}
    pairs = blamed_pairs = 0
    for _cluster, _job, user, nodes, when, _state, findings in rows:
        nodes = set(nodes or [])
        blamed: dict[str, set[str]] = defaultdict(set)
        parts: dict[str, set[str]] = defaultdict(set)
        for f in _roots(findings):
            for host in f["hosts"] or []:
                if host in nodes:
                    blamed[host].add(f["id"])
            for device in f["devices"] or []:
                host, _, name = device.partition(":")
                if host in nodes:
                    parts[host].add(name)
        for node, names in parts.items():
            hardware[node].update(names)
        for node in nodes:
            per_user[node][user] += 1
        for node, ids in blamed.items():
            blamed_by[node][user] += 1
            causes[node].update(ids)
            stamps = seen.setdefault(node, [when, when])
            stamps[0], stamps[1] = min(stamps[0], when), max(stamps[1], when)
        pairs += len(nodes)
        blamed_pairs += len(blamed)
    summary.nodes = len(per_user)
    summary.baseline = p0 = blamed_pairs / pairs if pairs else 0.0
    candidates = []
    for node, users in per_user.items():
        n, k = sum(users.values()), sum(blamed_by[node].values())
        if n < th.min_jobs or k < th.min_blamed or len(blamed_by[node]) < th.min_users:
            continue
        top_user, top_k = blamed_by[node].most_common(1)[0]
        p_without = binomial_sf(k - top_k, n - users[top_user], p0)
        candidates.append((node, n, k, len(users), len(blamed_by[node]), binomial_sf(k, n, p0), p_without))
    summary.nodes_tested = len(candidates)
    cut = th.alpha / max(len(candidates), 1)
    for node, n, k, users, blamed_users, p, p_without in candidates:
        low = wilson_lower(k, n)
        if p >= cut or p_without >= cut or low <= p0:
            continue
        verdict = NodeVerdict(
            node=node, jobs=n, users=users, blamed=k, blamed_users=blamed_users, rate=k / n, wilson_low=low,
            p_value=p, p_value_without_top_user=p_without, causes=_ranked(causes[node]),
            devices=_ranked(hardware[node], 8),
            first_seen=seen[node][0], last_seen=seen[node][1],
        )  # fmt: skip
        verdict.drain = drain_line(verdict)
        verdict.wilson_high = wilson_upper(k, n)
        summary.bad_nodes.append(verdict)
    summary.bad_nodes.sort(key=lambda v: (-v.wilson_low, -v.blamed, v.node))
    # The nodes that come next, for the page's chart: enough jobs to be judged, not reported.
    reported = {v.node for v in summary.bad_nodes}
    others = []
    for node, users in per_user.items():
        n, k = sum(users.values()), sum(blamed_by[node].values())
        if node not in reported and n >= th.min_jobs:
            others.append(NodeContext(node, n, k, len(users), k / n, wilson_lower(k, n), wilson_upper(k, n)))
    others.sort(key=lambda c: (-c.wilson_low, -c.blamed, c.node))
    summary.context_nodes = others[:CONTEXT_NODES]


def _ranked(counts: Counter, limit: int | None = None) -> dict[str, int]:
    """Most frequent first, ties by name: the store's row order varies between runs, the report must not."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])


def drain_line(v: NodeVerdict) -> str:
    """A line for a person to read and paste; quoted so no node or cause name can add a command."""
    # The causes behind most of the blame; background noise (one odd user error) is left out.
    top = ", ".join([c for c, n in v.causes.items() if n * 4 >= v.blamed][:3] or list(v.causes)[:1])
    # The device most often named, when it accounts for a good part of the blame: where to look first.
    part = next((f" ({d})" for d, n in v.devices.items() if n * 4 >= v.blamed), "")
    reason = (
        f"slurmdiag: {top}{part} in {v.blamed}/{v.jobs} jobs, {v.blamed_users} users, since {(v.first_seen or '')[:10]}"
    )
    reason = re.sub(r"[^\w :/,.+@()-]", "_", reason)
    return f"scontrol update nodename={shlex.quote(v.node)} state=drain reason={shlex.quote(reason)}"


def _cause_counts(rows: list[tuple]) -> Counter:
    counts: Counter = Counter()
    for *_rest, findings in rows:
        counts.update({f["id"] for f in findings or [] if f["role"] == "root" and not f["explained_by"]})
    return counts


def _causes(summary: FleetSummary, rows: list[tuple], previous: list[tuple]) -> None:
    now, before = _cause_counts(rows), _cause_counts(previous)
    for cause in sorted(set(now) | set(before), key=lambda c: (-now[c], -before[c], c)):
        summary.causes.append(
            {"cause": cause, "jobs": now[cause], "previous": before[cause], "delta": now[cause] - before[cause]}
        )


# --- rendering ------------------------------------------------------------------------------------


def render(summary: FleetSummary, fmt: str) -> str:
    if fmt == "prometheus":
        return _prometheus(summary)
    if fmt == "json":
        return json.dumps(summary.to_json(), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(summary)
    if fmt == "html":
        from diag.fleet.page import render_page

        return render_page(summary)
    return _text(summary)


def _safe(text: str) -> str:
    # Node, user and cause names come from logs and Slurm: no escape sequence reaches a terminal.
    return safe_text(text)


def _text(s: FleetSummary) -> str:
    out = [
        f"Fleet {s.start} .. {s.end} (last {s.since}): {s.jobs} jobs on {s.nodes} nodes; "
        f"baseline: {s.baseline:.2%} of job-node pairs blamed by a root finding",
        "",
    ]
    if s.bad_nodes:
        out.append(f"Bad nodes ({len(s.bad_nodes)} of {s.nodes_tested} with enough support):")
        for v in s.bad_nodes:
            causes = ", ".join(f"{c} {n}" for c, n in v.causes.items())
            out.append(
                f"  {_safe(v.node)}: blamed in {v.blamed}/{v.jobs} jobs by {v.blamed_users} users "
                f"(rate {v.rate:.0%}, at least {v.wilson_low:.0%}; p={v.p_value:.2g}) — {_safe(causes)}"
            )
            if v.devices:
                out.append("      devices: " + _safe(", ".join(f"{d} {n}" for d, n in v.devices.items())))
        out += ["", "To drain them (slurmdiag drains nothing itself; check first):"]
        out += [f"  {_safe(v.drain)}" for v in s.bad_nodes]
    else:
        out.append(f"No bad node: none of {s.nodes_tested} nodes with enough support fails more than the fleet.")
    out += ["", "Root causes (jobs; this window vs the previous one):"]
    for c in s.causes[:20] or [{"cause": "(none)", "jobs": 0, "previous": 0, "delta": 0}]:
        out.append(f"  {_safe(c['cause']):<28} {c['jobs']:>6} {c['previous']:>6}  {c['delta']:+d}")
    out += ["", f"Unexplained: {s.unexplained} of {s.failed} failed jobs ({s.unexplained_share:.0%})"]
    return "\n".join(out) + "\n"


def _md_cell(text: str) -> str:
    return _safe(text).replace("|", "\\|").replace("`", "'")


def _markdown(s: FleetSummary) -> str:
    out = [
        f"# Fleet report, last {s.since}",
        "",
        f"{s.start} .. {s.end}: **{s.jobs}** jobs on **{s.nodes}** nodes; baseline {s.baseline:.2%} of job-node pairs "
        "blamed by a root finding.",
        "",
        "## Bad nodes",
        "",
    ]
    if s.bad_nodes:
        out += ["| node | blamed / jobs | users | rate (lower bound) | p | causes |", "|---|---|---|---|---|---|"]
        for v in s.bad_nodes:
            causes = ", ".join(f"{c} {n}" for c, n in v.causes.items())
            out.append(
                f"| {_md_cell(v.node)} | {v.blamed}/{v.jobs} | {v.blamed_users} | {v.rate:.0%} ({v.wilson_low:.0%}) "
                f"| {v.p_value:.2g} | {_md_cell(causes)} |"
            )
        out += ["", "Drain suggestions (nothing was drained):", "", "```sh"]
        out += [_safe(v.drain) for v in s.bad_nodes]
        out.append("```")
    else:
        out.append(f"None: no node among {s.nodes_tested} with enough support fails more than the fleet.")
    out += ["", "## Root causes", "", "| cause | jobs | previous window | change |", "|---|---|---|---|"]
    out += [f"| {_md_cell(c['cause'])} | {c['jobs']} | {c['previous']} | {c['delta']:+d} |" for c in s.causes]
    out += ["", f"Unexplained: **{s.unexplained}** of {s.failed} failed jobs ({s.unexplained_share:.0%})."]
    return "\n".join(out) + "\n"


def _prometheus(s: FleetSummary) -> str:
    """A textfile for node_exporter: the bad nodes and the cause counts of the window, for Grafana."""

    def series(name: str, value: float, **labels: str) -> str:
        inner = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
        return f"{name}{{{inner}}} {value:g}" if inner else f"{name} {value:g}"

    out = [
        "# HELP slurmdiag_fleet_node_blame_rate Share of a reported bad node's jobs a root finding blamed on it.",
        "# TYPE slurmdiag_fleet_node_blame_rate gauge",
        *[series("slurmdiag_fleet_node_blame_rate", round(v.rate, 4), node=v.node) for v in s.bad_nodes],
        "# HELP slurmdiag_fleet_node_blamed_jobs Jobs a root finding blamed on a reported bad node, by cause.",
        "# TYPE slurmdiag_fleet_node_blamed_jobs gauge",
        *[
            series("slurmdiag_fleet_node_blamed_jobs", n, node=v.node, cause=c)
            for v in s.bad_nodes
            for c, n in v.causes.items()
        ],
        "# HELP slurmdiag_fleet_cause_jobs Jobs with this root cause in the window.",
        "# TYPE slurmdiag_fleet_cause_jobs gauge",
        *[series("slurmdiag_fleet_cause_jobs", c["jobs"], cause=c["cause"]) for c in s.causes],
        "# HELP slurmdiag_fleet_baseline_rate Blamed job-node pairs over all job-node pairs in the window.",
        "# TYPE slurmdiag_fleet_baseline_rate gauge",
        series("slurmdiag_fleet_baseline_rate", round(s.baseline, 5)),
        "# HELP slurmdiag_fleet_unexplained_share Share of the window's failed jobs that no rule explains.",
        "# TYPE slurmdiag_fleet_unexplained_share gauge",
        series("slurmdiag_fleet_unexplained_share", round(s.unexplained_share, 4)),
        "# HELP slurmdiag_fleet_jobs Jobs in the window.",
        "# TYPE slurmdiag_fleet_jobs gauge",
        series("slurmdiag_fleet_jobs", s.jobs),
    ]
    return "\n".join(out) + "\n"
