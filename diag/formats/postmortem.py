"""The post-mortem view of a report: job summary, per-node facts (with the odd node marked), the
timeline of first failures and the settings the job ran with. Markdown and HTML both render this,
so the two never disagree about which node is odd or what failed first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from diag.catalog.causes import severity_rank
from diag.report import Finding, Report

MAX_TIMELINE = 40
MAX_EVENTS = 400
_ISO = re.compile(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?$")
_GLOG = re.compile(r"^(\d\d)(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$")
_SYSLOG = re.compile(r"^([A-Z][a-z]{2}) +(\d+) (\d\d:\d\d:\d\d)$")
_MONTHS = {
    m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)
}


@dataclass(frozen=True)
class When:
    """A parsed timestamp. ``absolute`` is False for forms without a year (glog, syslog): they still
    order events within one job, but a date is never invented for display."""

    at: datetime
    absolute: bool
    label: str


def parse_time(ts: str | None) -> When | None:
    if not ts:
        return None
    ts = ts.strip()
    try:
        m = _ISO.match(ts)
        if m:
            frac = (m[3] or "0")[:6].ljust(6, "0")
            tz = m[4]
            at = datetime.fromisoformat(f"{m[1]}T{m[2]}.{frac}")
            if tz:
                at = at.replace(tzinfo=timezone.utc) if tz == "Z" else datetime.fromisoformat(f"{m[1]}T{m[2]}{tz}")
            return When(at.replace(tzinfo=None) if at.tzinfo is None else at, True, f"{m[1]} {m[2]}")
        if re.fullmatch(r"\d{9,10}(?:\.\d+)?", ts):  # UCX / epoch seconds
            at = datetime.fromtimestamp(float(ts), tz=timezone.utc).replace(tzinfo=None)
            return When(at, True, at.strftime("%Y-%m-%d %H:%M:%S") + " UTC")
        m = _GLOG.match(ts)
        if m:
            frac = (m[4] or "0")[:6].ljust(6, "0")
            at = datetime.fromisoformat(f"2000-{m[1]}-{m[2]}T{m[3]}.{frac}")
            return When(at, False, f"{m[1]}-{m[2]} {m[3]}")
        m = _SYSLOG.match(ts)
        if m and m[1] in _MONTHS:
            at = datetime.fromisoformat(f"2000-{_MONTHS[m[1]]:02d}-{int(m[2]):02d}T{m[3]}")
            return When(at, False, ts)
    except ValueError:
        return None
    return None  # dmesg seconds since boot and other relative clocks: no wall time


@dataclass
class Event:
    """One evidence line placed on the timeline."""

    index: int  # position in the report's evidence order; anchors are ev-<index>
    finding: Finding
    host: str | None
    rank: int | None
    path: str
    line: int
    text: str
    order: tuple[int, int]
    when: When | None

    @property
    def anchor(self) -> str:
        return f"ev-{self.index}"


@dataclass
class NodeRow:
    host: str
    network: list[str]
    hcas: list[str]
    gdr: bool | None
    versions: list[str]
    ranks: list[int]
    env: dict[str, str]
    first_error: Event | None
    status: str  # "culprit" (named by a root finding), "odd" (differs from the majority), "ok"
    why: str = ""


@dataclass
class PostMortem:
    report: Report
    events: list[Event]
    nodes: list[NodeRow]
    first_failures: list[Event]
    settings: list[tuple[str, list[str], list[str]]]  # (variable, values, hosts that echoed it)
    networks: list[tuple[str, list[str]]]  # (network, hosts)
    start: When | None = None
    end: When | None = None
    redacted: int | None = None
    anchors: dict[int, str] = field(default_factory=dict)  # id(Evidence) -> anchor

    @property
    def duration(self) -> timedelta | None:
        if self.start and self.end and self.start.absolute == self.end.absolute and self.end.at > self.start.at:
            return self.end.at - self.start.at
        return None

    def span_label(self) -> str | None:
        """When the failing lines were logged, as far as their timestamps say."""
        if not (self.start and self.end):
            return None
        if self.start.at == self.end.at:
            return self.start.label
        label = f"{self.start.label} → {self.end.label}"
        return label + (f" ({format_duration(self.duration)})" if self.duration is not None else "")

    def anchor_for(self, evidence) -> str | None:
        return self.anchors.get(id(evidence))


def _sort_key(ev: Event, use_time: bool) -> tuple:
    return (ev.when.at, ev.order) if use_time and ev.when else (datetime.min, ev.order)


def _events(report: Report) -> list[Event]:
    events: list[Event] = []
    for f in report.findings:
        for e in f.evidence:
            if len(events) >= MAX_EVENTS:
                return events
            events.append(
                Event(len(events), f, e.host, e.rank, e.path, e.line, e.text, e.order, parse_time(e.timestamp))
            )
    return events


def times_comparable(events: list[Event]) -> bool:
    """Order by time only when every event has a time of one kind; otherwise log order is the truth."""
    whens = [e.when for e in events]
    return bool(whens) and all(whens) and len({w.absolute for w in whens if w}) == 1


def _first_failures(events: list[Event]) -> list[Event]:
    seen: dict[tuple[str, str | None], Event] = {}
    use_time = times_comparable(events)
    for ev in sorted(events, key=lambda e: _sort_key(e, use_time)):
        key = (ev.finding.id, ev.host)
        if key not in seen:
            seen[key] = ev
    return sorted(seen.values(), key=lambda e: _sort_key(e, use_time))[:MAX_TIMELINE]


def _network(hf) -> list[str]:
    return sorted(hf.nets | hf.channel_nets)


def _nodes(report: Report, events: list[Event]) -> list[NodeRow]:
    facts = report.facts
    # A root cause that names every node (an unexplained failure, a job-wide setting) singles out none.
    all_hosts = set(facts.hosts) | {h for f in report.findings for h in f.hosts}
    culprits = {
        h for f in report.findings if f.role == "root" and severity_rank(f.severity) >= severity_rank("error")
        and len(set(f.hosts)) < len(all_hosts) for h in f.hosts
    }  # fmt: skip
    nets = Counter(tuple(_network(h)) for h in facts.hosts.values() if _network(h))
    majority, top = nets.most_common(1)[0] if nets else ((), 0)
    # A clear majority only: with two hosts that disagree, neither is "the odd one".
    clear = top > sum(nets.values()) / 2 and len(nets) > 1
    use_time = times_comparable(events)
    rows: list[NodeRow] = []
    names = sorted(set(facts.hosts) | culprits)
    for name in names:
        hf = facts.hosts.get(name)
        net = _network(hf) if hf else []
        errs = [e for e in events if e.host == name and severity_rank(e.finding.severity) >= severity_rank("warning")]
        first = min(errs, key=lambda e: _sort_key(e, use_time)) if errs else None
        status, why = "ok", ""
        if clear and net and tuple(net) != majority:
            status, why = "odd", f"uses {', '.join(net)} while most nodes use {', '.join(majority)}"
        if name in culprits:
            ids = [
                f.id for f in report.findings if f.role == "root" and name in f.hosts and len(f.hosts) < len(all_hosts)
            ]
            status, why = "culprit", ("named by " + ", ".join(ids)) + (f"; {why}" if why else "")
        rows.append(
            NodeRow(
                host=name,
                network=net,
                hcas=list(hf.hcas) if hf else [],
                gdr=(hf.gdr_channels > 0) if hf and (hf.gdr_channels or hf.plain_ib_channels) else None,
                versions=sorted(hf.versions) if hf else [],
                ranks=sorted(hf.ranks) if hf else [],
                env=dict(sorted(hf.env.items())) if hf else {},
                first_error=first,
                status=status,
                why=why,
            )
        )
    return rows


def _settings(report: Report) -> list[tuple[str, list[str], list[str]]]:
    out = []
    for var, values in sorted(report.facts.env.items()):
        hosts = sorted(name for name, hf in report.facts.hosts.items() if var in hf.env)
        out.append((var, list(values), hosts))
    return out


def build(report: Report, redacted: int | None = None) -> PostMortem:
    events = _events(report)
    by_net: dict[str, list[str]] = {}
    for name, hf in sorted(report.facts.hosts.items()):
        by_net.setdefault(", ".join(_network(hf)) or "unknown", []).append(name)
    timed = [e.when for e in events if e.when]
    start = end = None
    if timed and len({w.absolute for w in timed}) == 1:
        start, end = min(timed, key=lambda w: w.at), max(timed, key=lambda w: w.at)
    pm = PostMortem(
        report=report,
        events=events,
        nodes=_nodes(report, events),
        first_failures=_first_failures(events),
        settings=_settings(report),
        networks=sorted(by_net.items(), key=lambda kv: (-len(kv[1]), kv[0])),
        start=start,
        end=end,
        redacted=redacted,
    )
    i = 0
    for f in report.findings:
        for e in f.evidence:
            if i >= MAX_EVENTS:
                break
            pm.anchors[id(e)] = f"ev-{i}"
            i += 1
    return pm


def format_duration(d: timedelta) -> str:
    secs = int(d.total_seconds())
    if secs < 0:
        return "?"
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else (f"{m}m {s:02d}s" if m else f"{d.total_seconds():.1f}s")


def where_in_log(ev: Event) -> str:
    return f"{ev.path}:{ev.line}"


def ranges(values: list[int]) -> str:
    """0,1,2,3,7 -> "0-3,7"."""
    out, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)
