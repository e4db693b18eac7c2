"""The installed command as a user runs it: exit codes, stdout/stderr discipline, safe output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import CORPUS

HEALTHY = CORPUS / "syn-healthy-ib-gdr"
BROKEN = CORPUS / "syn-ib-not-mounted-one-node"


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diag", *args], input=stdin, capture_output=True, timeout=120, env=env)


def test_exit_codes_follow_findings_and_fail_on():
    assert run(str(HEALTHY)).returncode == 0
    assert run(str(BROKEN)).returncode == 1
    assert run(str(BROKEN), "--fail-on", "critical").returncode == 0
    assert run(str(BROKEN), "--fail-on", "never").returncode == 0


def test_json_is_alone_on_stdout_and_follows_the_schema():
    proc = run(str(BROKEN), "--format", "json")
    report = json.loads(proc.stdout)
    assert report["schema"] == "slurmdiag.report/1"
    top = report["findings"][0]
    assert top["id"] == "ib-devices-not-mounted"
    assert "slinky-2" in top["hosts"]
    for key in ("id", "title", "severity", "role", "confidence", "explains", "hosts", "ranks", "evidence",
                "remediation", "settings", "references"):  # fmt: skip
        assert key in top
    assert top["evidence"][0]["path"].endswith((".out", ".err"))
    assert isinstance(top["evidence"][0]["line"], int)
    assert "--container-mounts=/dev/infiniband:/dev/infiniband" in top["settings"]
    assert top["explains"] == ["nccl-tcp-fallback"]
    folded = report["findings"][1]
    assert folded["id"] == "nccl-tcp-fallback" and folded["explained_by"] == "ib-devices-not-mounted"
    assert report["inputs"] and report["inputs"][0]["lines"] > 0


def test_missing_input_is_one_line_and_others_still_diagnosed(tmp_path):
    proc = run(str(tmp_path / "nope.err"), str(BROKEN), "--format", "json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["findings"]
    err = proc.stderr.decode().strip().splitlines()
    assert err == [f"slurmdiag: {tmp_path / 'nope.err'}: no such file or directory"]


def test_nothing_readable_exits_2(tmp_path):
    proc = run(str(tmp_path / "nope.err"))
    assert proc.returncode == 2
    assert b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_stdin_is_read_with_dash():
    data = (BROKEN / "train-48213.out").read_bytes() if (BROKEN / "train-48213.out").exists() else None
    if data is None:
        data = b"".join(p.read_bytes() for p in sorted(BROKEN.iterdir()) if p.name != "expected.yaml")
    proc = run("-", "--format", "json", stdin=data)
    assert json.loads(proc.stdout)["findings"][0]["id"] == "ib-devices-not-mounted"


def test_log_text_cannot_inject_escapes_or_markup(tmp_path):
    evil = tmp_path / "evil.err"
    evil.write_bytes(
        b"[bold red]pwned[/bold red] \x1b]0;title\x07 \x1b[2J\n"
        b"[rank0]: ValueError: [link=http://x]click[/link] \x1b[31mred\x9b\n"
    )
    proc = run(str(evil), "--color")
    out = proc.stdout.decode()
    assert "[link=http://x]click[/link]" in out  # printed as text, not interpreted
    assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\x9b" not in out
    plain = run(str(evil), "--no-color").stdout.decode()
    assert "\x1b" not in plain


def test_bad_rule_file_is_one_clear_line(tmp_path):
    (tmp_path / "x-bad.yaml").write_text(
        "id: x-bad\ntitle: t\nseverity: error\nrole: root\ndescription: d\nremediation: r\n"
        "signatures:\n  - name: s\n    regex: 'foo('\nexamples:\n  match: ['foo(']\n"
    )
    proc = run(str(HEALTHY), "--rules", str(tmp_path))
    assert proc.returncode == 2
    msg = proc.stderr.decode().strip()
    assert len(msg.splitlines()) == 1
    assert "x-bad.yaml" in msg and "rule 'x-bad'" in msg and "signatures[0].regex" in msg


def test_user_rules_and_disable(tmp_path):
    (tmp_path / "x-gpu-fan.yaml").write_text(
        "id: x-gpu-fan\ntitle: GPU fan failure reported\nseverity: error\nrole: root\n"
        "description: the health check saw a dead fan\nremediation: drain {node}\n"
        "signatures:\n  - name: fan\n    regex: 'FAN FAILURE on (?P<node>\\S+)'\n"
        "examples:\n  match: ['FAN FAILURE on slinky-3']\n  no_match: ['fan ok']\n"
    )
    log = tmp_path / "job.out"
    log.write_text("hello\nFAN FAILURE on slinky-3\n")
    report = json.loads(run(str(log), "--rules", str(tmp_path), "--format", "json").stdout)
    assert report["findings"][0]["id"] == "x-gpu-fan"
    assert report["findings"][0]["remediation"] == "drain slinky-3"
    off = json.loads(run(str(log), "--rules", str(tmp_path), "--disable", "x-gpu-fan", "--format", "json").stdout)
    assert not off["findings"]


def test_per_file_gives_one_report_per_file():
    files = sorted(str(p) for p in BROKEN.iterdir() if p.name != "expected.yaml")
    reports = json.loads(run(*files, "--per-file", "--format", "json").stdout)
    assert len(reports) == len(files)


def test_markdown_report_has_findings_and_fix():
    md = run(str(BROKEN), "--format", "markdown").stdout.decode()
    assert md.startswith("## slurmdiag post-mortem")
    assert "ib-devices-not-mounted" in md and "--container-mounts=/dev/infiniband:/dev/infiniband" in md


def test_rules_and_explain_commands():
    listing = run("rules").stdout.decode()
    assert "ib-devices-not-mounted" in listing and "pmix-plugin-missing" in listing
    page = run("explain", "nccl-ib-hca-wrong").stdout.decode()
    assert "NCCL_IB_HCA" in page and "Matches, for example" in page
    assert run("explain", "no-such-id").returncode == 2


def test_version():
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("slurmdiag ")


def test_readme_cause_table_is_generated_from_the_rules():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = run("rules", "--format", "markdown").stdout.decode()
    assert table.strip() in readme, "README's cause table is stale: regenerate with `slurmdiag rules --format markdown`"


def test_engine_choice_does_not_change_the_report():
    reports = [
        json.loads(run(str(BROKEN), "--format", "json", "--engine", engine).stdout)["findings"]
        for engine in ("auto", "python")
    ]
    assert reports[0] == reports[1]
    assert run(str(BROKEN), "--engine", "warp-drive").returncode == 2


def test_expect_busbw_flags_a_slow_fabric():
    case = CORPUS / "near-busbw-low-expect-busbw-ok"
    files = sorted(str(p) for p in case.iterdir() if p.name != "expected.yaml")
    strict = json.loads(run(*files, "--format", "json", "--expect-busbw", "400").stdout)
    assert "busbw-low" in [f["id"] for f in strict["findings"]]
    lenient = json.loads(run(*files, "--format", "json", "--expect-busbw", "1").stdout)
    assert "busbw-low" not in [f["id"] for f in lenient["findings"]]


def test_exported_patterns_find_every_rule_example_as_a_byte_tool_would():
    """`rules --export-patterns` feeds rg/grep (the bench baseline, users' own pre-filters): ASCII only,
    each rule's example lines found, and no pattern that matches any line at all."""
    import re

    from diag.catalog.load import load_rules

    exported = run("rules", "--export-patterns").stdout.decode("ascii").splitlines()
    # `^` anchors at the payload after the launcher/NCCL prefixes; a raw-line tool drops it (as bench/ does)
    compiled = [re.compile(p.removeprefix("^").encode()) for p in exported]
    assert not any(c.search(b"step 1200 loss 2.31 lr 3e-4") for c in compiled)
    for rule in load_rules().rules:
        for line in rule.examples_match:
            assert any(c.search(line.encode()) for c in compiled), (rule.id, line)
