"""Chat alerts: the top cause in one line with its severity, where, the fix in one line and the job,
as Slack Block Kit, a Teams (Workflows) Adaptive Card, a Mattermost incoming-webhook message, or a
compact plain-text summary for any other pipe.

Each platform's documented size limits are respected by cutting evidence, never the cause. Log text
is passed in already redacted (see :mod:`diag.redact`); here it is only escaped for each platform.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace

from diag import __version__
from diag.catalog.causes import SEVERITY_MARK
from diag.formats.safe import safe_text, slurm_fields
from diag.report import Finding, Report, where

SEVERITY_HEX = {"critical": "#8B0000", "error": "#D32F2F", "warning": "#F9A825", "info": "#1976D2", "ok": "#2E7D32"}
TEAMS_COLOR = {"critical": "Attention", "error": "Attention", "warning": "Warning", "info": "Accent", "ok": "Good"}

# Documented limits (Slack Block Kit reference; Teams message size; Mattermost post size).
SLACK_MAX_BLOCKS = 50
SLACK_SECTION_TEXT = 3000
SLACK_HEADER_TEXT = 150
SLACK_FIELD_TEXT = 2000
SLACK_MAX_FIELDS = 10
SLACK_CONTEXT_ELEMENTS = 10
TEAMS_MAX_BYTES = 28_000
MATTERMOST_MAX_CHARS = 16_383
MAX_EVIDENCE = 5
EVIDENCE_LINE = 240


@dataclass
class Alert:
    """What every chat format says, in plain (already redacted, control-free) text."""

    severity: str  # a severity, or "ok"
    cause: str  # one line, never truncated
    cause_id: str | None
    where: str
    fix: str
    settings: list[str]
    job: str
    context: list[tuple[str, str]]  # (label, value): nodes, ranks, NCCL, ...
    evidence: list[str]
    more_evidence: int
    also: list[str]  # other findings, one short line each
    redacted: int | None
    what: str = ""  # what was seen (the finding's detail), one line
    first_error: str = ""  # the earliest evidence line of the top finding: file:line: text
    slurm: list[tuple[str, str]] = field(default_factory=list)  # (label, value) from Slurm's record
    notes: list[str] = field(default_factory=list)  # where Slurm and the logs disagree
    unchecked: list[str] = field(default_factory=list)  # evidence that was missing, one short line each
    report: str = ""  # where the full report is (URL or path)
    footer: str = field(default_factory=lambda: f"slurmdiag {__version__}")


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", safe_text(text)).strip()


_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.")


def _first_sentence(text: str) -> str:
    """The first whole sentence (up to its '.' or ';'), never cut inside one: a full stop in an
    abbreviation, a parenthesis or `code` does not end it. Used for rules without an ``action``."""
    text = _one_line(text)
    depth, code = 0, False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch in ".;" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            if ch == "." and text[: i + 1].rsplit(" ", 1)[-1].lower() in _ABBREVIATIONS:
                continue
            return text[:i].rstrip(" .;:") + "."
    return text


def _action(f: Finding) -> str:
    """The one-line fix an alert shows: the rule's action, else its remediation's first sentence."""
    return _one_line(f.action) if f.action else _first_sentence(f.remediation)


def _cut_words(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with one '…'."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return head.rstrip(" ,;:.") + "…"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _job_label(report: Report) -> str:
    if report.job:
        return _one_line(report.job)
    names = [os.path.basename(i.path) for i in report.inputs[:2]]
    return ", ".join(names) + (" …" if len(report.inputs) > 2 else "") if names else "unknown"


def _slurm_context(report: Report) -> list[tuple[str, str]]:
    """Who and which job: name, user, partition, state and exit code from Slurm's record."""
    keys = ("name", "user", "partition", "state", "exit_code")
    return [(label, _one_line(value)) for label, value in slurm_fields(report, keys)]


def _first_error(f: Finding) -> str:
    if not f.evidence:
        return ""
    ev = min(f.evidence, key=lambda e: e.order)  # Slurm's own record (order -1) comes first
    return _cut(f"{os.path.basename(ev.path)}:{ev.line}: {_one_line(ev.text)}", EVIDENCE_LINE)


