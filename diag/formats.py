"""The report formats beyond text/JSON/Markdown (HTML, chat payloads, Prometheus) and what goes with
them on the command line: ``--job``, ``--redact``, ``--redact-hosts`` and ``--webhook``.

The options store into the click context (``expose_value=False``) so the commands that share them
need no extra parameters; :func:`prepare` and :func:`deliver` read them back.
"""

from __future__ import annotations

import click

CHAT_FORMATS = ("slack", "teams", "mattermost", "summary")
EXTRA_FORMATS = ("html", *CHAT_FORMATS, "prometheus")
ONE_DOCUMENT = ("html", *CHAT_FORMATS)  # one job per output: no --per-file
_META = "slurmdiag.alert"


def redact_by_default(fmt: str, webhook: bool) -> bool:
    """Alerts leave the cluster, so they are redacted unless asked not to; reports kept locally are not."""
    return webhook or fmt in CHAT_FORMATS


def _store(ctx: click.Context, param: click.Parameter, value):
    ctx.meta.setdefault(_META, {})[param.name] = value
    return value


def job_option(fn):
    return click.option("--job", "job", metavar="ID", expose_value=False, callback=_store,
                        help="Job id shown in reports and alerts (default: from file names like slurm-12345.out).")(fn)  # fmt: skip


def alert_options(fn):
    options = (
        click.option("--redact/--no-redact", "redact", default=None, expose_value=False, callback=_store,
                     help="Mask tokens, keys and e-mail addresses in log text (default: on for chat formats and "
                          "--webhook, off otherwise)."),
        click.option("--redact-hosts", "redact_hosts", is_flag=True, expose_value=False, callback=_store,
                     help="Also mask host names and IP addresses (implies --redact)."),
        click.option("--webhook", "webhook", metavar="URL", envvar="SLURMDIAG_WEBHOOK", expose_value=False,
                     callback=_store, help="POST the alert to this Slack/Teams/Mattermost webhook (a secret: "
                                           "prefer $SLURMDIAG_WEBHOOK; never printed)."),
    )  # fmt: skip
    for option in reversed(options):
        fn = option(fn)
    return fn


def _opts() -> dict:
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_META, {}) if ctx else {}


def prepare(reports: list, fmt: str, per_file: bool) -> tuple[list, int | None]:
    """Fill in the job id, check the format fits, and redact when asked (or by default): the reports to
    render and how many items were masked (None when redaction is off)."""
    from diag.jobid import guess_job_id
    from diag.redact import redact_report

    opts = _opts()
    if per_file and fmt in ONE_DOCUMENT:
        raise click.UsageError(f"--format {fmt} describes one job; it does not go with --per-file")
    for report in reports:
        report.job = opts.get("job") or report.job or guess_job_id(i.path for i in report.inputs)
    redact, hosts = opts.get("redact"), bool(opts.get("redact_hosts"))
    if redact is None:
        redact = hosts or redact_by_default(fmt, bool(opts.get("webhook")))
    if not redact:
        return reports, None
    out, total = [], 0
    for report in reports:
        clean, n = redact_report(report, hosts=hosts)
        out.append(clean)
        total += n
    return out, total


def render_extra(reports: list, fmt: str, redacted: int | None = None, duration_s: float = 0.0) -> str:
    if fmt == "prometheus":
        from diag.prometheus import render_prometheus

        return render_prometheus(reports, duration_s)
    if fmt == "html":
        from diag.html import render_html

        return render_html(reports[0], redacted)
    from diag.chat import render_chat

    return render_chat(reports[0], fmt, redacted)


def deliver(reports: list, fmt: str, redacted: int | None) -> str | None:
    """POST the alert when --webhook / $SLURMDIAG_WEBHOOK is set; an error message (URL masked) or None."""
    url = _opts().get("webhook")
    if not url or not reports:
        return None
    from diag.webhook import WebhookError, infer_format, mask_url, post

    chat = fmt if fmt in ("slack", "teams", "mattermost") else infer_format(url)
    if chat is None:
        return (f"cannot tell the chat platform of webhook {mask_url(url)}; "
                "give --format slack, teams or mattermost")  # fmt: skip
    from diag.chat import render_chat

    try:
        for report in reports:
            post(url, render_chat(report, chat, redacted).encode("utf-8"))
    except WebhookError as exc:
        return str(exc)
    return None
