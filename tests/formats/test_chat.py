"""Chat payloads, checked against the platforms' documented structure and limits for every corpus case.

Slack Block Kit (docs.slack.dev/reference/block-kit): at most 50 blocks per message; header text is
plain_text of at most 150 characters; section text at most 3000, at most 10 fields of at most 2000;
context at most 10 elements. Teams Workflows webhooks take {"type": "message", "attachments":
[{"contentType": "application/vnd.microsoft.card.adaptive", "content": <AdaptiveCard>}]}, a message
of at most ~28 KB. Mattermost incoming webhooks take text and/or Slack-style attachments (fallback
required, fields of title/value/short), a post of at most 16383 characters.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from diag.evidence import Evidence
from diag.formats.chat import build_alert, mattermost_payload, render_chat, slack_payload, summary_text, teams_payload
from diag.report import where

from ..reports import CASES, corpus_report

SLACK_BLOCK_TYPES = {"header", "section", "context", "divider", "actions", "image", "rich_text"}
ADAPTIVE_ELEMENTS = {"TextBlock", "RichTextBlock", "FactSet", "Container", "ColumnSet", "Image"}


def validate_slack(p: dict) -> None:
    assert set(p) <= {"text", "blocks", "channel", "username", "icon_emoji", "thread_ts", "unfurl_links"}
    assert isinstance(p["text"], str) and 0 < len(p["text"]) <= 40_000
    blocks = p["blocks"]
    assert 0 < len(blocks) <= 50
    for b in blocks:
        assert b["type"] in SLACK_BLOCK_TYPES
        if b["type"] == "header":
            assert b["text"]["type"] == "plain_text" and 0 < len(b["text"]["text"]) <= 150
        elif b["type"] == "section":
            assert "text" in b or "fields" in b
            if "text" in b:
                assert b["text"]["type"] in ("mrkdwn", "plain_text") and 0 < len(b["text"]["text"]) <= 3000
            for f in b.get("fields", []):
                assert f["type"] in ("mrkdwn", "plain_text") and 0 < len(f["text"]) <= 2000
            assert len(b.get("fields", [])) <= 10
        elif b["type"] == "context":
            assert 0 < len(b["elements"]) <= 10
            for el in b["elements"]:
                assert el["type"] in ("mrkdwn", "plain_text", "image") and len(el["text"]) <= 3000


def validate_teams(p: dict) -> None:
    assert len(json.dumps(p).encode()) <= 28_000
    assert p["type"] == "message" and len(p["attachments"]) == 1
    att = p["attachments"][0]
    assert att["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = att["content"]
    assert card["type"] == "AdaptiveCard" and re.fullmatch(r"1\.[0-6]", card["version"])
    assert card["$schema"].endswith("adaptive-card.json")
    for el in card["body"]:
        assert el["type"] in ADAPTIVE_ELEMENTS
        if el["type"] == "TextBlock":
            assert isinstance(el["text"], str) and el["text"]
        elif el["type"] == "RichTextBlock":
            assert el["inlines"] and all(i["type"] == "TextRun" and isinstance(i["text"], str) for i in el["inlines"])
        elif el["type"] == "FactSet":
            assert all(isinstance(f["title"], str) and isinstance(f["value"], str) for f in el["facts"])


def validate_mattermost(p: dict) -> None:
    assert len(json.dumps(p, ensure_ascii=False)) <= 16_383
    assert p.get("text") or p.get("attachments")
    for att in p.get("attachments", []):
        assert isinstance(att["fallback"], str) and att["fallback"]
        assert re.fullmatch(r"#[0-9A-Fa-f]{6}", att["color"])
        for f in att.get("fields", []):
            assert isinstance(f["title"], str) and isinstance(f["value"], str) and isinstance(f["short"], bool)


@pytest.mark.parametrize("case", CASES)
def test_every_corpus_payload_is_valid_and_says_cause_where_fix_job(case):
    report = corpus_report(case)
    alert = build_alert(report, redacted=0)
    slack, teams, mm = slack_payload(alert), teams_payload(alert), mattermost_payload(alert)
    validate_slack(slack)
    validate_teams(teams)
    validate_mattermost(mm)
    summary = summary_text(alert)
    assert len(summary.splitlines()) <= 16
    top = report.top()
    for blob in (json.dumps(slack, ensure_ascii=False), json.dumps(teams, ensure_ascii=False),
                 json.dumps(mm, ensure_ascii=False), summary):  # fmt: skip
        if report.job:
            assert report.job in blob
        if top is None:
            assert "no known problem found" in blob
            continue
        assert top.id in blob and top.severity.upper() in blob
        assert top.title.replace("<", "&lt;").replace(">", "&gt;") in blob or top.title in blob
        if where(top):
            assert where(top).split(";")[0].split(",")[0] in blob
        assert "fix" in blob.lower()


def _huge(case: str):
    """A report whose evidence and detail are far beyond every platform's limit."""
    report = corpus_report(case)
    top = report.findings[0]
    ev = [Evidence("train-1.out", i, "<!channel> ``` *bold* " + "X" * 5000, (0, i), "slinky-2") for i in range(64)]
    big = dataclasses.replace(top, evidence=ev, count=10_000, detail="D" * 20_000, remediation="R" * 9000)
    return dataclasses.replace(report, findings=[big, *report.findings[1:]])


@pytest.mark.parametrize("fmt", ["slack", "teams", "mattermost"])
def test_limits_cut_evidence_never_the_cause(fmt):
    report = _huge("syn-ib-not-mounted-one-node")
    payload = json.loads(render_chat(report, fmt))
    {"slack": validate_slack, "teams": validate_teams, "mattermost": validate_mattermost}[fmt](payload)
    blob = json.dumps(payload)
    assert "InfiniBand devices are not mounted into the container [ib-devices-not-mounted]" in blob
    assert "more matching line" in blob


def test_log_text_cannot_ping_a_slack_channel_or_break_code_blocks():
    payload = slack_payload(build_alert(_huge("syn-ib-not-mounted-one-node")))
    blob = json.dumps(payload)
    assert "<!channel>" not in blob and "&lt;!channel&gt;" in blob
    ev = next(
        b for b in payload["blocks"] if b["type"] == "section" and "Evidence" in b.get("text", {}).get("text", "")
    )
    assert ev["text"]["text"].count("```") == 2


def test_mattermost_escapes_markdown_in_log_text():
    alert = dataclasses.replace(build_alert(corpus_report("syn-ib-not-mounted-one-node")), where="on *node* @all")
    fields = {f["title"]: f["value"] for f in mattermost_payload(alert)["attachments"][0]["fields"]}
    assert fields["Where"] == "on \\*node\\* \\@all"


def test_healthy_job_says_so():
    text = render_chat(corpus_report("syn-healthy-ib-gdr"), "summary")
    assert text.startswith("✔ no known problem found")