def _unchecked(report: Report) -> list[str]:
    coverage = report.coverage
    if coverage is None:
        return []
    from diag.report import EVIDENCE_KINDS

    return [f"{len(u.causes)} cause(s) need {EVIDENCE_KINDS.get(u.missing, u.missing)}" for u in coverage.unchecked]


def build_alert(report: Report, redacted: int | None = None, report_url: str | None = None) -> Alert:
    facts = report.facts
    context = []
    if facts.node_count():
        context.append(("nodes", str(facts.node_count())))
    if facts.max_nranks:
        context.append(("ranks", str(facts.max_nranks)))
    if facts.versions:
        context.append(("NCCL", ", ".join(sorted(facts.versions))))
    top: Finding | None = report.top()
    extra = {
        "slurm": _slurm_context(report),
        "notes": [_one_line(n) for n in report.notes[:4]],
        "unchecked": _unchecked(report),
        "report": _one_line(report_url) if report_url else "",
    }
    if top is None:
        return Alert("ok", _one_line(report.summary()), None, "-", "nothing to fix", [], _job_label(report), context,
                     [], 0, [], redacted, **extra)  # fmt: skip
    evidence = [
        _cut(f"{os.path.basename(e.path)}:{e.line}: {_one_line(e.text)}", EVIDENCE_LINE)
        for e in top.evidence[:MAX_EVIDENCE]
    ]
    more = max(top.count, len(top.evidence)) - len(evidence)
    also = []
    for f in report.findings[1:]:
        rel = f" (caused by {f.explained_by})" if f.explained_by else ""
        also.append(f"{f.severity.upper()} {f.id}{rel}")
    return Alert(
        severity=top.severity,
        cause=f"{top.severity.upper()}: {_one_line(top.title)} [{top.id}]",
        cause_id=top.id,
        where=_one_line(where(top)) or "job-wide (no single node or rank named)",
        fix=_action(top),
        settings=[_one_line(s) for s in top.settings[:4]],
        job=_job_label(report),
        context=context,
        evidence=evidence,
        more_evidence=max(more, 0),
        also=also[:8],
        redacted=redacted,
        what=_cut_words(_one_line(top.detail), 300),
        first_error=_first_error(top),
        **extra,
    )


def _label(key: str) -> str:
    """Field labels in one case: "nodes" -> "Nodes" (NCCL stays NCCL)."""
    return key[:1].upper() + key[1:]


def _inline_code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _footer(a: Alert) -> str:
    bits = [a.footer]
    if a.redacted is not None:
        bits.append(f"{a.redacted} item(s) redacted")
    return " · ".join(bits)


# --- Slack -------------------------------------------------------------------------------------
def _slack_escape(text: str) -> str:
    # Slack's mrkdwn needs only these three escaped; everything else is shown as typed.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_code(lines: list[str]) -> str:
    body = "\n".join(_slack_escape(line).replace("```", "'''") for line in lines)
    return f"```{body}```"


def slack_payload(a: Alert) -> dict:
    mark = SEVERITY_MARK.get(a.severity, "✔")
    header = _cut(f"{mark} slurmdiag: job {a.job}", SLACK_HEADER_TEXT)
    cause = f"*{_slack_escape(a.cause)}*"
    main = [cause]
    if a.what:
        main.append(f"*What:* {_slack_escape(a.what)}")
    main += [f"*Where:* {_slack_escape(a.where)}", f"*Fix:* {_slack_escape(a.fix)}"]
    if a.settings:
        main.append("*Set:* " + ", ".join(_inline_code(_slack_escape(s)) for s in a.settings))
    if a.first_error:
        main.append("*First error:* " + _inline_code(_slack_escape(a.first_error)))
    if a.report:
        main.append(f"*Report:* {_slack_escape(a.report)}")
    text = "\n".join(main)
    if len(text) > SLACK_SECTION_TEXT:  # the cause stays whole; the rest gives way
        text = cause + "\n" + _cut(text[len(cause) + 1 :], SLACK_SECTION_TEXT - len(cause) - 1)
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": header, "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
    ]
    fields = [(_label(k), v) for k, v in [("job", a.job), *a.slurm, *a.context]][:SLACK_MAX_FIELDS]
    blocks.append(
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": _cut(f"*{k}*\n{_slack_escape(v)}", SLACK_FIELD_TEXT)} for k, v in fields
            ],
        }
    )
    if a.notes:
        text = "\n".join(f"*Note:* {_slack_escape(n)}" for n in a.notes)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(text, SLACK_SECTION_TEXT)}})
    if a.evidence:
        lines = list(a.evidence)
        more = a.more_evidence
        while lines and len(_slack_code(lines)) + 40 > SLACK_SECTION_TEXT:
            lines.pop()
            more += 1
        ev = "*Evidence*\n" + _slack_code(lines) + (f"\n… {more} more matching line(s)" if more else "")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": ev}})
    ctx = [_footer(a)]
    if a.unchecked:
        ctx.insert(0, "Not checked: " + "; ".join(a.unchecked))
    if a.also:
        ctx.insert(0, "Also: " + ", ".join(a.also))
    blocks.append(
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": _cut(_slack_escape(c), SLACK_SECTION_TEXT)} for c in ctx],
        }
    )
    fallback = f"{a.cause} — {a.where} — job {a.job}"
    return {"text": _slack_escape(fallback), "blocks": blocks[:SLACK_MAX_BLOCKS]}


