"""``fleet report --format html``: the summary as one self-contained page to look at, not read.

Header figures, failed jobs per root cause over time (stacked bars), the bad nodes' blame rates with
their intervals against the fleet baseline, the drain lines to paste, the cause table against the
previous window, and the unexplained share over time. One file: inline CSS and SVG (``svg.py``), no
script, no request (a Content-Security-Policy meta tag forbids any), light and dark mode from the
reader's system setting. Node, user and cause names come from logs and Slurm: every one is escaped.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from diag import __version__
from diag.fleet.svg import Bar, Interval, Point, Segment, e, intervals, share_line, stacked_bars

if TYPE_CHECKING:  # summary.render imports this module for --format html
    from diag.fleet.summary import Bucket, FleetSummary

# Distinct in light and dark mode and for the common colour-vision deficiencies (Okabe-Ito first).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#7f3c8d", "#11a579")
OTHER_COLOR = "#9aa3ad"
UNEXPLAINED_COLOR = "#6e7781"
UNEXPLAINED = "unexplained"  # not a cause id: a series key, the failed jobs no rule explains
OTHER = "other causes"
# Past this share of failed jobs without a rule, the card is marked: a rule is missing, worth mining for.
UNEXPLAINED_ALERT = 0.2

CSS = """
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;
 --bad:#c62828;--good:#2e7d32;--grid:#e3e8ee;--band:#fdecea;--code-bg:#0d1117;--code-fg:#e6edf3}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--line:#3d444d;--bg:#0d1117;
 --soft:#161b22;--bad:#ff7b72;--good:#56d364;--grid:#262c34;--band:#3a1d1d;--code-bg:#010409;--code-fg:#e6edf3}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.45rem;margin:.2em 0 .2em;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.1em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.86em}
