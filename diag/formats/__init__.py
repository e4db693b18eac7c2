"""Every ``--format`` in one table, and what goes with an output: the job id, redaction, the webhook.

Renderers are imported when their format is asked for, so ``--version`` and a small log start
as fast as before. The library, the CLI and the epilog all pass an :class:`OutputOptions`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

CHAT_FORMATS = ("slack", "teams", "mattermost", "summary")
ONE_DOCUMENT = ("html", *CHAT_FORMATS)  # one job per output: no --per-file


class FormatError(Exception):
    """An output that cannot be made as asked (one line for the user)."""


@dataclass
class OutputOptions:
    job: str | None = None  # shown in reports and alerts; default: the report's own
    redact: bool | None = None  # None: on for chat formats and webhooks, off otherwise
    redact_hosts: bool = False
    webhook: str | None = None
    color: bool = False
    per_file: bool = False
    duration_s: float = 0.0  # scan duration, for --format prometheus
    report_url: str | None = None  # where the full report is (a URL or a path), named in alerts
    notify_on: str | None = None  # post to the webhook only with a finding this severe; None: "error"


NOTIFY_DEFAULT = "error"  # a webhook is for failures: a healthy job (or a mere warning) is not posted


Renderer = Callable[[list, OutputOptions, "int | None"], str]


def _text(reports, opts, redacted):
    from diag.formats.terminal import render_terminal

    return "\n".join(render_terminal(r, opts.color) for r in reports)


def _json(reports, opts, redacted):
    if opts.per_file or len(reports) > 1:  # one report per file, or per job of several
        return json.dumps([r.to_json() for r in reports], indent=2) + "\n"
    return json.dumps(reports[0].to_json(), indent=2) + "\n"


def _markdown(reports, opts, redacted):
    from diag.formats.markdown import render_markdown

    return "\n".join(render_markdown(r, redacted) for r in reports)


def _html(reports, opts, redacted):
    from diag.formats.html import render_html

    return render_html(reports[0], redacted)


def _chat(name: str) -> Renderer:
    def render(reports, opts, redacted):
        from diag.formats.chat import render_chat

        return render_chat(reports[0], name, redacted, opts.report_url)

    return render


def _prometheus(reports, opts, redacted):
    from diag.formats.prometheus import render_prometheus

    return render_prometheus(reports, opts.duration_s)


def _sarif(reports, opts, redacted):
    from diag.formats.sarif import render_sarif

    return render_sarif(reports)


def _junit(reports, opts, redacted):
    from diag.formats.junit import render_junit

    return render_junit(reports)


FORMATS: dict[str, Renderer] = {
    "text": _text,
    "json": _json,
    "markdown": _markdown,
    "html": _html,
    **{name: _chat(name) for name in CHAT_FORMATS},
    "prometheus": _prometheus,
    "sarif": _sarif,
    "junit": _junit,
}


def report_schema() -> dict:
    """The published JSON Schema of ``slurmdiag.report/1`` (shipped as diag/formats/report.schema.json)."""
    from pathlib import Path

    return json.loads((Path(__file__).with_name("report.schema.json")).read_text(encoding="utf-8"))


def redact_by_default(fmt: str, webhook: bool) -> bool:
    """Alerts leave the cluster, so they are redacted unless asked not to; reports kept locally are not."""
    return webhook or fmt in CHAT_FORMATS


def prepare(reports: list, fmt: str, opts: OutputOptions) -> tuple[list, int | None]:
    """Check the format fits, set the job id, and redact when asked (or by default): the reports to
    render and how many items were masked (None when redaction is off)."""
    if opts.per_file and fmt in ONE_DOCUMENT:
        raise FormatError(f"--format {fmt} describes one job; it does not go with --per-file")
    if len(reports) > 1 and fmt in ONE_DOCUMENT:
        names = ", ".join(str(r.job or "files without a job id") for r in reports)
        raise FormatError(
            f"the input holds {len(reports)} jobs ({names}); --format {fmt} describes one job: give one job's "
            "files, or --job ID to read them all as one job"
        )
    if opts.job:
        for report in reports:
            report.job = opts.job
    redact = opts.redact
    if redact is None:
        redact = opts.redact_hosts or redact_by_default(fmt, bool(opts.webhook))
    if not redact:
        return reports, None
    from diag.formats.redact import redact_report

    out, total = [], 0
    for report in reports:
        clean, n = redact_report(report, hosts=opts.redact_hosts)
        out.append(clean)
        total += n
    return out, total


def render(reports: list, fmt: str, opts: OutputOptions, redacted: int | None = None) -> str:
    return FORMATS[fmt](reports, opts, redacted)


def worth_notifying(report, notify_on: str | None) -> bool:
    """Whether ``report`` has a finding at or above ``notify_on`` (default: error)."""
    from diag.catalog.causes import severity_rank

    threshold = severity_rank(notify_on or NOTIFY_DEFAULT)
    return any(severity_rank(f.severity) >= threshold for f in report.findings)


def deliver(reports: list, fmt: str, opts: OutputOptions, redacted: int | None) -> str | None:
    """POST the alert when a webhook is set and a finding reaches ``opts.notify_on``; an error
    message (URL masked) or None."""
    url = opts.webhook
    reports = [r for r in reports if worth_notifying(r, opts.notify_on)]
    if not url or not reports:
        return None
    from diag.formats.chat import render_chat
    from diag.formats.webhook import WebhookError, infer_format, mask_url, post

    chat = fmt if fmt in ("slack", "teams", "mattermost") else infer_format(url)
    if chat is None:
        return f"cannot tell the chat platform of webhook {mask_url(url)}; give --format slack, teams or mattermost"
    try:
        for report in reports:
            post(url, render_chat(report, chat, redacted, opts.report_url).encode("utf-8"))
    except WebhookError as exc:
        return str(exc)
    return None
