"""slurmdiag follow: polling a growing file gives the lines, the early alerts and, at the end, the
same diagnosis as a plain run on the finished files."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from diag.api import diagnose_paths, load_rules
from diag.cli import cli
from diag.follow import Follower, FollowOptions
from diag.follow.alerts import AlertPolicy, alert_line
from diag.follow.live import LiveScan
from diag.follow.tail import FileTail
from diag.report import Report

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
RULES = load_rules()
# One-file cases of several families (fabric, launch, container, job fate), and a healthy one.
CASES = [
    "syn-ib-not-mounted-one-node/train-48213.out",
    "real-nccl-07-socket-ifname-lo",
    "real-nccl-10-master-addr-bad",
    "real-nccl-11-port-in-use",
    "real-nccl-12-cuda-oom",
    "real-nccl-01-baseline-torchrun",
    "near-job-time-limit-scancel-2505",
]


def _one_log(case: str) -> Path:
    path = CORPUS / case
    if path.is_file():
        return path
    logs = sorted(p for p in path.iterdir() if p.suffix in (".out", ".err", ".log", ".txt"))
    return max(logs, key=lambda p: p.stat().st_size)


def _pieces(data: bytes, rng: random.Random) -> list[bytes]:
    """Random cuts, some inside lines and inside \\r\\n pairs, some tiny, some large."""
    out, i = [], 0
    while i < len(data):
        n = rng.choice((1, 7, 100, 1000, 4096, 65536))
        out.append(data[i : i + rng.randint(1, n)])
        i += len(out[-1])
    return out


def _writer(path: Path, pieces: list[bytes], pause: float = 0.0) -> threading.Thread:
    def write() -> None:
        with open(path, "ab") as fh:
            for piece in pieces:
                fh.write(piece)
                fh.flush()
                if pause:
                    time.sleep(pause)

    return threading.Thread(target=write, daemon=True)


def _live_json(live: LiveScan) -> list[dict]:
    """The findings of the live state as the report's JSON shows them (with ISO times)."""
    return Report(findings=live.findings(), inputs=live.result.inputs, facts=live.result.facts).to_json()["findings"]


def _plain(path: Path) -> dict:
    reports, _ = diagnose_paths([str(path)], RULES)
    return reports[0].to_json()


@pytest.mark.parametrize("case", CASES)
def test_incremental_scan_of_random_pieces_equals_plain_scan(case, tmp_path):
    """The live state after the last piece diagnoses the file exactly as a whole-file scan."""
    data = _one_log(case).read_bytes()
    target = tmp_path / "job-77.out"
    target.write_bytes(b"")
    tail, live = FileTail(str(target)), LiveScan(RULES)
    rng = random.Random(case)
    for piece in _pieces(data, rng):
        with open(target, "ab") as fh:
            fh.write(piece)
        if rng.random() < 0.5:  # several appends between polls, sometimes
            live.feed(str(target), tail.stats, tail.poll().block)
    live.feed(str(target), tail.stats, tail.poll().block)
    live.feed(str(target), tail.stats, tail.lines.finish())
    got = _live_json(live)
    plain = _plain(target)
    assert got == plain["findings"]
    assert tail.stats.to_json() == plain["inputs"][0]


@pytest.mark.parametrize("case", CASES[:4])
def test_follow_of_a_file_written_by_a_thread_equals_plain_run(case, tmp_path):
    data = _one_log(case).read_bytes()
    target = tmp_path / "train-4242.out"
    target.write_bytes(b"")
    writer = _writer(target, _pieces(data, random.Random(len(data))), pause=0.0005)
    alerts = []
    opts = FollowOptions(interval_s=0.02, idle_s=0.5)
    follower = Follower([str(target)], RULES, opts, alerts.append)
    writer.start()
    result = follower.run()
    writer.join()
    assert target.read_bytes() == data
    assert result.ended_by == "idle"
    assert [r.to_json() for r in result.reports] == [_plain(target)]
    # every alert names a root cause of the final diagnosis that may alert early, once per cause/host
    final = {f["id"] for f in result.reports[0].to_json()["findings"]}
    keys = [(a.finding.id, h) for a in alerts for h in (a.hosts or [""])]
    assert len(keys) == len(set(keys))
    assert {a.finding.id for a in alerts} <= final


