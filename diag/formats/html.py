"""HTML post-mortem: one self-contained file (inline CSS and SVG, no script, no external request),
readable on a phone and on paper.

Every log-derived string goes through ``safe_text`` then ``html.escape``: a log line containing
``<script>`` shows as text. A Content-Security-Policy meta tag forbids any load the page might
still attempt, so opening a report never contacts anything.
"""

from __future__ import annotations

import html
import os
import re

from diag import __version__
from diag.formats import postmortem
from diag.formats.postmortem import Event, PostMortem
from diag.formats.safe import coverage_lines, safe_text, slurm_fields, slurm_lines
from diag.report import Finding, Report, where

SEVERITY_COLOR = {"critical": "#8b0000", "error": "#c62828", "warning": "#b26a00", "info": "#1565c0"}
MAX_EVIDENCE_HTML = 20
MAX_ROWS_SVG = 48

CSS = """
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--bad:#c62828;--odd:#b26a00}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.45rem;margin:.2em 0 .4em;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.86em}
.banner{border-left:6px solid var(--sev);background:var(--soft);padding:10px 14px;margin:8px 0 14px;font-weight:600;
 overflow-wrap:anywhere}
.banner.ok{--sev:#2e7d32}
dl.job{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.job dt{color:var(--muted)} dl.job dd{margin:0;overflow-wrap:anywhere}
.finding{border:1px solid var(--line);border-left:6px solid var(--sev);border-radius:6px;padding:10px 14px;margin:12px 0;
 break-inside:avoid}
.finding.folded{margin:10px 0 4px 0;background:var(--soft)}
.finding h3{font-size:1.05rem;margin:0 0 6px;line-height:1.3}
.sev{display:inline-block;color:#fff;background:var(--sev);border-radius:4px;padding:0 6px;font-size:.78rem;
 font-weight:700;letter-spacing:.03em;vertical-align:2px;margin-right:6px}
.meta{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
.kv{margin:4px 0}.kv b{display:inline-block;min-width:4.5em}
.fix{background:#eef7ee;border:1px solid #b7dfb9;border-radius:6px;padding:8px 10px;margin:8px 0}
pre.copy{user-select:all;-webkit-user-select:all;background:#0d1117;color:#e6edf3;padding:6px 10px;border-radius:6px;
 margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere;cursor:text}
details{margin:6px 0} summary{cursor:pointer;color:var(--muted)}
ol.ev{margin:4px 0;padding-left:0;list-style:none}
ol.ev li{padding:2px 6px;border-bottom:1px dotted var(--line);overflow-wrap:anywhere}
ol.ev li:target{background:#fff8c5}
ol.ev a{color:var(--muted);text-decoration:none;margin-right:8px;white-space:nowrap;
 font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.8em}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)}
tr.culprit td{background:#fdecea} tr.culprit td:first-child{border-left:5px solid var(--bad);font-weight:700}
tr.odd td{background:#fff4e0} tr.odd td:first-child{border-left:5px solid var(--odd);font-weight:700}
.why{color:var(--muted);font-size:.8rem;font-weight:400;display:block}
.legend span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:4px}
svg.tl{width:100%;height:auto;background:var(--soft);border:1px solid var(--line);border-radius:6px}
svg.tl text{font:11px system-ui,sans-serif;fill:#57606a}
ul.slurm{margin:8px 0;padding-left:18px;overflow-wrap:anywhere} ul.slurm li.note{color:var(--odd);font-weight:600}
footer{color:var(--muted);font-size:.8rem;margin:24px 0 8px}
@media (max-width:640px){body{font-size:14px}main{padding:10px}dl.job{gap:2px 8px}}
@media print{body{font-size:11pt}main{max-width:none;padding:0}a{color:inherit;text-decoration:none}
 pre.copy{background:#f6f8fa;color:#000;border:1px solid #ccc}.scroll{overflow:visible}details{display:block}
 details>summary{display:none}h2{break-after:avoid}tr{break-inside:avoid}}
"""


def e(text: object) -> str:
    return html.escape(safe_text(str(text)), quote=True)


def _sev(f: Finding) -> str:
    return f'style="--sev:{SEVERITY_COLOR[f.severity]}"'


