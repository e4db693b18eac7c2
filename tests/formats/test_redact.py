"""Redaction: what must never leave the cluster in an alert is masked, and counted."""

from __future__ import annotations

import pytest

from diag.formats.redact import Redactor, redact_report

from ..reports import corpus_report

SECRETS = [
    ("export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEf"),
    ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567 wandb: logging in", "0123456789abcdef0123"),
    ("aws_access_key_id=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("boto: using key AKIAIOSFODNN7EXAMPLE from env", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("> Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9"),
    ('curl -H "Authorization: token ghp_0123456789abcdefghijABCDEFGHIJ012345"', "ghp_0123456789"),
    ("pushing with github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "github_pat_11ABCDEFG"),
    ("slack token xoxb-1234567890-0987654321-AbCdEfGhIjKl", "xoxb-1234567890"),
    ("MY_SERVICE_SECRET='s3cr3t value' next", "s3cr3t"),
    ("db password=hunter2 retry", "hunter2"),
    ("DATABASE_PASSWORD: 'pa ss'", "pa ss"),
    ("git clone https://alice:pw123@git.example.org/x.git", "pw123"),
    ("job owner alice.smith@example.org notified", "alice.smith@example.org"),
]


@pytest.mark.parametrize("line,secret", SECRETS)
def test_secrets_are_masked_and_counted(line, secret):
    r = Redactor()
    out = r.text(line)
    assert secret not in out
    assert r.count >= 1


@pytest.mark.parametrize(
    "line",
    [
        "slinky-2:250701:250701 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.1.2.3<0>",
        "NCCL_IB_HCA set by environment to mlx5_0,mlx5_1",
        "[rank13]: ValueError: sample 48213557 has 9217 tokens, exceeds seq_len=8192",
        "c10d::ProcessGroupNCCL watchdog 10:49:31 monkey=3 NCCL version 2.23.4",
    ],
)
def test_ordinary_log_lines_are_left_alone_without_redact_hosts(line):
    r = Redactor()
    assert r.text(line) == line and r.count == 0


def test_redact_hosts_masks_names_consistently_and_ips():
    r = Redactor(hosts=True, known_hosts=["node1", "node10", "vm"])
    out = r.text("node10 talks to node1.cluster.local at 10.0.0.17 and fe80::1; vmware vm ok; c10d::Store")
    assert "node10" not in out and "node1." not in out and "10.0.0.17" not in out and "fe80::1" not in out
    assert "vmware" in out and "c10d::Store" in out  # whole names only; C++ scopes are not IPv6
    assert out.count(r.pseudonyms["vm"]) == 1
    assert r.text("node10") == r.pseudonyms["node10"]  # stable pseudonym


def test_report_redaction_covers_every_log_derived_string():
    report = corpus_report("syn-ib-not-mounted-one-node")
    clean, n = redact_report(report, hosts=True)
    assert n > 0
    text = repr(clean.to_json())
    assert "slinky-" not in text
    assert clean.findings[0].hosts == ["[host-3]"]  # sorted names: slinky-0..3 -> host-1..4
    assert report.findings[0].hosts == ["slinky-2"], "the original report is not modified"
    # Without --redact-hosts, hosts stay: the alert still names the node.
    kept, _ = redact_report(report)
    assert kept.findings[0].hosts == ["slinky-2"]
