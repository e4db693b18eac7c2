"""The fleet as an admin uses it: records from the epilog and from an archive scan run as a job array,
one compaction, one report that names the planted bad nodes and no healthy one."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from diag.api import diagnose
from diag.cli import cli
from diag.fleet.archive import discover, in_shard, parse_sidecar
from diag.fleet.record import SCHEMA, build_record, dumps, rules_fingerprint, utc_iso
from diag.fleet.stats import binomial_sf, wilson_lower
from diag.slurm.query import parse_scontrol

from .synthetic import CORPUS, build_archive

duckdb = pytest.importorskip("duckdb")
SHARDS = 3


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A 600-job archive scanned as a 3-task array, then compacted."""
    base = tmp_path_factory.mktemp("fleet")
    archive = build_archive(base / "archive", jobs=600)
    out = base / "fleet"
    for i in range(SHARDS):
        _run("fleet", "scan", str(archive.root), "--out", str(out), "--shard", f"{i}/{SHARDS}", "--cluster", "syn")
    _run("fleet", "compact", str(out))
    return archive, out


def _report(out: Path, *extra: str) -> dict:
    return json.loads(_run("fleet", "report", str(out), "--format", "json", *extra))


def test_planted_bad_nodes_rank_first_and_no_healthy_node_is_named(fleet):
    archive, out = fleet
    report = _report(out)
    assert report["jobs"] == archive.jobs
    named = [entry["node"] for entry in report["bad_nodes"]]
    assert set(named) == set(archive.bad), named
    for entry in report["bad_nodes"]:
        kind = archive.bad[entry["node"]]
        top_cause = next(iter(entry["causes"]))
        assert top_cause == {"ib": "ib-link-fault", "xid": "gpu-xid"}[kind]
        # Which HCA or GPU: the devices the blaming findings named on that node.
        assert entry["devices"] and all(d.startswith({"ib": "mlx5_", "xid": "GPU@"}[kind]) for d in entry["devices"])
        assert entry["blamed_users"] >= 2 and entry["rate"] > report["baseline_rate"]
        assert entry["drain"].startswith(f"scontrol update nodename={entry['node']} state=drain reason='slurmdiag: ")
    # Ranked by the lower bound of the rate, not by raw counts.
    lows = [e["wilson_lower"] for e in report["bad_nodes"]]
    assert lows == sorted(lows, reverse=True)


def test_one_users_broken_script_does_not_brand_a_node(fleet):
    archive, out = fleet
    report = _report(out)
    assert archive.script_bug_node not in [e["node"] for e in report["bad_nodes"]]
    # The trap is real: counted without users, that node is blamed far more often than the fleet.
    con = duckdb.connect()
    blamed = con.execute(
        "SELECT count(*) FROM read_parquet(?) WHERE list_contains(nodes, ?) AND "
        "len([f FOR f IN findings IF f.role = 'root' AND list_contains(f.hosts, ?)]) > 0",
        [str(out / "store" / "month=*" / "fleet.parquet"), archive.script_bug_node, archive.script_bug_node],
    ).fetchone()[0]
    assert blamed >= 20


def test_text_and_markdown_reports_suggest_drains_and_never_drain(fleet):
    archive, out = fleet
    text = _run("fleet", "report", str(out))
    for node in archive.bad:
        assert f"scontrol update nodename={node} state=drain" in text
    assert archive.script_bug_node not in text.split("Root causes")[0]
    markdown = _run("fleet", "report", str(out), "--format", "markdown")
    assert "| node |" in markdown and "```sh" in markdown
    assert "Unexplained:" in text and "Unexplained:" in markdown
    prom = _run("fleet", "report", str(out), "--format", "prometheus")
    rates = [line for line in prom.splitlines() if line.startswith("slurmdiag_fleet_node_blame_rate{")]
    assert sorted(line.split('"')[1] for line in rates) == sorted(archive.bad)