# --- Microsoft Teams (Workflows "post to a channel when a webhook request is received") -------------
def _run(text: str, **style) -> dict:
    # TextRun content is shown verbatim (no markdown), which is what log-derived text needs.
    return {"type": "TextRun", "text": text, **style}


def teams_payload(a: Alert) -> dict:
    color = TEAMS_COLOR.get(a.severity, "Good")
    body: list[dict] = [
        {"type": "TextBlock", "text": f"slurmdiag: job {a.job}", "size": "Small", "isSubtle": True, "wrap": True},
        {"type": "RichTextBlock", "inlines": [_run(a.cause, weight="Bolder", size="Medium", color=color)]},
        {
            "type": "FactSet",
            "facts": ([{"title": "What", "value": a.what}] if a.what else [])
            + [{"title": "Where", "value": a.where}, {"title": "Fix", "value": a.fix}]
            + [{"title": "Set", "value": s} for s in a.settings]
            + ([{"title": "First error", "value": a.first_error}] if a.first_error else [])
            + [{"title": "Job", "value": a.job}]
            + [{"title": _label(k), "value": v} for k, v in [*a.slurm, *a.context]]
            + [{"title": "Note", "value": n} for n in a.notes]
            + ([{"title": "Report", "value": a.report}] if a.report else []),
        },
    ]
    if a.evidence:
        inlines = [_run(line + "\n", fontType="Monospace", size="Small") for line in a.evidence]
        if a.more_evidence:
            inlines.append(_run(f"… {a.more_evidence} more matching line(s)", isSubtle=True, size="Small"))
        body.append({"type": "RichTextBlock", "inlines": inlines, "separator": True})
    footer = _footer(a) + (" · also: " + ", ".join(a.also) if a.also else "")
    footer += " · not checked: " + "; ".join(a.unchecked) if a.unchecked else ""
    body.append({"type": "RichTextBlock", "inlines": [_run(footer, isSubtle=True, size="Small")]})
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "msteams": {"width": "Full"},
        "body": body,
    }
    payload = {
        "type": "message",
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": card}
        ],
    }
    if len(json.dumps(payload).encode()) > TEAMS_MAX_BYTES and a.evidence:
        return teams_payload(replace(a, evidence=a.evidence[:-1], more_evidence=a.more_evidence + 1))
    return payload


# --- Mattermost --------------------------------------------------------------------------------
def _mm_code(lines: list[str]) -> str:
    return "```\n" + "\n".join(line.replace("```", "'''") for line in lines) + "\n```"


def _mm_text(text: str) -> str:
    # Mattermost renders Markdown: backslash-escape what would turn log text into formatting or links.
    return re.sub(r"([\\`*_~\[\]<>#|@])", r"\\\1", text)