.meta{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin:12px 0}
.card{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.card b{display:block;font-size:1.5rem;line-height:1.2}
.card span{color:var(--muted);font-size:.82rem}
.card.alert{border-left:6px solid var(--bad)}
.empty{border-left:6px solid var(--muted);background:var(--soft);padding:10px 14px;font-weight:600}
svg.chart{width:100%;height:auto;background:var(--soft);border:1px solid var(--line);border-radius:6px}
svg.chart text{font:12px system-ui,sans-serif;fill:var(--muted)}
svg.chart text.name{fill:var(--fg);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
svg.chart .grid{stroke:var(--grid);stroke-width:1}
svg.chart .axis{stroke:var(--muted);stroke-width:1}
svg.chart .baseline{stroke:var(--muted);stroke-width:1.5;stroke-dasharray:5 4}
svg.chart .baseline-label{fill:var(--fg)}
svg.chart .band{fill:var(--band)}
svg.chart .node .ci{stroke:var(--muted);stroke-width:2} svg.chart .node .dot{fill:var(--muted)}
svg.chart .node.bad .ci{stroke:var(--bad)} svg.chart .node.bad .dot{fill:var(--bad)}
svg.chart .trend{fill:none;stroke:var(--fg);stroke-width:2} svg.chart .trend-dot{fill:var(--fg)}
.legend{margin:6px 0;font-size:.85rem} .legend span{display:inline-block;margin-right:14px;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:4px}
.sw.hatch{background:repeating-linear-gradient(45deg,#6e7781 0 3px,#6e778159 3px 6px)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.up{color:var(--bad);font-weight:700} .down{color:var(--good);font-weight:700} .same{color:var(--muted)}
pre.copy{user-select:all;-webkit-user-select:all;background:var(--code-bg);color:var(--code-fg);padding:6px 10px;
 border-radius:6px;margin:0;white-space:pre-wrap;overflow-wrap:anywhere;cursor:text}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:0 24px}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
footer{color:var(--muted);font-size:.8rem;margin:24px 0 8px}
@media (max-width:640px){body{font-size:14px}main{padding:10px}}
@media print{body{font-size:11pt}main{max-width:none;padding:0}pre.copy{background:#f6f8fa;color:#000;
 border:1px solid #ccc}.scroll{overflow:visible}h2{break-after:avoid}tr,svg{break-inside:avoid}}
"""


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def bucket_label(bucket: Bucket, seconds: int) -> str:
    start = _when(bucket.start)
    if seconds >= 86400:
        return start.strftime("%b %d")
    if seconds >= 3600:
        return start.strftime("%a %H:%M")
    return start.strftime("%H:%M")


def cause_colors(s: FleetSummary) -> dict[str, str]:
    """A colour per cause of the failed jobs, the most frequent first; past the palette, one grey."""
    totals: dict[str, int] = {}
    for b in s.buckets:
        for cause, n in b.causes.items():
            totals[cause] = totals.get(cause, 0) + n
    ranked = sorted(totals, key=lambda c: (-totals[c], c))
    colors = {c: PALETTE[i] for i, c in enumerate(ranked[: len(PALETTE)])}
    colors.update({c: OTHER_COLOR for c in ranked[len(PALETTE) :]})
    return colors


def _header(s: FleetSummary) -> str:
    where = ", ".join(s.clusters) or "no cluster"
    share = f"{s.unexplained_share:.0%}" if s.failed else "–"
    failed = f"{s.failed / s.jobs:.0%} of jobs" if s.jobs else "no job"
    cards = [
        ("jobs", f"{s.jobs:,}", f"on {s.nodes:,} nodes", False),
        ("failed", f"{s.failed:,}", failed, False),
        (
            "unexplained",
            share,
            f"{s.unexplained:,} failed jobs no rule explains",
            s.failed > 0 and s.unexplained_share >= UNEXPLAINED_ALERT,
        ),
        ("bad nodes", f"{len(s.bad_nodes)}", f"of {s.nodes_tested} with enough support", bool(s.bad_nodes)),
    ]
    html_cards = "".join(
        f'<div class="card{" alert" if alert else ""}"><span>{e(name)}</span><b>{e(value)}</b><span>{e(note)}</span></div>'
        for name, value, note, alert in cards
    )
    return (
        f"<h1>Fleet report: {e(where)}</h1>"
        f'<p class="meta">{e(s.start)} .. {e(s.end)} (last {e(s.since)}); baseline {s.baseline:.2%} of job-node pairs '
        f"blamed by a root finding</p>"
        f'<div class="cards">{html_cards}</div>'
    )


def _causes_chart(s: FleetSummary, colors: dict[str, str]) -> str:
    if not s.failed:
        return '<p class="empty">No failed job in this window: nothing to plot.</p>'
    series = [c for c in colors if colors[c] != OTHER_COLOR]
    bars = []
    for b in s.buckets:
        label = bucket_label(b, s.bucket_seconds)
        segments = [Segment(c, b.causes.get(c, 0), colors[c], f"{label}: {c} {b.causes.get(c, 0)}") for c in series]
        other = sum(n for c, n in b.causes.items() if c not in series)
        segments.append(Segment(OTHER, other, OTHER_COLOR, f"{label}: other causes {other}"))
        segments.append(Segment(UNEXPLAINED, b.unexplained, UNEXPLAINED_COLOR, f"{label}: unexplained {b.unexplained}"))
        partial = " (partly outside the window)" if b.partial else ""
        tooltip = f"{b.start} .. {b.end}{partial}: {b.failed} failed of {b.jobs} jobs"
        bars.append(Bar(label, tooltip, segments, faded=b.partial))
    chart = stacked_bars(bars, "failed jobs per root cause over time", "failed jobs",
                         hatch={UNEXPLAINED: UNEXPLAINED_COLOR})  # fmt: skip
    totals = {c: sum(b.causes.get(c, 0) for b in s.buckets) for c in colors}
    legend = [f'<span><i class="sw" style="background:{colors[c]}"></i>{e(c)} {totals[c]}</span>' for c in series]
    other = sum(n for c, n in totals.items() if c not in series)
    if other:
        legend.append(f'<span><i class="sw" style="background:{OTHER_COLOR}"></i>other causes {other}</span>')
    unexplained = sum(b.unexplained for b in s.buckets)
    if unexplained:
        legend.append(f'<span><i class="sw hatch"></i>unexplained {unexplained}</span>')
    size = _size_label(s.bucket_seconds)
    note = f"One bar per {size} (UTC); a failed job counts once, under its first root cause." + (
        " Faded: partly outside the window." if any(b.partial for b in s.buckets) else ""
    )
    return f'{chart}<p class="legend">{"".join(legend)} <span class="meta">{e(note)}</span></p>'


def _size_label(seconds: int) -> str:
    for unit, name in ((604800, "week"), (86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds % unit == 0:
            count = seconds // unit
            return name if count == 1 else f"{count} {name}s"
    return f"{seconds} s"


def _nodes_chart(s: FleetSummary) -> str:
    rows = [
        Interval(v.node, v.rate, v.wilson_low, v.wilson_high, f"{v.blamed}/{v.jobs} jobs · {v.blamed_users} users",
                 f"{v.node}: blamed in {v.blamed} of {v.jobs} jobs by {v.blamed_users} users "
                 f"(rate {v.rate:.0%}, 90% interval {v.wilson_low:.0%}–{v.wilson_high:.0%})", True)
        for v in s.bad_nodes
    ]  # fmt: skip
    rows += [
        Interval(c.node, c.rate, c.wilson_low, c.wilson_high, f"{c.blamed}/{c.jobs} jobs · not reported",
                 f"{c.node}: blamed in {c.blamed} of {c.jobs} jobs (rate {c.rate:.0%}); not reported", False)
        for c in s.context_nodes
    ]  # fmt: skip
    if not rows:
        return ""
    chart = intervals(rows, s.baseline, "blame rate of each node against the fleet baseline")
    legend = (
        '<p class="meta">Dot: share of the node\'s jobs a root finding blamed on it; bar: its 90% interval '
        "(Wilson); dashed: the fleet's rate. Red: reported; grey: the next nodes by rate, for comparison. "
        "Right: blamed jobs / jobs run on it, and the users among the blamed jobs.</p>"
    )
    return chart + legend


def _drain_table(s: FleetSummary) -> str:
    if not s.bad_nodes:
        return (
            f'<p class="empty">No bad node: none of {s.nodes_tested} nodes with enough support '
            f"(≥{s.thresholds.min_jobs} jobs, ≥{s.thresholds.min_users} users) fails more than the fleet.</p>"
        )
    head = (
        "<tr><th>node</th><th>blamed / jobs</th><th>users</th><th>rate (90%)</th><th>causes · devices</th>"
        "<th>seen</th></tr>"
    )
    rows = []
    for v in s.bad_nodes:
        causes = ", ".join(f"<code>{e(c)}</code> {n}" for c, n in v.causes.items())
        devices = ", ".join(f"{d} {n}" for d, n in v.devices.items())
        devices_html = f'<br><span class="meta">{e(devices)}</span>' if devices else ""
        seen = f"{_day(v.first_seen)} .. {_day(v.last_seen)}"
        rows.append(
            f"<tr><td><code>{e(v.node)}</code></td><td class=num>{v.blamed}/{v.jobs}</td>"
            f"<td class=num>{v.blamed_users}</td>"
            f"<td class=num>{v.rate:.0%} ({v.wilson_low:.0%}–{v.wilson_high:.0%})</td>"
            f"<td>{causes}{devices_html}</td><td class=num>{e(seen)}</td></tr>"
            f'<tr class="drain"><td colspan="6"><pre class="copy">{e(v.drain)}</pre></td></tr>'
        )
    note = '<p class="meta">slurmdiag drains nothing itself: check each node, then paste its line.</p>'
    return f'{note}<div class="scroll"><table>{head}{"".join(rows)}</table></div>'


def _day(when: str | None) -> str:
    try:
        return _when(when or "").strftime("%b %d")
    except ValueError:
        return "?"


def _change(delta: int, previous: int) -> str:
    if delta > 0:
        new = " new" if previous == 0 else ""
        return f'<span class="up" title="more than the previous window">▲ +{delta}{new}</span>'
    if delta < 0:
        return f'<span class="down" title="fewer than the previous window">▼ {delta}</span>'
    return '<span class="same">= 0</span>'


def _cause_table(s: FleetSummary, colors: dict[str, str]) -> str:
    if not s.causes:
        return '<p class="empty">No root cause in this window or the previous one.</p>'
    head = "<tr><th>root cause</th><th>jobs</th><th>previous window</th><th>change</th></tr>"
    rows = []
    for c in s.causes:
        color = colors.get(c["cause"])
        if c["cause"] == "unexplained-failure":  # the chart's unexplained series (hatched)
            swatch = '<i class="sw hatch"></i>'
        else:
            swatch = f'<i class="sw" style="background:{color}"></i>' if color else '<i class="sw"></i>'
        rows.append(
            f"<tr><td>{swatch}<code>{e(c['cause'])}</code></td><td class=num>{c['jobs']}</td>"
            f"<td class=num>{c['previous']}</td><td class=num>{_change(c['delta'], c['previous'])}</td></tr>"
        )
    note = (
        '<p class="meta">Jobs with each root cause (not explained by another finding), failed or not, in this '
        "window and the one of the same length before it.</p>"
    )
    return f'{note}<div class="scroll"><table>{head}{"".join(rows)}</table></div>'


def _unexplained_chart(s: FleetSummary) -> str:
    if not s.failed:
        return '<p class="empty">No failed job in this window: no unexplained share.</p>'
    points = []
    for b in s.buckets:
        label = bucket_label(b, s.bucket_seconds)
        share = b.unexplained_share
        tip = (
            f"{label}: no failed job"
            if share is None
            else f"{label}: {b.unexplained} of {b.failed} failed jobs ({share:.0%})"
        )
        points.append(Point(label, share, tip, faded=b.partial))
    chart = share_line(points, s.unexplained_share, "share of failed jobs no rule explains, over time", width=520)
    note = (
        f"Of the failed jobs in each bucket, those no rule explains (only unexplained-failure or nothing). "
        f"Dashed: the window's share, {s.unexplained_share:.0%} ({s.unexplained} of {s.failed}). A rising line is "
        "a failure nobody has a rule for yet."
    )
    return f'{chart}<p class="meta">{e(note)}</p>'


def render_page(s: FleetSummary) -> str:
    colors = cause_colors(s)
    body = [_header(s)]
    if not s.jobs:
        body.append(
            f'<p class="empty">No job ended between {e(s.start)} and {e(s.end)}: nothing to show. '
            "Try a longer --since, or check that fleet compact ran.</p>"
        )
    body += [
        '<h2 id="causes-over-time">Failed jobs by root cause over time</h2>',
        _causes_chart(s, colors),
        # The cause table and the unexplained trend side by side: the first page shows every chart.
        '<div class="cols"><section><h2 id="causes">Root causes against the previous window</h2>',
        _cause_table(s, colors),
        '</section><section><h2 id="unexplained">Unexplained share over time</h2>',
        _unexplained_chart(s),
        "</section></div>",
        '<h2 id="bad-nodes">Bad nodes</h2>',
        _nodes_chart(s),
        _drain_table(s),
        f"<footer>slurmdiag {e(__version__)} · schema slurmdiag.fleet-report/1 · generated from the fleet store; "
        "no data leaves this file</footer>",
    ]
    title = f"slurmdiag fleet report: {', '.join(s.clusters) or 'no cluster'}, last {s.since}"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'\">"
        '<meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark">'
        f"<title>{e(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(b for b in body if b)
        + "\n</main></body></html>\n"
    )