def test_array_shards_split_the_jobs_without_overlap(fleet):
    archive, _out = fleet
    jobs = [j.job_id for j in discover([str(archive.root)])]
    assert len(jobs) == len(set(jobs)) == archive.jobs
    owners = [[i for i in range(SHARDS) if in_shard("syn", j, (i, SHARDS))] for j in jobs]
    assert all(len(o) == 1 for o in owners)
    assert all(sum(1 for o in owners if o == [i]) > archive.jobs / SHARDS / 2 for i in range(SHARDS))


def test_rescan_with_the_same_rules_skips_every_job(fleet, tmp_path):
    archive, out = fleet
    copy = tmp_path / "fleet"
    shutil.copytree(out, copy)
    result = CliRunner().invoke(cli, ["fleet", "scan", str(archive.root), "--out", str(copy), "--cluster", "syn"])
    assert result.exit_code == 0
    assert f"{archive.jobs} already scanned with these rules, 0 scanned" in result.output
    assert not list((copy / "shards").glob("*.jsonl"))


def test_slurm_fields_come_from_the_saved_sacct_dump(fleet):
    archive, out = fleet
    con = duckdb.connect()
    rows = con.execute(
        "SELECT user, account, partition, state, end_time, len(nodes) FROM read_parquet(?) WHERE job_id = '500001'",
        [str(out / "store" / "month=*" / "fleet.parquet")],
    ).fetchall()
    (user, account, partition, state, end, nodes) = rows[0]
    assert user.startswith("user") and account.startswith("acct-") and partition == "gpu"
    assert state in ("COMPLETED", "FAILED") and end.endswith("Z") and nodes == 4


def _store_state(out: Path):
    con = duckdb.connect()
    return sorted(con.execute(f"SELECT * FROM read_parquet('{out}/store/month=*/fleet.parquet')").fetchall(), key=str)


def test_compaction_is_idempotent(fleet, tmp_path):
    _archive, out = fleet
    copy = tmp_path / "fleet"
    shutil.copytree(out, copy)
    parquet = sorted((copy / "store").rglob("fleet.parquet"))
    before = {p: p.read_bytes() for p in parquet}
    rows = _store_state(copy)
    _run("fleet", "compact", str(copy))
    assert {p: p.read_bytes() for p in parquet} == before  # nothing to fold: nothing rewritten
    # The same records folded again (a task re-run, a crash before the inputs were removed): same store.
    con = duckdb.connect()
    (copy / "shards").mkdir(exist_ok=True)
    con.execute(
        f"COPY (SELECT * FROM read_parquet('{copy}/store/month=*/fleet.parquet')) TO "
        f"'{copy}/shards/again.jsonl' (FORMAT json)"
    )
    once = _run("fleet", "compact", str(copy))
    assert f"{len(rows)} records" in once and f"{len(rows)} jobs in the store" in once
    assert _store_state(copy) == rows


def _record(
    job: str, when: str, cause: str | None, nodes=("a1", "a2"), user="u1", scanned="2026-11-30T00:00:00Z"
) -> dict:
    findings = []
    if cause:
        findings.append({"id": cause, "role": "root", "severity": "error", "confidence": 0.9, "explained_by": None,
                         "hosts": [nodes[0]], "ranks": [0], "evidence": "x.out:1"})  # fmt: skip
    return {"schema": SCHEMA, "cluster": "c", "job_id": job, "rules_sha256": "r1", "user": user, "end_time": when,
            "scanned_at": scanned, "nodes": list(nodes), "nccl_versions": [], "findings": findings,
            "top": cause, "state": "FAILED" if cause else "COMPLETED"}  # fmt: skip