def _evidence(pm: PostMortem, f: Finding, limit: int) -> str:
    if not f.evidence:
        return ""

    def item(ev) -> str:
        anchor = pm.anchor_for(ev)
        loc = f"{os.path.basename(ev.path)}:{ev.line}"
        ident = f' id="{anchor}"' if anchor else ""
        link = (
            f'<a href="#{anchor}" title="{e(ev.path)}:{ev.line}">{e(loc)}</a>' if anchor else f"<span>{e(loc)}</span>"
        )
        return f"<li{ident}>{link}<code>{e(ev.text.strip())}</code></li>"

    shown, rest = f.evidence[:limit], f.evidence[limit:]
    total = max(f.count, len(f.evidence))
    # Lines past the limit stay in the page (folded) so every timeline dot has its anchor.
    extra = (
        f'<details><summary>{len(rest)} more line(s)</summary><ol class="ev">{"".join(map(item, rest))}</ol></details>'
        if rest
        else ""
    )
    unseen = total - len(f.evidence)
    tail = f'<p class="meta">… {unseen} more matching line(s) not kept</p>' if unseen > 0 else ""
    return (
        f"<details open><summary>evidence ({len(shown)} of {total} line(s))</summary>"
        f'<ol class="ev">{"".join(map(item, shown))}</ol>{extra}{tail}</details>'
    )


def _inline_code(text: str) -> str:
    """The rules' remediation marks commands and settings with `backticks`: code in the page. The text
    is escaped first, so a backtick pair never lets markup through."""
    escaped = e(text)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def _finding(pm: PostMortem, f: Finding, n: int | None, folded: list[Finding]) -> str:
    cls = "finding folded" if f.explained_by else "finding"
    num = f"{n}. " if n is not None else "caused by the above: "
    parts = [f'<section class="{cls}" id="f-{e(f.id)}" {_sev(f)}>']
    parts.append(f'<h3><span class="sev">{e(f.severity.upper())}</span>{e(num)}{e(f.title)}</h3>')
    parts.append(f'<div class="meta"><code>{e(f.id)}</code> · {e(f.role)} · confidence {f.confidence:.2f}</div>')
    loc = where(f)
    if loc:
        parts.append(f'<div class="kv"><b>where</b> {e(loc)}</div>')
    parts.append(f'<div class="kv"><b>what</b> {e(f.detail)}</div>')
    if f.assumed:
        parts.append(f'<div class="kv"><b>assumed</b> {e("; ".join(f.assumed))}</div>')
    if not f.explained_by:
        fix = f'<div class="fix"><b>fix</b> {_inline_code(f.remediation)}'
        fix += "".join(f'<pre class="copy">{e(s)}</pre>' for s in f.settings) + "</div>"
        parts.append(fix)
        if f.references:
            links = ", ".join(f'<a href="{e(r)}" rel="noreferrer noopener">{e(r)}</a>' for r in f.references)
            parts.append(f'<div class="meta">references: {links}</div>')
    parts.append(_evidence(pm, f, 3 if f.explained_by else MAX_EVIDENCE_HTML))
    for sub in folded:
        parts.append(_finding(pm, sub, None, []))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _findings(pm: PostMortem) -> str:
    report = pm.report
    if not report.findings:
        return '<p class="banner ok">No known problem found.</p>'
    folded: dict[str, list[Finding]] = {}
    roots = []
    ids = {f.id for f in report.findings}
    for f in report.findings:
        if f.explained_by and f.explained_by in ids:
            folded.setdefault(f.explained_by, []).append(f)
        else:
            roots.append(f)
    return "\n".join(_finding(pm, f, n, folded.get(f.id, [])) for n, f in enumerate(roots, 1))


