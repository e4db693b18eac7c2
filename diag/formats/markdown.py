"""Markdown report: a full post-mortem a person pastes into a ticket or a wiki page.

Job summary, ranked findings with evidence and fix, per-node facts (the odd node marked), the
timeline of first failures, and the settings the job ran with as far as the logs show.
"""

from __future__ import annotations

import os

from diag.formats import postmortem
from diag.formats.postmortem import Event, PostMortem
from diag.formats.safe import safe_text
from diag.report import Finding, Report, where

MAX_NODES = 64
STATUS_MARK = {"culprit": "✖ ", "odd": "⚠ ", "ok": ""}


def _cell(text: str) -> str:
    return safe_text(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    text = safe_text(text).replace("`", "'")
    return f"`{text}`"


def _when(ev: Event | None) -> str:
    if ev is None:
        return "-"
    return ev.when.label if ev.when else f"{safe_text(os.path.basename(ev.path))}:{ev.line}"


def _finding(f: Finding, level: str, n: int | None) -> list[str]:
    num = f"{n}. " if n is not None else ""
    lead = "caused by the above: " if f.explained_by else ""
    out = [f"{level} {num}{lead}{f.severity.upper()}: {f.title}", ""]
    out.append(f"- **id**: `{f.id}` ({f.role}, confidence {f.confidence:.2f})")
    loc = where(f)
    if loc:
        out.append(f"- **where**: {safe_text(loc)}")
    out.append(f"- **what**: {safe_text(f.detail)}")
    if f.assumed:
        out.append(f"- **assumed**: {safe_text('; '.join(f.assumed))}")
    if f.explained_by:
        out.append(f"- **caused by**: `{f.explained_by}`")
    out.append(f"- **fix**: {safe_text(f.remediation)}")
    if f.settings:
        out.append("- **settings**: " + ", ".join(_code(s) for s in f.settings))
    if f.references:
        out.append("- **references**: " + ", ".join(f"<{r}>" for r in f.references))
    if f.evidence:
        shown = f.evidence[:10]
        more = max(len(f.evidence), f.count) - len(shown)
        out += ["", "```text"]
        out += [f"{safe_text(e.path)}:{e.line}: {safe_text(e.text.strip())}".replace("```", "'''") for e in shown]
        out += ["```"]
        if more > 0:
            out.append(f"… {more} more matching line(s)")
    out.append("")
    return out


def _summary(pm: PostMortem) -> list[str]:
    report, facts = pm.report, pm.report.facts
    rows: list[tuple[str, str]] = []
    if report.job:
        rows.append(("job", safe_text(report.job)))
    from diag.formats.safe import slurm_fields

    rows += slurm_fields(report)
    hosts = sorted(facts.hosts)
    nodes = str(facts.node_count() or "unknown")
    if hosts:
        nodes += " (" + ", ".join(hosts[:8]) + (" …" if len(hosts) > 8 else "") + ")"
    rows.append(("nodes", nodes))
    rows.append(("ranks", str(facts.max_nranks or "unknown")))
    if facts.versions:
        rows.append(("NCCL", ", ".join(sorted(facts.versions))))
    if pm.networks:
        rows.append(("network", "; ".join(f"{net} on {', '.join(h[:6])}{' …' if len(h) > 6 else ''}"
                                          for net, h in pm.networks)))  # fmt: skip
    span = pm.span_label()
    if span:
        rows.append(("events seen", span))
    lines = sum(i.lines for i in report.inputs)
    rows.append(("read", f"{len(report.inputs)} file(s), {lines:,} lines"))
    if pm.redacted is not None:
        rows.append(("redacted", f"{pm.redacted} item(s) masked"))
    out = ["| | |", "|---|---|"]
    out += [f"| {k} | {_cell(v)} |" for k, v in rows]
    return out + [""]


def _nodes(pm: PostMortem) -> list[str]:
    if not pm.nodes:
        return []
    out = ["### Nodes", "", "| host | network | HCAs | GDR | NCCL | ranks | settings seen | first error |"]
    out.append("|---|---|---|---|---|---|---|---|")
    for row in pm.nodes[:MAX_NODES]:
        gdr = "-" if row.gdr is None else ("yes" if row.gdr else "no")
        ranks = postmortem.ranges(row.ranks) or "-"
        env = ", ".join(f"{k}={v}" for k, v in row.env.items()) or "-"
        host = STATUS_MARK[row.status] + row.host
        out.append(
            f"| {_cell(host)} | {_cell(', '.join(row.network)) or '-'} | {_cell(', '.join(row.hcas)) or '-'} | {gdr} "
            f"| {_cell(', '.join(row.versions)) or '-'} | {ranks} | {_cell(env)} | {_cell(_when(row.first_error))} |"
        )
    if len(pm.nodes) > MAX_NODES:
        out.append(f"| … {len(pm.nodes) - MAX_NODES} more | | | | | | | |")
    notes = [r for r in pm.nodes if r.status != "ok"]
    if notes:
        out.append("")
        out += [f"- {STATUS_MARK[r.status]}**{_cell(r.host)}**: {_cell(r.why)}" for r in notes[:16]]
    return out + [""]


def _timeline(pm: PostMortem) -> list[str]:
    if not pm.first_failures:
        return []
    out = ["### Timeline of first failures", ""]
    if not postmortem.times_comparable(pm.events):
        out += ["Ordered by position in the logs (not every line carries a timestamp).", ""]
    out += ["| # | when | host | rank | finding | log line |", "|---|---|---|---|---|---|"]
    for n, ev in enumerate(pm.first_failures, 1):
        rank = "-" if ev.rank is None else str(ev.rank)
        out.append(
            f"| {n} | {_cell(ev.when.label) if ev.when else '-'} | {_cell(ev.host or '-')} | {rank} "
            f"| `{ev.finding.id}` | {_cell(ev.path)}:{ev.line} |"
        )
    return out + [""]


def _settings(pm: PostMortem) -> list[str]:
    out = ["### Settings the job ran with", ""]
    if not pm.settings:
        return out + ["The logs echo no settings (run with `NCCL_DEBUG=INFO` to see NCCL's).", ""]
    out += ["| variable | value(s) | echoed on |", "|---|---|---|"]
    for var, values, hosts in pm.settings:
        on = ", ".join(hosts[:8]) + (" …" if len(hosts) > 8 else "") if hosts else "-"
        out.append(f"| `{_cell(var)}` | {_cell(', '.join(values))} | {_cell(on)} |")
    return out + [""]


def _files(report: Report) -> list[str]:
    """Every file the report rests on, so a reader can tell a job's own logs from a neighbour's."""
    if not report.inputs:
        return []
    out = ["### Files read", ""]
    out += [f"- {_code(i.path)} ({i.lines:,} lines)" for i in report.inputs]
    return out + [""]


def render_markdown(report: Report, redacted: int | None = None) -> str:
    pm = postmortem.build(report, redacted)
    title = f"job {safe_text(report.job)}" if report.job else ", ".join(safe_text(i.path) for i in report.inputs[:3])
    out = [f"## slurmdiag post-mortem: {title}", ""]
    out.append(f"**Summary:** {safe_text(report.summary())}")
    out.append("")
    if report.slurm or report.notes:  # slurmdiag job / epilog: Slurm's record, and where it disagrees
        from diag.formats.safe import slurm_lines

        out += [f"- {line}" for line in slurm_lines(report)] + [""]
    out += _summary(pm)
    out += ["### Findings", ""]
    if not report.findings and report.unrecognised:
        out += ["No known cause found. These lines look like errors, and no rule knows them:", ""]
        out += [f"- {_code(f'{e.path}:{e.line}')}: {_code(e.text.strip()[:300])}" for e in report.unrecognised] + [""]
    elif not report.findings:
        out += ["No known problem found.", ""]
    n = 0
    for f in report.findings:
        if not f.explained_by:
            n += 1
        out += _finding(f, "#####" if f.explained_by else "####", None if f.explained_by else n)
    out += _nodes(pm)
    out += _timeline(pm)
    out += _settings(pm)
    out += _files(report)
    out += _coverage(report)
    return "\n".join(out).rstrip() + "\n"


def _coverage(report: Report) -> list[str]:
    from diag.formats.safe import coverage_lines

    lines = coverage_lines(report)
    if not lines:
        return []
    return ["### What the logs let slurmdiag check", "", *(f"- {line}" for line in lines), ""]