def test_a_corrupt_or_half_written_line_is_reported_and_skipped(tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    good = [dumps(_record(str(i), "2026-11-30T10:00:00Z", None)) for i in range(3)]
    # A line a crashed writer cut in half, a line that is not ours, then more good records.
    damaged = good[0] + good[1][:40] + "\n" + '{"schema": "other/9"}\n' + good[2]
    (shards / "task-0.jsonl").write_text(damaged)
    (shards / "task-1.jsonl").write_text(dumps(_record("9", "2026-11-30T11:00:00Z", None)))
    (shards / "task-2.jsonl").write_text(good[1][:-30])  # half-written, no newline
    result = CliRunner().invoke(cli, ["fleet", "compact", str(tmp_path)])
    assert result.exit_code == 0
    assert f"{shards / 'task-0.jsonl'}:2: not JSON" in result.output
    assert f"{shards / 'task-0.jsonl'}:3: schema is 'other/9'" in result.output
    assert f"{shards / 'task-2.jsonl'}:1: not JSON" in result.output
    assert sorted(r[2] for r in _store_state(tmp_path)) == ["0", "2", "9"]
    # The damaged files are kept for a person to look at; the folded ones are gone.
    assert sorted(p.name for p in (tmp_path / "rejected").iterdir()) == ["shards__task-0.jsonl", "shards__task-2.jsonl"]
    assert not list(shards.iterdir())


def test_newest_record_of_a_job_wins(tmp_path):
    (tmp_path / "shards").mkdir()
    old = _record("7", "2026-11-30T10:00:00Z", "ib-link-fault", scanned="2026-11-30T10:01:00Z")
    new = _record("7", "2026-11-30T10:00:00Z", None, scanned="2026-11-30T12:00:00Z")
    (tmp_path / "shards" / "b.jsonl").write_text(dumps(old))
    (tmp_path / "shards" / "a.jsonl").write_text(dumps(new))
    _run("fleet", "compact", str(tmp_path))
    (tmp_path / "shards" / "c.jsonl").write_text(dumps(old))  # an old record arriving late loses too
    _run("fleet", "compact", str(tmp_path))
    con = duckdb.connect()
    rows = con.execute(f"SELECT top, scanned_at FROM read_parquet('{tmp_path}/store/month=*/fleet.parquet')").fetchall()
    assert rows == [(None, "2026-11-30T12:00:00Z")]


def test_cause_counts_compare_with_the_previous_window(tmp_path):
    (tmp_path / "shards").mkdir()
    lines = [dumps(_record(f"p{i}", "2026-11-20T10:00:00Z", "job-oom")) for i in range(4)]
    lines += [dumps(_record(f"n{i}", "2026-11-28T10:00:00Z", "nccl-socket-ifname")) for i in range(5)]
    lines += [dumps(_record("n9", "2026-11-28T11:00:00Z", "job-oom"))]
    lines += [dumps(_record("u1", "2026-11-29T11:00:00Z", "unexplained-failure"))]
    lines += [dumps(_record(f"ok{i}", "2026-11-29T12:00:00Z", None)) for i in range(3)]
    (tmp_path / "shards" / "s.jsonl").write_text("".join(lines))
    _run("fleet", "compact", str(tmp_path))
    report = _report(tmp_path, "--since", "7d", "--until", "2026-12-01T00:00:00Z")
    causes = {c["cause"]: (c["jobs"], c["previous"], c["delta"]) for c in report["causes"]}
    assert causes["nccl-socket-ifname"] == (5, 0, 5)
    assert causes["job-oom"] == (1, 4, -3)
    assert report["jobs"] == 10 and report["failed_jobs"] == 7 and report["unexplained_jobs"] == 1
    assert report["bad_nodes"] == []  # 5 jobs of one user on a1: too little support to blame it


def test_fleet_record_of_one_job(tmp_path, rules):
    case = CORPUS / "syn-gpu-xid-79-epilog"
    token = "hf_" + "Q1w2E3r4T5" * 4
    folder = tmp_path / f"run-{token}"  # a secret where only a path carries it
    folder.mkdir()
    for p in case.iterdir():
        if p.name != "expected.yaml":
            (folder / p.name.replace("12061", "77_3")).write_text(p.read_text())
    report = diagnose([str(folder)], rules=rules)
    (job,) = parse_scontrol(
        "JobId=78 ArrayJobId=77 ArrayTaskId=3 JobName=t UserId=ann(1000) JobState=FAILED ExitCode=1:0 "
        "NodeList=slinky-[0-3] NumNodes=4 StartTime=2026-12-01T10:00:00 EndTime=2026-12-01T11:00:00 "
        "Account=ml Partition=h200"
    )
    from diag.slurm.verdict import slurm_record

    report.slurm = [slurm_record(job)]
    record = build_record(report, rules, cluster="c1", producer="epilog", meta={"account": "ml"}, now=0)
    line = dumps(record)
    assert len(line) < 4096 and line.endswith("\n") and "\n" not in line[:-1]
    assert token not in line
    assert (record["schema"], record["job_id"], record["array_job_id"], record["array_task_id"]) == (
        SCHEMA,
        "77_3",
        "77",
        "3",
    )
    assert record["nodes"] == ["slinky-0", "slinky-1", "slinky-2", "slinky-3"] and record["user"] == "ann"
    assert record["end_time"] == utc_iso("2026-12-01T11:00:00") and record["end_time"].endswith("Z")
    assert len(record["rules_sha256"]) == 64 and record["rules_sha256"] == rules_fingerprint(rules)[1]
    (xid,) = [f for f in record["findings"] if f["id"] == "gpu-xid"]
    assert xid["hosts"] == ["slinky-1"] and xid["role"] == "root" and xid["devices"] == ["slinky-1:GPU@0000:5d:00"]
    path, _, number = xid["evidence"].rpartition(":")
    assert number.isdigit() and path.endswith(".out") and "[REDACTED]" in path
    assert dumps(build_record(report, rules, cluster="c1", producer="epilog", meta={"account": "ml"}, now=0)) == line


def test_epilog_writes_a_record_for_every_job_even_with_only_failed(tmp_path, monkeypatch):
    from ..slurm.test_epilog import HEALTHY, epilog_env, fake_scontrol

    (tmp_path / "train-13.out").write_text(HEALTHY)
    monkeypatch.setenv("PATH", f"{fake_scontrol(tmp_path, tmp_path)}:{os.environ['PATH']}")
    fleet_dir = tmp_path / "fleet"
    env = {**epilog_env("13"), "PATH": os.environ["PATH"]}
    result = CliRunner().invoke(
        cli, ["epilog", "--only-failed", "--fleet-dir", str(fleet_dir), "--cluster", "lab"], env=env
    )
    assert result.exit_code == 0
    assert not list(tmp_path.glob("slurmdiag-13.*"))  # --only-failed: no report for a clean job ...
    (spool,) = list((fleet_dir / "spool").rglob("*.json"))  # ... but its record, for the baseline
    assert spool.name == "lab-13.json" and not list(spool.parent.glob(".*"))
    record = json.loads(spool.read_text())
    assert record["findings"] == [] and record["nodes"] == ["n0", "n1"] and record["producer"] == "epilog"


def test_sidecars_saved_by_sacct_and_scontrol():
    text = (
        "JobIDRaw|JobID|User|Account|Partition|State|NodeList|Start|End\n"
        "900|900|ann|ml|h200|FAILED|g[01-02]|2026-12-01T10:00:00|2026-12-01T11:00:00\n"
        "900.batch|900.batch|||||g01|2026-12-01T10:00:00|2026-12-01T11:00:00\n"
        "905|904_1|bob|cv|h200|NODE_FAIL|g03|2026-12-01T10:00:00|2026-12-01T10:30:00\n"
    )
    jobs = parse_sidecar("sacct.txt", text)
    assert [(j.job_id, j.user, j.nodes, j.raw["Account"]) for j in jobs] == [
        ("900", "ann", ["g01", "g02"], "ml"),
        ("904_1", "bob", ["g03"], "cv"),
    ]
    data = {"jobs": [{"job_id": 42, "user": "cy", "account": "bio", "partition": "a100", "nodes": "h[1-2]",
                      "state": {"current": ["FAILED"]}, "time": {"start": 1764583200, "end": 1764586800},
                      "array": {"job_id": 0, "task_id": {"set": False, "number": 0}}}]}  # fmt: skip
    (job,) = parse_sidecar("sacct.json", json.dumps(data))
    assert (job.job_id, job.user, job.nodes, job.raw["Partition"]) == ("42", "cy", ["h1", "h2"], "a100")
    assert utc_iso(job.end_time) == "2025-12-01T11:00:00Z"


def test_statistics():
    assert wilson_lower(0, 10) == 0.0
    assert 0.2 < wilson_lower(1, 1) < 0.35  # one failure in one job is weak evidence
    assert wilson_lower(30, 50) > wilson_lower(3, 5)
    # The exact tail against a brute-force sum.
    from math import comb

    for n, k, p in ((20, 5, 0.1), (50, 0, 0.3), (7, 7, 0.5), (40, 12, 0.05)):
        brute = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
        assert binomial_sf(k, n, p) == pytest.approx(brute, rel=1e-9)


def test_compact_says_how_to_install_duckdb_when_missing(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "duckdb", None)
    result = CliRunner().invoke(cli, ["fleet", "compact", str(tmp_path)])
    assert result.exit_code == 2
    assert "pip install 'slurmdiag[fleet]'" in result.output


def test_report_window_excludes_old_jobs(fleet):
    _archive, out = fleet
    later = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = _report(out, "--until", later)
    assert report["jobs"] == 0 and report["bad_nodes"] == []


def test_window_scan_from_one_sacct_query(tmp_path, rules):
    """``fleet scan --since``: one bulk sacct -P query (an old sacct without --json), finished jobs only,
    their files found as `slurmdiag job` finds them; a sacct without StdOut falls back to slurm-%j.out."""
    from diag.fleet.accounting import FIELDS, sacct_window, window_units
    from diag.fleet.archive import scan_units
    from diag.fleet.store import read_records

    xid = next(p for p in (CORPUS / "syn-gpu-xid-79-epilog").iterdir() if p.suffix == ".out").read_text()
    (tmp_path / "slurm-701.out").write_text(xid)
    (tmp_path / "slurm-704_2.out").write_text((CORPUS / "syn-healthy-roce" / "train-84555.out").read_text())
    rows = [
        f"701|701|train|ann|ml|h200|FAILED|1:0|0:0|None|slinky-[0-3]|4|01:00:00|00:10:00|2026-12-01T10:00:00|2026-12-01T10:10:00|{tmp_path}",
        f"702|702|train|bob|ml|h200|RUNNING|0:0|0:0|None|slinky-[4-5]|2|01:00:00|00:10:00|2026-12-01T10:00:00|Unknown|{tmp_path}",
        f"705|704_2|sweep|cy|cv|h200|COMPLETED|0:0|0:0|None|slinky-[0-3]|4|01:00:00|00:10:00|2026-12-01T10:00:00|2026-12-01T10:30:00|{tmp_path}",
    ]  # fmt: skip
    calls = []

    def runner(argv):
        calls.append(argv)
        if "--json" in argv:
            return 1, "", "sacct: unrecognized option '--json'"
        if "StdOut" in argv[-1]:
            return 1, "", 'sacct: error: Invalid field requested: "StdOut"'
        return 0, FIELDS.replace(",", "|") + "\n" + "\n".join(rows) + "\n", ""

    jobs = sacct_window("2026-12-01T00:00:00", "2026-12-02T00:00:00", runner)
    assert [j.job_id for j in jobs] == ["701", "704_2"]  # the running job waits for a later window
    assert all(c[:3] == ["sacct", "-a", "-X"] and "-S" in c for c in calls) and len(calls) == 3
    assert calls[0][-1] == "--json" and all(c[-2] == "-o" for c in calls[1:])
    stats = scan_units(window_units(jobs, rules), str(tmp_path / "fleet"), rules, cluster="c1")
    records = {r["job_id"]: r for _n, r, _w in read_records(stats.shard_path)}
    assert set(records) == {"701", "704_2"}
    assert records["701"]["top"] == "gpu-xid" and records["701"]["user"] == "ann"
    assert records["701"]["partition"] == "h200" and records["701"]["nodes"] == [f"slinky-{i}" for i in range(4)]
    assert (records["704_2"]["array_job_id"], records["704_2"]["array_task_id"], records["704_2"]["raw_id"]) == (
        "704",
        "2",
        "705",
    )
    assert records["704_2"]["findings"] == [] and records["704_2"]["state"] == "COMPLETED"


def test_spool_folders_let_every_users_epilog_write(tmp_path):
    from diag.fleet.record import write_record

    record = _record("5", "2026-11-30T10:00:00Z", None)
    path = Path(write_record(str(tmp_path), record))
    assert path == tmp_path / "spool" / "2026-11-30" / "c-5.json"
    for folder in (tmp_path / "spool", path.parent):  # created here; DIR itself existed
        assert folder.stat().st_mode & 0o7777 == 0o1733
    assert json.loads(path.read_text())["job_id"] == "5"


def test_archive_jobs_per_folder_or_per_job_id_in_names(tmp_path):
    flat = tmp_path / "flat"  # one folder, the job id in every name
    flat.mkdir()
    for name in ("slurm-101.out", "slurm-102.out", "train-102.err", "notes.md"):
        (flat / name).write_text("x\n")
    run = tmp_path / "runs" / "bert-large"  # a folder per job, no id in its names
    run.mkdir(parents=True)
    for name in ("rank0.log", "rank1.log", "model.pt", "sacct.txt", ".hidden.log"):
        (run / name).write_text("x\n")
    (tmp_path / "runs" / "alice" / "bert-large").mkdir(parents=True)  # another user's run of that name
    (tmp_path / "runs" / "alice" / "bert-large" / "train.log").write_text("x\n")
    jobs = {j.job_id: sorted(Path(f).name for f in j.files) for j in discover([str(flat), str(tmp_path / "runs")])}
    assert jobs == {
        "101": ["slurm-101.out"],
        "102": ["slurm-102.out", "train-102.err"],
        "bert-large": ["rank0.log", "rank1.log"],  # no checkpoint, no saved record, no hidden file
        "alice/bert-large": ["train.log"],
    }


def test_a_second_compact_is_refused_while_one_runs(tmp_path):
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "s.jsonl").write_text(dumps(_record("1", "2026-11-30T10:00:00Z", None)))
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / ".compact.lock").write_text("host n9 pid 4242 since 2026-11-30T10:00:00\n")
    result = CliRunner().invoke(cli, ["fleet", "compact", str(tmp_path)])
    assert result.exit_code == 2 and "host n9 pid 4242" in result.output and "remove that file" in result.output
    assert (tmp_path / "shards" / "s.jsonl").exists()  # nothing folded, nothing removed
    (tmp_path / "store" / ".compact.lock").unlink()
    assert "1 records" in _run("fleet", "compact", str(tmp_path))
    assert not (tmp_path / "store" / ".compact.lock").exists()


