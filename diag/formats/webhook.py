"""Post an alert to a chat webhook with the standard library only.

The URL is a secret (whoever has it can post to the channel): it is never printed. Messages name
it as ``scheme://host/…``. Rate limits (429, honouring Retry-After) and server errors (5xx) are
retried a bounded number of times with backoff; anything else fails at once with one line.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from diag import __version__

ENV_VAR = "SLURMDIAG_WEBHOOK"
TIMEOUT_S = 10.0
ATTEMPTS = 4
BACKOFF_S = 1.0
MAX_WAIT_S = 30.0  # never sleep longer than this for one Retry-After


class WebhookError(Exception):
    """One line, safe to print: never contains the URL's path or query."""


@dataclass
class Delivery:
    status: int
    attempts: int


def mask_url(url: str) -> str:
    """``https://hooks.slack.com/services/T0/B0/xyz`` -> ``https://hooks.slack.com/…``."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<webhook URL>"
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme or '?'}://{host}{port}/…"


def infer_format(url: str) -> str | None:
    """The chat platform a webhook URL belongs to, from its host (and Mattermost's /hooks/ path)."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == "hooks.slack.com" or host.endswith(".slack.com"):
        return "slack"
    if host.endswith((".webhook.office.com", ".logic.azure.com", ".powerautomate.com", ".powerplatform.com")):
        return "teams"
    if "/hooks/" in parts.path:
        return "mattermost"
    return None


def _retry_after(value: str | None, fallback: float) -> float:
    if not value:
        return fallback
    try:
        return max(0.0, min(float(value), MAX_WAIT_S))
    except ValueError:
        return fallback  # an HTTP date: rare for webhooks, use our own backoff


def post(
    url: str,
    body: bytes,
    *,
    timeout: float = TIMEOUT_S,
    attempts: int = ATTEMPTS,
    backoff: float = BACKOFF_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """POST ``body`` (JSON) to ``url``. Returns on a 2xx; raises :class:`WebhookError` otherwise."""
    where = mask_url(url)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise WebhookError(f"webhook URL must be http(s)://host/...: got {where}")
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json; charset=utf-8", "User-Agent": f"slurmdiag/{__version__}"},
    )
    try:
        return _attempts(request, where, timeout, attempts, backoff, sleep)
    except WebhookError as exc:
        # Belt and braces: whatever a server or the OS put in the message, the URL's secret part goes.
        message = str(exc).replace(url, where)
        if parts.path not in ("", "/"):
            message = message.replace(parts.path, "/…")
        if parts.query:
            message = message.replace(parts.query, "…")
        raise WebhookError(message) from None


def _attempts(request, where: str, timeout: float, attempts: int, backoff: float, sleep) -> Delivery:
    last = ""
    for attempt in range(1, attempts + 1):
        wait = backoff * (2 ** (attempt - 1))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - http(s) checked above
                resp.read(65536)
                return Delivery(resp.status, attempt)
        except urllib.error.HTTPError as exc:
            detail = _short(exc.read(300))
            exc.close()
            last = f"HTTP {exc.code}{': ' + detail if detail else ''}"
            if exc.code == 429:
                wait = _retry_after(exc.headers.get("Retry-After"), wait)
            elif exc.code < 500:
                raise WebhookError(f"webhook {where} refused the message: {last}") from None
        except TimeoutError:
            last = f"no answer within {timeout:g}s"
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                last = f"no answer within {timeout:g}s"
            else:
                raise WebhookError(f"cannot reach webhook {where}: {_reason(reason)}") from None
        except (ConnectionError, OSError) as exc:
            last = _reason(exc)
        if attempt < attempts:
            sleep(wait)
    raise WebhookError(f"webhook {where} failed after {attempts} attempt(s): {last}")


def _short(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip().splitlines()
    return text[0][:120] if text else ""


def _reason(reason: object) -> str:
    # Exceptions from urllib can repeat the URL; keep only what cannot contain it.
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    if isinstance(reason, socket.gaierror):
        return "host name not found"
    return type(reason).__name__ if not isinstance(reason, str) else reason[:120]
