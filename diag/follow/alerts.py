"""Early alerts of ``slurmdiag follow``: once per cause and host, rate-limited, to the terminal,
a command (``--exec``, the finding's JSON on stdin) and a chat webhook."""

from __future__ import annotations

import json
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from diag.catalog.causes import alerts_while_running, severity_rank
from diag.catalog.model import RuleSet
from diag.diagnosis.cues import CUE_ASSUMED
from diag.formats.safe import safe_text
from diag.report import Finding, Report
from diag.scan.facts import Facts

EXEC_TIMEOUT_S = 30
NO_HOST = ""


@dataclass
class Alert:
    finding: Finding
    hosts: list[str]  # the hosts this alert is the first for ([] : the finding names none)
    elapsed_s: float  # since following began

    def to_json(self, job: str | None) -> dict:
        return {"schema": "slurmdiag.alert/1", "job": job, "new_hosts": self.hosts, "finding": self.finding.to_json()}


@dataclass
class AlertPolicy:
    """Which findings alert while the job runs, and how often."""

    rules: RuleSet
    min_severity: str = "error"
    max_per_minute: int = 6  # beyond: held back, sent when the window has room (never dropped)
    clock: Callable[[], float] = time.monotonic
    sent: set[tuple[str, str]] = field(default_factory=set)  # (cause, host)
    _times: deque = field(default_factory=deque)

    def early(self, finding: Finding) -> bool:
        rule = self.rules.by_id().get(finding.id)
        follow = rule.follow if rule is not None else None
        return (
            finding.role == "root"
            and finding.explained_by is None
            and CUE_ASSUMED not in finding.assumed  # named by words only: the report says so, an alert would not
            and severity_rank(finding.severity) >= severity_rank(self.min_severity)
            and alerts_while_running(finding.id, finding.role, follow)
        )

    def select(self, findings: list[Finding], started: float) -> list[Alert]:
        """The alerts to send now for ``findings``: causes/hosts not alerted yet, within the rate."""
        now = self.clock()
        while self._times and now - self._times[0] >= 60:
            self._times.popleft()
        out = []
        for finding in findings:
            if not self.early(finding):
                continue
            hosts = finding.hosts or [NO_HOST]
            new = [h for h in hosts if (finding.id, h) not in self.sent]
            if not new or len(self._times) >= self.max_per_minute:
                continue
            self._times.append(now)
            self.sent.update((finding.id, h) for h in new)
            out.append(Alert(finding, [h for h in new if h != NO_HOST], now - started))
        return out


def alert_line(alert: Alert, job: str | None) -> str:
    """One terminal line; log-derived text made safe (no escape sequences reach the terminal)."""
    f = alert.finding
    where = f" on {', '.join(alert.hosts[:4])}{' …' if len(alert.hosts) > 4 else ''}" if alert.hosts else ""
    ev = f.evidence[0] if f.evidence else None
    at = f" ({ev.path}:{ev.line})" if ev else ""
    name = f"job {job}: " if job else ""
    text = f"slurmdiag follow: {name}+{alert.elapsed_s:.0f}s {f.severity.upper()} {f.id}{where}: {f.title}{at}"
    return safe_text(text)


def run_exec(command: str, alert: Alert, job: str | None) -> str | None:
    """Run ``command`` (a shell line) with the alert's JSON on stdin; an error message or None."""
    try:
        done = subprocess.run(
            command,
            shell=True,
            input=json.dumps(alert.to_json(job)).encode(),
            timeout=EXEC_TIMEOUT_S,
            stdout=2,
            check=False,
        )  # fmt: skip  (fd 2: stdout is the report)
    except subprocess.TimeoutExpired:
        return f"--exec command ran over {EXEC_TIMEOUT_S} s"
    except OSError as exc:
        return f"--exec command could not start: {exc}"
    return None if done.returncode == 0 else f"--exec command exited {done.returncode}"


def post_webhook(url: str, alert: Alert, job: str | None) -> str | None:
    """POST the alert as a chat message (redacted, as every webhook); an error message or None."""
    from diag.formats import OutputOptions, deliver, prepare

    report = Report(findings=[alert.finding], inputs=[], facts=Facts(), job=job)
    opts = OutputOptions(job=job, webhook=url, notify_on="info")  # the alert policy already chose
    reports, redacted = prepare([report], "summary", opts)
    return deliver(reports, "summary", opts, redacted)
