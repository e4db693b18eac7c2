"""Posting alerts to a real HTTP server on 127.0.0.1 that records requests and answers as scripted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from diag.formats.webhook import WebhookError, infer_format, mask_url, post

from ..conftest import CORPUS

SECRET = "T000/B000/sEcReTpAtH"


class Hook:
    """A webhook endpoint: ``answers`` is a list of (status, headers, delay_s) consumed per request."""

    def __init__(self, answers=None):
        self.answers = list(answers or [])
        self.requests: list[dict] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hook.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, headers, delay = hook.answers.pop(0) if hook.answers else (200, {}, 0)
                if delay:
                    time.sleep(delay)
                reply = b"ok" if status < 300 else b"invalid_payload"
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, prefix: str = "/hooks/") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{prefix}{SECRET}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    servers = []

    def make(answers=None):
        servers.append(Hook(answers))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_success_posts_json_once(hook):
    h = hook()
    d = post(h.url(), b'{"text": "hi"}')
    assert d.status == 200 and d.attempts == 1
    assert h.requests[0]["path"] == f"/hooks/{SECRET}"
    assert h.requests[0]["headers"]["Content-Type"].startswith("application/json")
    assert json.loads(h.requests[0]["body"]) == {"text": "hi"}


def test_429_honours_retry_after_then_succeeds(hook):
    h = hook([(429, {"Retry-After": "2"}, 0), (503, {}, 0), (200, {}, 0)])
    slept: list[float] = []
    d = post(h.url(), b"{}", backoff=0.01, sleep=slept.append)
    assert d.attempts == 3 and len(h.requests) == 3
    assert slept == [2.0, 0.02]  # Retry-After, then exponential backoff


def test_5xx_retries_are_bounded_and_the_error_hides_the_url(hook):
    h = hook([(500, {}, 0)] * 10)
    with pytest.raises(WebhookError) as err:
        post(h.url(), b"{}", attempts=3, backoff=0.0, sleep=lambda s: None)
    assert len(h.requests) == 3
    msg = str(err.value)
    assert "HTTP 500" in msg and "3 attempt" in msg and SECRET not in msg and "sEcReT" not in msg


def test_4xx_fails_at_once_with_the_servers_reason(hook):
    h = hook([(400, {}, 0)])
    with pytest.raises(WebhookError) as err:
        post(h.url(), b"{}", sleep=lambda s: pytest.fail("no retry on 400"))
    assert "HTTP 400: invalid_payload" in str(err.value) and len(h.requests) == 1
    assert SECRET not in str(err.value)


def test_timeout_is_bounded(hook):
    h = hook([(200, {}, 3), (200, {}, 3)])
    start = time.monotonic()
    with pytest.raises(WebhookError) as err:
        post(h.url(), b"{}", timeout=0.3, attempts=2, backoff=0.0, sleep=lambda s: None)
    assert time.monotonic() - start < 2.5
    assert "no answer within 0.3s" in str(err.value)


def test_unreachable_host_is_one_clear_line(hook):
    h = hook()
    url = h.url()
    h.close()
    with pytest.raises(WebhookError) as err:
        post(url, b"{}", attempts=1)
    assert "cannot reach webhook http://127.0.0.1:" in str(err.value) and SECRET not in str(err.value)


@pytest.mark.parametrize(
    "url,fmt",
    [
        ("https://hooks.slack.com/services/T0/B0/x", "slack"),
        ("https://contoso.webhook.office.com/webhookb2/abc", "teams"),
        ("https://prod-12.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?sig=x", "teams"),
        ("https://default1.environment.api.powerplatform.com/powerautomate/automations/direct/x", "teams"),
        ("https://chat.example.org/hooks/xyz", "mattermost"),
        ("https://example.org/alert", None),
    ],
)
def test_platform_is_inferred_from_the_url(url, fmt):
    assert infer_format(url) == fmt
    assert mask_url(url).endswith("/…") and "/x" not in mask_url(url) and "sig" not in mask_url(url)


def _cli(url: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLURMDIAG_WEBHOOK": url, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    case = str(CORPUS / "syn-ib-not-mounted-one-node")
    return subprocess.run([sys.executable, "-m", "diag", case, *args], capture_output=True, env=env, timeout=60)


def test_cli_posts_from_the_environment_and_never_prints_the_url(hook):
    h = hook()
    proc = _cli(h.url(), "--no-color")
    assert proc.returncode == 1, proc.stderr  # the job's finding, posted fine
    assert len(h.requests) == 1
    payload = json.loads(h.requests[0]["body"])
    assert payload["attachments"][0]["title"].startswith("ERROR: InfiniBand devices")  # /hooks/ -> mattermost
    assert "item(s) redacted" in payload["attachments"][0]["footer"]  # redaction is on for webhooks
    assert SECRET.encode() not in proc.stdout + proc.stderr


def test_cli_webhook_failure_exits_2_with_a_masked_url(hook):
    h = hook([(404, {}, 0)])
    proc = _cli(h.url(), "--format", "slack")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.startswith("slurmdiag: error: webhook http://127.0.0.1:") and "/…" in err
    assert SECRET not in err and len(err.strip().splitlines()) == 1
    assert json.loads(h.requests[0]["body"])["blocks"], "--format slack chose the payload"


def test_cli_unknown_platform_asks_for_format(hook):
    h = hook()
    proc = _cli(h.url(prefix="/alert/"))
    assert proc.returncode == 2 and b"give --format slack, teams or mattermost" in proc.stderr
    assert not h.requests and SECRET.encode() not in proc.stderr