def test_early_cause_alerts_while_running_and_job_fate_waits(tmp_path):
    """ib-devices-not-mounted (fabric) alerts before the file is complete; a time limit does not."""
    log = (CORPUS / CASES[0]).read_bytes()
    target = tmp_path / "train-48213.out"
    target.write_bytes(b"")
    cut = log.index(b"NCCL INFO Using network Socket")  # well before the end of the job
    writer = _writer(target, [log[:cut], log[cut:]], pause=1.0)
    alerts, seen_size = [], []

    def on_alert(alert):
        alerts.append(alert)
        seen_size.append(target.stat().st_size)

    follower = Follower([str(target)], RULES, FollowOptions(interval_s=0.05, idle_s=1.5), on_alert)
    writer.start()
    result = follower.run()
    writer.join()
    ids = [a.finding.id for a in alerts]
    assert "ib-devices-not-mounted" in ids
    assert seen_size[ids.index("ib-devices-not-mounted")] < len(log)  # it came while the job ran
    assert "job-time-limit" not in ids
    assert "job-time-limit" in {f.id for f in result.reports[0].findings}


def test_alert_latency_is_one_poll(tmp_path):
    """From the write of the first line that shows a root cause to the alert: about one interval."""
    line = b"slinky-2:4411:4411 [0] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"
    head = b"".join(b"slinky-%d:1:1 [0] NCCL INFO comm 0x1 rank %d nranks 16 cudaDev 0 busId 1000 - Init COMPLETE\n"
                    % (i % 2, i) for i in range(16))  # fmt: skip
    target = tmp_path / "job-9.out"
    target.write_bytes(head)
    interval, latencies = 0.1, []
    for _ in range(3):
        written, alerted = [], []
        follower = Follower([str(target)], RULES, FollowOptions(interval_s=interval, idle_s=0.6),
                            lambda a, alerted=alerted: alerted.append(time.monotonic()))  # fmt: skip

        def write(written=written):
            time.sleep(0.25)
            with open(target, "ab") as fh:
                fh.write(line)
            written.append(time.monotonic())

        thread = threading.Thread(target=write)
        thread.start()
        follower.run()
        thread.join()
        target.write_bytes(head)  # next round starts from the healthy head again
        assert alerted, "no alert"
        latencies.append(alerted[0] - written[0])
    print(f"alert latency at --interval {interval}: " + ", ".join(f"{x * 1000:.0f} ms" for x in latencies))
    assert max(latencies) < interval + 0.5


def test_truncation_and_replacement_are_read_again(tmp_path):
    target = tmp_path / "a.out"
    target.write_bytes(b"one\ntwo\npart")
    tail = FileTail(str(target))
    assert tail.poll().block == b"one\ntwo\n"
    with open(target, "ab") as fh:
        fh.write(b"ial\n")
    assert tail.poll().block == b"partial\n"
    target.write_bytes(b"x\n")  # truncated and rewritten
    got = tail.poll()
    assert got.reset and got.block == b"x\n"
    other = tmp_path / "b.out"
    other.write_bytes(b"new file longer than the old one\n")
    os.replace(other, target)  # replaced: new inode
    got = tail.poll()
    assert got.reset and got.block == b"new file longer than the old one\n"
    assert tail.poll().block == b"" and not tail.poll().grew