def test_a_huge_job_still_makes_a_small_record(rules):
    from diag.report import Finding, Report
    from diag.scan.facts import Facts

    hosts = [f"node{i:04d}" for i in range(400)]
    findings = [
        Finding("ib-link-fault", "t", "error", "root", 0.9, "d", "r", hosts=hosts[:2], ranks=[1, 9]),
        Finding("gpu-xid", "t", "critical", "root", 0.9, "d", "r", hosts=hosts, ranks=list(range(3200))),
        *[
            Finding(f"x-s{i}", "t", "error", "symptom", 0.9, "d", "r", hosts=hosts, ranks=list(range(3200)))
            for i in range(8)
        ],
    ]
    report = Report(findings=findings, inputs=[], facts=Facts(), job="9")
    record = build_record(report, rules, cluster="c", producer="scan")
    kept = {f["id"]: f for f in record["findings"]}
    assert len(json.dumps(record["findings"], separators=(",", ":"))) <= 3000 and len(dumps(record)) < 8000
    assert {"ib-link-fault", "gpu-xid"} <= set(kept)  # the symptoms go first
    assert kept["ib-link-fault"]["hosts"] == ["node0000", "node0001"]  # a root cause on two nodes stays whole
    assert len(record["nodes"]) == 400  # the allocation is never cut: every node ran the job
