"""CLI conventions a user expects from a Unix tool: the format follows the -o extension, top-level
--help shows what the default command takes and what the exit codes mean, Ctrl-C is 130, explain
forgives case and typos and completes rule ids, and `rules` speaks JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from .test_cli import BROKEN, run


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("r.json", lambda t: json.loads(t)["schema"] == "slurmdiag.report/1"),
        ("r.md", lambda t: t.startswith("## slurmdiag post-mortem")),
        ("r.html", lambda t: t.startswith("<!doctype html>")),
        ("r.sarif", lambda t: json.loads(t)["version"] == "2.1.0"),
        ("r.xml", lambda t: ET.fromstring(t).tag == "testsuites"),
        ("r.log", lambda t: t.startswith("slurmdiag: job ")),
    ],
)
def test_format_follows_the_output_extension(tmp_path, name, check):
    out = tmp_path / name
    proc = run(str(BROKEN), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert check(out.read_text())


def test_explicit_format_wins_over_the_extension(tmp_path):
    out = tmp_path / "r.html"
    run(str(BROKEN), "--format", "json", "-o", str(out))
    assert json.loads(out.read_text())["findings"]


def test_top_level_help_shows_default_options_and_exit_codes():
    text = run("--help").stdout.decode()
    for needle in ("--format", "-o, --output", "--fail-on", "--notify-on", "Exit codes", "130"):
        assert needle in text, needle


def test_ctrl_c_exits_130_without_a_traceback():
    # stdin stays open, so slurmdiag is still reading when the signal comes.
    proc = subprocess.Popen([sys.executable, "-m", "diag", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    proc.stdin.write(b"step 1 loss 2.0\n")
    proc.stdin.flush()
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"interrupted" in err


def test_explain_is_case_insensitive_and_suggests_near_misses():
    assert run("explain", "IB-Devices-Not-Mounted").returncode == 0
    proc = run("explain", "ib-device-not-mounted")
    assert proc.returncode == 2
    assert b"did you mean 'ib-devices-not-mounted'" in proc.stderr
    assert len(proc.stderr.decode().strip().splitlines()) == 1


def test_rule_ids_complete_in_the_shell():
    env = {**os.environ, "_SLURMDIAG_COMPLETE": "bash_complete", "COMP_WORDS": "slurmdiag explain nccl-ti",
           "COMP_CWORD": "2"}  # fmt: skip
    out = run(env=env).stdout.decode().split()
    assert "plain,nccl-timeout" in out and all(w.split(",", 1)[1].startswith("nccl-ti") for w in out)


def test_rules_as_json(rules):
    data = json.loads(run("rules", "--format", "json").stdout)
    assert [r["id"] for r in data] == sorted(rules.ids())
    ib = next(r for r in data if r["id"] == "ib-devices-not-mounted")
    assert ib["action"] and ib["severity"] == "error" and ib["settings"]
    assert "/dev/infiniband" in ib["cues"]  # the words that name it on an unknown error line