def test_follow_after_truncation_equals_plain_run_of_the_new_content(tmp_path):
    first = (CORPUS / CASES[0]).read_bytes()
    second = _one_log("real-nccl-07-socket-ifname-lo").read_bytes()
    target = tmp_path / "job-5.out"
    target.write_bytes(first)
    follower = Follower([str(target)], RULES, FollowOptions(interval_s=0.02, idle_s=0.4))

    def rewrite():
        time.sleep(0.15)
        target.write_bytes(second[: len(second) // 2])
        time.sleep(0.1)
        with open(target, "ab") as fh:
            fh.write(second[len(second) // 2 :])

    thread = threading.Thread(target=rewrite)
    thread.start()
    result = follower.run()
    thread.join()
    plain = _plain(target)
    assert [r.to_json() for r in result.reports] == [plain]
    # the live state forgot the first content and read the new one once
    assert _live_json(follower.live) == plain["findings"]
    assert follower.live.result.inputs[0].to_json() == plain["inputs"][0]


def test_rate_limit_holds_alerts_back_and_never_repeats():
    from diag.report import Finding

    now = [0.0]
    policy = AlertPolicy(RULES, max_per_minute=2, clock=lambda: now[0])

    def finding(cid, hosts):
        return Finding(cid, "t", "error", "root", 0.9, "d", "r", hosts=hosts)

    findings = [finding("ib-devices-not-mounted", ["n1"]), finding("nccl-socket-ifname", []),
                finding("pmix-not-used", ["n2"]), finding("job-oom", ["n3"])]  # fmt: skip
    first = policy.select(findings, 0.0)
    assert [a.finding.id for a in first] == ["ib-devices-not-mounted", "nccl-socket-ifname"]
    assert policy.select(findings, 0.0) == []  # over the rate: held back
    now[0] = 61.0
    assert [a.finding.id for a in policy.select(findings, 0.0)] == ["pmix-not-used"]  # job-oom waits for the end
    findings[0] = finding("ib-devices-not-mounted", ["n1", "n4"])
    assert [a.hosts for a in policy.select(findings, 0.0)] == [["n4"]]  # a new host of a known cause


def test_rule_follow_field_overrides_the_family_default(tmp_path):
    import dataclasses

    from diag.catalog.model import RuleSet

    rules = RuleSet([dataclasses.replace(r, follow=False) if r.id == "ib-devices-not-mounted" else r
                     for r in RULES.rules])  # fmt: skip
    ib = next(
        f for f in diagnose_paths([str(CORPUS / CASES[0])], RULES)[0][0].findings if f.id == "ib-devices-not-mounted"
    )
    assert AlertPolicy(RULES).early(ib)
    assert not AlertPolicy(rules).early(ib)


def test_alert_line_shows_no_escape_sequences():
    from diag.evidence import Evidence
    from diag.follow.alerts import Alert
    from diag.report import Finding

    f = Finding("ib-devices-not-mounted", "t", "error", "root", 0.9, "d", "r", hosts=["n1\x1b[2J"],
                evidence=[Evidence("x\x1b]0;evil\x07.out", 3, "t", (0, 3))])  # fmt: skip
    line = alert_line(Alert(f, ["n1\x1b[2J"], 1.0), None)
    assert "\x1b" not in line and "\x07" not in line


def test_cli_follow_exec_gets_the_finding_json_and_exit_code_is_the_diagnosis(tmp_path):
    log = CORPUS / CASES[0]
    target = tmp_path / "train-48213.out"
    target.write_bytes(log.read_bytes())
    sink = tmp_path / "alerts.jsonl"
    result = CliRunner().invoke(cli, ["follow", str(target), "--interval", "0.05", "--idle", "0.3", "--format", "json",
                                      "--exec", f"cat >> {sink}; echo >> {sink}"])  # fmt: skip
    plain = CliRunner().invoke(cli, [str(target), "--format", "json"])
    assert result.exit_code == plain.exit_code == 1
    assert json.loads(result.stdout) == json.loads(plain.stdout)
    sent = [json.loads(line) for line in sink.read_text().splitlines() if line.strip()]
    assert sent and sent[0]["finding"]["id"] == "ib-devices-not-mounted" and sent[0]["schema"] == "slurmdiag.alert/1"
    assert "ib-devices-not-mounted" in result.stderr


def test_cli_follow_jobid_ends_when_slurm_says_the_job_ended(tmp_path):
    """A fake scontrol: RUNNING twice, then the captured TIMEOUT record. Following ends on the job's
    end (not on idle), and the report is `slurmdiag job`'s: Slurm's verdict merged in."""
    import subprocess
    import sys

    data = Path(__file__).resolve().parents[1] / "data" / "slurm" / "time-limit.scontrol.txt"
    record = data.read_text()
    old_dir = next(w.split("=", 1)[1] for w in record.split() if w.startswith("WorkDir="))
    record = record.replace(old_dir, str(tmp_path))
    (tmp_path / "final.txt").write_text(record)
    (tmp_path / "running.txt").write_text(record.replace("JobState=TIMEOUT", "JobState=RUNNING"))
    (tmp_path / "train-timelimit-46.out").write_bytes(b"start\n")
    # the failing rank's own log appears only once the job runs (a per-rank file named after the job)
    rank_log = tmp_path / "train-46.rank2.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/calls 2>/dev/null || echo 0); echo $((n + 1)) > {tmp_path}/calls
if [ "$n" -eq 2 ]; then cp {CORPUS / CASES[0]} {rank_log}; fi
if [ "$n" -lt 6 ]; then cat {tmp_path}/running.txt; else cat {tmp_path}/final.txt; fi
""")
    scontrol.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    repo = Path(__file__).resolve().parents[2]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "diag", "follow", "--jobid", "46", "--interval", "0.05",
                           "--job-poll", "0.1", "--settle", "0.1", "--format", "json"],
                          capture_output=True, text=True, env=env, cwd=repo, timeout=60)  # fmt: skip
    assert time.monotonic() - started < 30  # ended by the job's state, not an idle window (infinite here)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["slurm"] and report["slurm"][0]["state"] == "TIMEOUT"
    assert "job-time-limit" in {f["id"] for f in report["findings"]}
    assert "ib-devices-not-mounted" in done.stderr  # alerted while "running", from the late per-rank file
    assert str(rank_log) in {i["path"] for i in report["inputs"]}


def test_follow_of_several_growing_files_equals_plain_run(tmp_path):
    """A .out and a .err growing at once (the .err appearing late): the final report is the plain one."""
    case = CORPUS / "syn-pmix-not-used-ompi5"
    files = sorted(p for p in case.iterdir() if p.suffix in (".out", ".err"))
    rng = random.Random(7)
    threads = []
    for i, src in enumerate(files):
        target = tmp_path / src.name
        if i == 0:
            target.write_bytes(b"")
        pieces = _pieces(src.read_bytes(), rng)

        def write(target=target, pieces=pieces, delay=0.1 * i):
            time.sleep(delay)
            _writer(target, pieces, pause=0.001).run()

        threads.append(threading.Thread(target=write))
    alerts = []
    follower = Follower([str(tmp_path)], RULES, FollowOptions(interval_s=0.02, idle_s=0.5), alerts.append)
    for thread in threads:
        thread.start()
    result = follower.run()
    for thread in threads:
        thread.join()
    plain, _ = diagnose_paths([str(tmp_path)], RULES)
    assert [r.to_json() for r in result.reports] == [r.to_json() for r in plain]
    assert len(result.reports[0].inputs) == 2
    assert "pmix-not-used" in {a.finding.id for a in alerts}


@pytest.mark.parametrize(("case", "alerts_early"), [("syn-busbw-low-no-gdr-4x8", False), ("syn-gpu-xid-48-ecc", True)])
def test_rule_follow_field_in_the_catalogue(case, alerts_early, tmp_path):
    """busbw-low says follow: false (a partial nccl-tests table is not slow); gpu-xid says follow: true
    (a job-fate cause worth an alert at once). Both are in the final diagnosis either way."""
    expected = {"syn-busbw-low-no-gdr-4x8": "busbw-low", "syn-gpu-xid-48-ecc": "gpu-xid"}[case]
    src = _one_log(case)
    target = tmp_path / src.name
    target.write_bytes(b"")
    writer = _writer(target, _pieces(src.read_bytes(), random.Random(3)), pause=0.0005)
    alerts = []
    follower = Follower([str(target)], RULES, FollowOptions(interval_s=0.02, idle_s=0.5, min_severity="warning"),
                        alerts.append)  # fmt: skip
    writer.start()
    result = follower.run()
    writer.join()
    assert expected in {f.id for f in result.reports[0].findings}
    assert (expected in {a.finding.id for a in alerts}) is alerts_early


def test_cli_follow_usage_errors_exit_2(tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["follow"]).exit_code == 2
    assert runner.invoke(cli, ["follow", "-"]).exit_code == 2
    missing = runner.invoke(cli, ["follow", str(tmp_path / "never.out"), "--idle", "0.2", "--interval", "0.05"])
    assert missing.exit_code == 2 and "nothing could be read" in missing.stderr


def test_a_small_followed_paste_is_repaired_like_a_whole_read(tmp_path):
    """NCCL records glued onto one line (a paste) are split as a whole-file read splits them."""
    glued = (b"n1:10:10 [0] NCCL INFO NET/IB : No device found. n1:10:10 [0] NCCL INFO NCCL_IB_DISABLE set by "
             b"environment to 1. n1:10:10 [0] NCCL INFO Using network Socket\n"
             b"n2:11:11 [0] NCCL INFO Using network Socket n2:11:11 [0] NCCL INFO comm 0x1 rank 1 nranks 2 "
             b"cudaDev 0 busId 1000 - Init COMPLETE\n")  # fmt: skip
    target = tmp_path / "paste.txt"
    target.write_bytes(b"")
    tail, live = FileTail(str(target)), LiveScan(RULES)
    for piece in _pieces(glued, random.Random(1)):
        with open(target, "ab") as fh:
            fh.write(piece)
        live.feed(str(target), tail.stats, tail.poll().block)
    plain = _plain(target)
    assert plain["findings"], "the paste shows a cause only once its records are split"
    assert _live_json(live) == plain["findings"]
    assert tail.stats.to_json() == plain["inputs"][0]


def test_slurms_node_count_makes_an_early_fallback_an_alert(tmp_path):
    """One node's lines at the start of a 2-node job: with Slurm's node count (--jobid, --self) the
    wrong HCA is an error and alerts while the job runs; from the file alone (node count unknown,
    nothing failed yet) it is a warning, below the default --alert-on."""
    target = tmp_path / "run-99.out"
    target.write_bytes(
        b"1: n1:55:55 [0] NCCL INFO NCCL_IB_HCA set to mlx5_9:1\n"
        b"1: n1:55:55 [0] NCCL INFO NET/IB : No device found.\n"
        b"1: n1:55:55 [0] NCCL INFO Using network Socket\n0: step 1 loss 2.1\n"
    )
    for nodes, alerted in ((2, True), (0, False)):
        alerts = []
        Follower([str(target)], RULES, FollowOptions(interval_s=0.02, idle_s=0.2, nodes=nodes), alerts.append).run()
        assert ("nccl-ib-hca-wrong" in [a.finding.id for a in alerts]) is alerted, nodes


def test_a_cause_named_only_by_its_words_is_reported_but_never_alerted_early():
    from diag.api import diagnose_bytes

    line = b"[rank3]: RuntimeError: could not grow the segment under /dev/shm/psm2-1 to 4194304 bytes\n"
    findings = diagnose_bytes(line, RULES).findings
    assert findings[0].id == "shm-too-small" and findings[0].severity == "error"
    assert AlertPolicy(RULES, clock=lambda: 0.0).select(findings, 0.0) == []