def _mm_fix(text: str) -> str:
    """The fix line with its `code` spans kept as code and the prose between them escaped."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: all prose
        return _mm_text(text)
    return "".join(_mm_text(p) if i % 2 == 0 else _inline_code(p) for i, p in enumerate(parts))


def mattermost_payload(a: Alert) -> dict:
    fields = [{"short": False, "title": "What", "value": _mm_text(a.what)}] if a.what else []
    # The fix names settings: code spans keep them literal (escaping would show the backslashes).
    fields.append({"short": False, "title": "Fix", "value": _mm_fix(a.fix)})
    if a.settings:
        fields.append({"short": False, "title": "Set", "value": ", ".join(_inline_code(s) for s in a.settings)})
    if a.first_error:
        fields.append({"short": False, "title": "First error", "value": _inline_code(a.first_error)})
    fields += [
        {"short": True, "title": "Where", "value": _mm_text(a.where)},
        {"short": True, "title": "Job", "value": _mm_text(a.job)},
    ]
    fields += [{"short": True, "title": _label(k), "value": _mm_text(v)} for k, v in [*a.slurm, *a.context]]
    fields += [{"short": False, "title": "Note", "value": _mm_text(n)} for n in a.notes]
    if a.report:
        fields.append({"short": False, "title": "Report", "value": _mm_text(a.report)})
    if a.also:
        fields.append({"short": False, "title": "Also", "value": _mm_text(", ".join(a.also))})
    if a.unchecked:
        fields.append({"short": False, "title": "Not checked", "value": _mm_text("; ".join(a.unchecked))})
    attachment = {
        "fallback": f"{a.cause} — {a.where} — job {a.job}",
        "color": SEVERITY_HEX.get(a.severity, SEVERITY_HEX["ok"]),
        "title": a.cause,
        "fields": fields,
        "footer": _footer(a),
    }
    lines, more = list(a.evidence), a.more_evidence
    while True:
        text = _mm_code(lines) + (f"\n… {more} more matching line(s)" if more else "") if lines else ""
        if text:
            attachment["text"] = text
        payload = {"username": "slurmdiag", "text": f"slurmdiag: job {_mm_text(a.job)}", "attachments": [attachment]}
        if len(json.dumps(payload, ensure_ascii=False)) <= MATTERMOST_MAX_CHARS or not lines:
            return payload
        lines.pop()
        more += 1


# --- plain summary -----------------------------------------------------------------------------
SUMMARY_WIDTH = 100
SUMMARY_MAX_LINES = 16


def summary_text(a: Alert) -> str:
    """At most ~15 lines; only the cause line may be longer than the width."""
    out = [f"{SEVERITY_MARK.get(a.severity, '✔')} {a.cause}"]
    ctx = ", ".join(f"{v} {k}" if k in ("nodes", "ranks") else f"{k} {v}" for k, v in a.context)
    out.append(_cut(f"  job:   {a.job}" + (f" ({ctx})" if ctx else ""), SUMMARY_WIDTH))
    if a.slurm:
        out.append(_cut("  slurm: " + ", ".join(f"{k} {v}" for k, v in a.slurm), SUMMARY_WIDTH))
    out += [_cut(f"  note:  {n}", SUMMARY_WIDTH) for n in a.notes[:2]]
    if a.cause_id:
        if a.what:
            out.append(_cut(f"  what:  {a.what}", SUMMARY_WIDTH))
        out.append(_cut(f"  where: {a.where}", SUMMARY_WIDTH))
        out.append(f"  fix:   {a.fix}")  # whole: an action is one short line, never cut mid-sentence
        out += [_cut(f"  set:   {s}", SUMMARY_WIDTH) for s in a.settings]
        if a.first_error:
            out.append(_cut(f"  first: {a.first_error}", SUMMARY_WIDTH))
        out += [_cut(f"  log:   {line}", SUMMARY_WIDTH) for line in a.evidence[:3] if line != a.first_error]
        if a.also:
            out.append(_cut("  also:  " + ", ".join(a.also), SUMMARY_WIDTH))
    if a.unchecked:
        out.append(_cut("  not checked: " + "; ".join(a.unchecked), SUMMARY_WIDTH))
    if a.report:
        out.append(f"  report: {a.report}")
    if a.redacted is not None:
        out.append(f"  ({a.redacted} item(s) redacted)")
    while len(out) > SUMMARY_MAX_LINES and any(line.startswith("  log:") for line in out):
        out.pop(max(i for i, line in enumerate(out) if line.startswith("  log:")))  # evidence gives way first
    return "\n".join(out) + "\n"


def render_chat(report: Report, fmt: str, redacted: int | None = None, report_url: str | None = None) -> str:
    alert = build_alert(report, redacted, report_url)
    if fmt == "summary":
        return summary_text(alert)
    payload = {"slack": slack_payload, "teams": teams_payload, "mattermost": mattermost_payload}[fmt](alert)
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