def _job(pm: PostMortem) -> str:
    report, facts = pm.report, pm.report.facts
    rows: list[tuple[str, str]] = []
    if report.job:
        rows.append(("job", e(report.job)))
    rows += [(e(label), e(value)) for label, value in slurm_fields(report)]
    rows.append(("nodes", e(facts.node_count() or "unknown")))
    rows.append(("ranks", e(facts.max_nranks or "unknown")))
    if facts.versions:
        rows.append(("NCCL", e(", ".join(sorted(facts.versions)))))
    if pm.networks:
        rows.append(("network", "<br>".join(f"<b>{e(net)}</b> on {e(', '.join(h))}" for net, h in pm.networks[:8])))
    span = pm.span_label()
    if span:
        rows.append(("events seen", e(span)))
    lines = sum(i.lines for i in report.inputs)
    names = ", ".join(i.path for i in report.inputs[:6]) + (" …" if len(report.inputs) > 6 else "")
    rows.append(("read", e(f"{len(report.inputs)} file(s), {lines:,} lines: {names}")))
    if pm.redacted is not None:
        rows.append(("redacted", e(f"{pm.redacted} item(s) masked")))
    return '<dl class="job">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _nodes(pm: PostMortem) -> str:
    if not pm.nodes:
        return ""
    head = "<tr><th>host</th><th>network</th><th>HCAs</th><th>GDR</th><th>NCCL</th><th>ranks</th>"
    head += "<th>settings seen</th><th>first error</th></tr>"
    rows = []
    for r in pm.nodes[:256]:
        gdr = "–" if r.gdr is None else ("yes" if r.gdr else "no")
        first = "–"
        if r.first_error is not None:
            ev = r.first_error
            label = ev.when.label if ev.when else f"{os.path.basename(ev.path)}:{ev.line}"
            first = f'<a href="#{ev.anchor}">{e(label)}</a> <code>{e(ev.finding.id)}</code>'
        why = f'<span class="why">{e(r.why)}</span>' if r.why else ""
        env = "<br>".join(f"<code>{e(k)}={e(v)}</code>" for k, v in r.env.items()) or "–"
        ranks = e(postmortem.ranges(r.ranks)) or "–"
        rows.append(
            f'<tr class="{r.status}"><td>{e(r.host)}{why}</td><td>{e(", ".join(r.network)) or "–"}</td>'
            f"<td>{e(', '.join(r.hcas)) or '–'}</td><td>{gdr}</td><td>{e(', '.join(r.versions)) or '–'}</td>"
            f"<td>{ranks}</td><td>{env}</td><td>{first}</td></tr>"
        )
    legend = (
        '<p class="legend meta"><span><i class="sw" style="background:#c62828"></i>'
        'named by a root cause</span><span><i class="sw" style="background:#b26a00">'
        "</i>differs from most nodes</span></p>"
    )
    more = f'<p class="meta">… {len(pm.nodes) - 256} more nodes</p>' if len(pm.nodes) > 256 else ""
    return f'<h2 id="nodes">Nodes</h2>{legend}<div class="scroll"><table>{head}{"".join(rows)}</table></div>{more}'


def _timeline_svg(pm: PostMortem) -> str:
    events = pm.events
    if not events:
        return ""
    use_time = postmortem.times_comparable(events)
    # Every node gets a row, quiet ones too: the node whose row fills up is the one that stands out.
    rows: list[str] = [r.host for r in pm.nodes]
    for ev in events:
        key = ev.host or "(no host)"
        if key not in rows:
            rows.append(key)
    rows = sorted(rows, key=lambda h: (h == "(no host)", h))[:MAX_ROWS_SVG]
    # x: wall time when every event has one, else position in the logs (files laid end to end).
    offsets, total = [], 0
    for i in pm.report.inputs:
        offsets.append(total)
        total += max(i.lines, 1)

    def pos(ev: Event) -> float:
        if use_time and ev.when:
            return (
                ev.when.at.timestamp()
                if ev.when.absolute
                else (ev.when.at - ev.when.at.replace(month=1, day=1)).total_seconds()
            )
        idx, line = ev.order
        return (offsets[idx] if idx < len(offsets) else total) + line

    xs = [pos(ev) for ev in events]
    lo, hi = min(xs), max(xs)
    span = (hi - lo) or 1.0
    label_w, width, row_h, top = 150, 900, 26, 26
    plot_w = width - label_w - 20
    height = top + row_h * len(rows) + 30
    out = [
        f'<svg class="tl" viewBox="0 0 {width} {height}" role="img" aria-label="timeline of events per node"'
        ' xmlns="http://www.w3.org/2000/svg">'
    ]
    axis = "time" if use_time else "position in the logs"
    out.append(f'<text x="{label_w}" y="16">{e(axis)} →</text>')
    for i, host in enumerate(rows):
        y = top + row_h * i + row_h / 2
        fill = "#ffffff" if i % 2 == 0 else "#eef1f4"
        out.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="{fill}"/>')
        short = host if len(host) <= 22 else host[:21] + "…"
        out.append(f'<text x="8" y="{y + 4:.1f}">{e(short)}</text>')
    first_ids = {id(ev) for ev in pm.first_failures}
    for ev, x in sorted(zip(events, xs), key=lambda p: (p[0].finding.severity == "error", id(p[0]) in first_ids)):
        host = ev.host or "(no host)"
        if host not in rows:
            continue
        cx = label_w + (x - lo) / span * plot_w
        cy = top + row_h * rows.index(host) + row_h / 2
        color = SEVERITY_COLOR[ev.finding.severity]
        r = 6 if id(ev) in first_ids else 4
        stroke = ' stroke="#000" stroke-width="1.5"' if id(ev) in first_ids else ' fill-opacity="0.55"'
        tip = f"{ev.finding.id} · {ev.when.label + ' · ' if ev.when else ''}{os.path.basename(ev.path)}:{ev.line}"
        out.append(
            f'<a href="#{ev.anchor}"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{color}"{stroke}>'
            f"<title>{e(tip)}</title></circle></a>"
        )
    base = top + row_h * len(rows) + 16
    left = pm.start.label if use_time and pm.start else "start"
    right = pm.end.label if use_time and pm.end else "end"
    out.append(f'<text x="{label_w}" y="{base}">{e(left)}</text>')
    out.append(f'<text x="{width - 20}" y="{base}" text-anchor="end">{e(right)}</text>')
    out.append("</svg>")
    legend = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{s}</span>'
        for s, c in SEVERITY_COLOR.items()
        if any(ev.finding.severity == s for ev in events)
    )
    note = "<span>ringed dot: first failure of a finding on that node</span>"
    return f'<div class="scroll">{"".join(out)}</div><p class="legend meta">{legend}{note}</p>'


