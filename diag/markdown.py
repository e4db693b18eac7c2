"""Markdown report: a post-mortem section a person pastes into a ticket."""

from __future__ import annotations

from diag.report import Finding, Report, where
from diag.textsafe import safe_text


def _cell(text: str) -> str:
    return safe_text(text).replace("|", "\\|")


def _code(text: str) -> str:
    text = safe_text(text).replace("`", "'")
    return f"`{text}`"


def _finding(f: Finding, level: str) -> list[str]:
    out = [f"{level} {f.severity.upper()}: {f.title}", ""]
    out.append(f"- **id**: `{f.id}` ({f.role}, confidence {f.confidence:.2f})")
    loc = where(f)
    if loc:
        out.append(f"- **where**: {safe_text(loc)}")
    out.append(f"- **what**: {safe_text(f.detail)}")
    if f.explained_by:
        out.append(f"- **caused by**: `{f.explained_by}`")
    out.append(f"- **fix**: {safe_text(f.remediation)}")
    if f.settings:
        out.append("- **settings**: " + ", ".join(_code(s) for s in f.settings))
    if f.references:
        out.append("- **references**: " + ", ".join(f"<{r}>" for r in f.references))
    if f.evidence:
        out += ["", "```text"]
        out += [f"{safe_text(e.path)}:{e.line}: {safe_text(e.text.strip())}".replace("```", "'''") for e in f.evidence]
        out += ["```"]
    out.append("")
    return out


def render_markdown(report: Report) -> str:
    facts = report.facts
    title = f"job {report.job}" if report.job else ", ".join(safe_text(i.path) for i in report.inputs[:3])
    out = [f"## slurmdiag post-mortem: {title}", ""]
    out.append(f"**Summary:** {safe_text(report.summary())}")
    out.append("")
    if report.slurm or report.notes:  # slurmdiag job / epilog: Slurm's record, and where it disagrees
        from diag.slurm_job import slurm_lines

        out += [f"- {line}" for line in slurm_lines(report)] + [""]
    out.append(f"- nodes: {facts.node_count() or 'unknown'}; ranks: {facts.max_nranks or 'unknown'}")
    if facts.versions:
        out.append(f"- NCCL: {', '.join(sorted(facts.versions))}")
    lines = sum(i.lines for i in report.inputs)
    out.append(f"- read: {len(report.inputs)} file(s), {lines:,} lines")
    out.append("")
    if facts.hosts:
        out += ["| host | network | HCAs | NCCL |", "|---|---|---|---|"]
        for name, h in sorted(facts.hosts.items())[:64]:
            nets = ", ".join(sorted(h.nets | h.channel_nets)) or "?"
            out.append(
                f"| {_cell(name)} | {_cell(nets)} | {_cell(', '.join(h.hcas)) or '-'} "
                f"| {_cell(', '.join(sorted(h.versions))) or '-'} |"
            )
        out.append("")
    if not report.findings:
        out.append("No known problem found.")
    for f in report.findings:
        out += _finding(f, "####" if f.explained_by else "###")
    return "\n".join(out).rstrip() + "\n"
