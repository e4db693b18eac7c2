"""Terminal report: one block per finding. Log text is always printed as plain text."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from diag.catalog.causes import SEVERITY_MARK
from diag.formats.safe import coverage_lines, safe_text
from diag.report import Finding, Report, where

SEVERITY_STYLE = {"critical": "bold white on red", "error": "bold red", "warning": "bold yellow", "info": "cyan"}
MAX_EVIDENCE_TERMINAL = 5
MAX_FILES_TERMINAL = 20  # the header names the files read; JSON and Markdown list them all


def _header(report: Report) -> list[tuple[str, str]]:
    lines = sum(i.lines for i in report.inputs)
    files = len(report.inputs)
    facts = report.facts
    bits = [f"{files} file{'s' if files != 1 else ''}", f"{lines:,} lines"]
    if facts.node_count():
        bits.append(f"{facts.node_count()} node{'s' if facts.node_count() != 1 else ''}")
    if facts.max_nranks:
        bits.append(f"{facts.max_nranks} ranks")
    if facts.versions:
        bits.append("NCCL " + ", ".join(sorted(facts.versions)))
    head = "slurmdiag: " + (f"job {safe_text(report.job)}: " if report.job else "") + ", ".join(bits)
    return [("bold", head), *_files(report), ("", "")]


def _files(report: Report) -> list[tuple[str, str]]:
    """Which files this report rests on: a job's siblings, or one of several reports, by name."""
    paths = [i.path for i in report.inputs]
    if not paths:
        return []
    shown = ", ".join(safe_text(p) for p in paths[:MAX_FILES_TERMINAL])
    more = len(paths) - MAX_FILES_TERMINAL
    if more > 0:
        shown += f" … and {more} more (--format json or markdown lists all)"
    return [("dim", f"read: {shown}")]


def _finding_lines(f: Finding, nested: bool) -> list[tuple[str, str]]:
    pad = "    " if nested else ""
    out: list[tuple[str, str]] = []
    mark = SEVERITY_MARK[f.severity]
    label = "└─ caused by the above: " if nested else ""
    out.append(
        (
            SEVERITY_STYLE[f.severity],
            f"{pad}{label}{mark} {f.severity.upper()}  {f.title}  [{f.id}, confidence {f.confidence:.2f}]",
        )
    )
    loc = where(f)
    if loc:
        out.append(("bold", f"{pad}   where: {loc}"))
    out.append(("", f"{pad}   what:  {safe_text(f.detail)}"))
    for assumption in f.assumed:
        out.append(("yellow", f"{pad}   assumed: {safe_text(assumption)}"))
    shown = f.evidence[: (1 if nested else MAX_EVIDENCE_TERMINAL)]
    if shown:
        out.append(("dim", f"{pad}   evidence:"))
        for ev in shown:
            out.append(("dim", f"{pad}     {safe_text(ev.path)}:{ev.line}: {safe_text(ev.text.strip())[:300]}"))
        more = len(f.evidence) - len(shown)
        if more > 0 or f.count > len(shown):
            out.append(("dim", f"{pad}     … {max(more, f.count - len(shown))} more matching line(s)"))
    if not nested:
        out.append(("green", f"{pad}   fix:   {safe_text(f.remediation)}"))
        for s in f.settings:
            out.append(("green", f"{pad}   set:   {safe_text(s)}"))
    out.append(("", ""))
    return out


def report_lines(report: Report) -> list[tuple[str, str]]:
    out = _header(report)
    if report.slurm or report.notes:  # slurmdiag job / epilog: Slurm's record, and where it disagrees
        from diag.formats.safe import slurm_lines

        out += [("yellow" if line.startswith("note") else "", line) for line in slurm_lines(report)] + [("", "")]
    if not report.findings:
        if not any(i.bytes_read for i in report.inputs):
            out.append(("bold yellow", f"▲ {report.summary()}"))  # never a green check for no input
        elif report.unrecognised:  # nor for a paste whose errors no rule knows
            out.append(("bold yellow", f"? {report.summary()}:"))
            for ev in report.unrecognised:
                out.append(("dim", f"     {safe_text(ev.path)}:{ev.line}: {safe_text(ev.text.strip())[:300]}"))
            out.append(("yellow", "   if the job failed, its cause is unknown: read these first (a new rule would match them)"))
        else:
            out.append(("bold green", f"✔ {report.summary()}"))
        out.append(("", ""))
    for f in report.findings:
        out.extend(_finding_lines(f, nested=f.explained_by is not None))
    truncated = sum(i.truncated_lines for i in report.inputs)
    if truncated:
        out.append(("yellow", f"note: {truncated} over-long line(s) were cut at 64 KiB before matching"))
    # Last, where it does not push the cause off the screen; but always there, so an all-clear is read
    # as "none of the checked causes" and not as "fine".
    out += [("dim", line) for line in coverage_lines(report)]
    return out


def render_terminal(report: Report, color: bool, width: int | None = None) -> str:
    lines = report_lines(report)
    if not color:
        return "\n".join(text for _, text in lines).rstrip() + "\n"
    console = Console(color_system="standard", force_terminal=True, width=width or 120, highlight=False)
    with console.capture() as cap:
        for style, text in lines:
            console.print(Text(text, style=style), soft_wrap=True)
    return cap.get()