def _first_failures(pm: PostMortem) -> str:
    if not pm.first_failures:
        return ""
    rows = []
    for n, ev in enumerate(pm.first_failures, 1):
        rows.append(
            f"<tr><td>{n}</td><td>{e(ev.when.label) if ev.when else '–'}</td><td>{e(ev.host or '–')}</td>"
            f"<td>{'–' if ev.rank is None else ev.rank}</td><td><code>{e(ev.finding.id)}</code></td>"
            f'<td><a href="#{ev.anchor}">{e(os.path.basename(ev.path))}:{ev.line}</a></td></tr>'
        )
    order = "" if postmortem.times_comparable(pm.events) else '<p class="meta">Ordered by position in the logs.</p>'
    head = "<tr><th>#</th><th>when</th><th>host</th><th>rank</th><th>finding</th><th>log line</th></tr>"
    return f'{order}<div class="scroll"><table>{head}{"".join(rows)}</table></div>'


def _settings(pm: PostMortem) -> str:
    if not pm.settings:
        return '<p class="meta">The logs echo no settings (run with <code>NCCL_DEBUG=INFO</code> to see NCCL\'s).</p>'
    rows = "".join(
        f"<tr><td><code>{e(var)}</code></td><td><code>{e(', '.join(values))}</code></td>"
        f"<td>{e(', '.join(hosts[:12]) + (' …' if len(hosts) > 12 else '')) or '–'}</td></tr>"
        for var, values, hosts in pm.settings
    )
    return (
        f'<div class="scroll"><table><tr><th>variable</th><th>value(s)</th><th>echoed on</th></tr>{rows}</table></div>'
    )


def _slurm(report: Report) -> str:
    """Slurm's record and the notes where it and the logs disagree (slurmdiag job / epilog)."""
    lines = slurm_lines(report)
    if not lines:
        return ""
    items = "".join(f"<li{' class=note' if line.startswith('note') else ''}>{e(line)}</li>" for line in lines)
    return f'<ul class="slurm">{items}</ul>'


def title_of(report: Report) -> str:
    who = f"job {report.job}" if report.job else (os.path.basename(report.inputs[0].path) if report.inputs else "logs")
    return f"slurmdiag post-mortem: {who}"


def render_html(report: Report, redacted: int | None = None) -> str:
    pm = postmortem.build(report, redacted)
    top = report.top()
    sev = SEVERITY_COLOR[top.severity] if top else "#2e7d32"
    body = [
        f"<h1>{e(title_of(report))}</h1>",
        f'<p class="banner" style="--sev:{sev}">{e(report.summary())}</p>',
        _job(pm),
        _slurm(report),
        '<h2 id="findings">Findings</h2>',
        _findings(pm),
        _nodes(pm),
    ]
    if pm.events:
        body += ['<h2 id="timeline">Timeline</h2>', _timeline_svg(pm), _first_failures(pm)]
    body += ['<h2 id="settings">Settings the job ran with</h2>', _settings(pm)]
    coverage = coverage_lines(report)
    if coverage:
        body += ['<h2 id="coverage">What the logs let slurmdiag check</h2>',
                 '<ul class="meta">' + "".join(f"<li>{e(line)}</li>" for line in coverage) + "</ul>"]  # fmt: skip
    body.append(f"<footer>slurmdiag {e(__version__)} · schema slurmdiag.report/1</footer>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'\">"
        '<meta name="referrer" content="no-referrer">'
        f"<title>{e(title_of(report))}</title><style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(b for b in body if b)
        + "\n</main></body></html>\n"
    )
