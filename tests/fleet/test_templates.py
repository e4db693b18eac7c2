"""`slurmdiag fleet templates`: a new error line in many unexplained jobs comes out as one template,
ranked first with its job/node/user counts; what healthy jobs print is subtracted; drafts load as rules."""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from diag.api import diagnose_bytes, diagnose_sources, load_rules
from diag.cli import cli
from diag.fleet.mining import DrainMiner
from diag.fleet.record import build_record, dumps, rules_fingerprint
from diag.fleet.store import check_record
from diag.fleet.templates import Line, mine
from diag.harness import check_examples
from diag.input.mask import mask
from diag.input.paste import PASTE_BYTES
from diag.input.sources import MemorySource

from .synthetic import CORPUS, ONE_OFF_ERRORS, build_template_fleet

duckdb = pytest.importorskip("duckdb")


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def mined(tmp_path_factory):
    base = tmp_path_factory.mktemp("templates")
    fleet = build_template_fleet(base / "archive")
    out = base / "fleet"
    _run("fleet", "scan", str(fleet.root), "--out", str(out), "--cluster", "syn")
    _run("fleet", "compact", str(out))
    report = json.loads(_run("fleet", "templates", str(out), "--format", "json", "--min-jobs", "1"))
    return fleet, out, report


def test_new_error_line_is_one_template_ranked_first_with_its_counts(mined):
    fleet, _out, report = mined
    first = report["templates"][0]
    assert "Fabric agent: partition" in first["template"] and "health probe" in first["template"]
    assert first["jobs"] == len(fleet.new_jobs)
    assert first["nodes"] == len(fleet.new_nodes)
    assert first["users"] == len(fleet.new_users)
    # Its varying numbers and addresses became placeholders, not separate templates.
    assert sum("Fabric agent" in t["template"] for t in report["templates"]) == 1
    assert sorted(first["top_nodes"]) == sorted(fleet.new_nodes)[:8]
    # The one-off errors of single jobs rank below it, and --min-jobs 2 drops them.
    assert all(t["jobs"] == 1 for t in report["templates"][1:])
    assert len(report["templates"]) == 1 + len(ONE_OFF_ERRORS)


def test_a_line_healthy_jobs_print_too_is_subtracted(mined):
    _fleet, out, report = mined
    assert not any("checkpoint writer" in t["template"] for t in report["templates"])
    assert report["subtracted_as_healthy"] >= 1 and report["healthy_jobs"] > 0
    text = _run("fleet", "templates", str(out))
    assert "Fabric agent" in text and "checkpoint writer" not in text and "AssertionError" not in text


def test_records_keep_masked_lines_only_for_unexplained_and_healthy_jobs(mined):
    fleet, out, _report = mined
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT job_id, state, error_sample FROM read_parquet('{out}/store/month=*/fleet.parquet')"
    ).fetchall()
    assert rows and all(len(sample or []) <= 20 for _j, _s, sample in rows)
    new = [sample for job, _s, sample in rows if job in fleet.new_jobs]
    assert len(new) == len(fleet.new_jobs)
    for sample in new:
        texts = " ".join(line["text"] for line in sample)
        assert "Fabric agent" in texts
        # Masked: no address, no path, no node name of the pool, no raw number.
        assert not re.search(r"\d+\.\d+\.\d+\.\d+|/scratch|gpu-\d+|partition \d", texts), texts
        assert len(json.dumps(sample)) <= 2200


def test_drafts_load_with_rules_and_match_their_own_examples_only(mined, tmp_path):
    fleet, out, _report = mined
    drafts = tmp_path / "drafts"
    _run("fleet", "templates", str(out), "--min-jobs", "2", "--drafts", str(drafts))
    files = sorted(drafts.glob("*.yaml"))
    assert len(files) == 1  # only the template above --min-jobs
    rules = load_rules([str(drafts)])
    draft = next(r for r in rules.rules if r.id.startswith("x-draft-"))
    assert draft.status == "experimental" and draft.examples_match and draft.examples_no_match
    assert check_examples(rules, only={draft.id}) == []
    # The built-in rules are untouched, and a real (unmasked) log line of the new error fires it.
    assert {r.status for r in rules.rules if r.id != draft.id} == {"stable"}
    report = diagnose_bytes((fleet.sample_new_line + "\n").encode(), rules)
    assert draft.id in [f.id for f in report.findings]
    healthy = diagnose_bytes(b"gpu-001:1:1 [0] NCCL WARN Fabric agent: partition 3 is healthy\n", rules)
    assert draft.id not in [f.id for f in healthy.findings]
    assert "test-rules" in files[0].read_text()  # the header says how to check it


def test_masking_hides_addresses_paths_and_hosts():
    line = (
        "rank 3 on dgx-a100-017.cluster.local (alpha) cannot open /lustre/home/alice/run-7/ckpt.pt "
        "from 10.12.0.5:29500 or [fe80::1:2:3]:80, uuid 123e4567-e89b-12d3-a456-426614174000, ptr 0x7ffd12ab"
    )
    masked = mask(line, hosts=["alpha"])
    for secret in ("dgx-a100", "alpha", "/lustre", "alice", "10.12", "fe80", "123e4567", "7ffd", "29500"):
        assert secret not in masked, (secret, masked)
    assert "<HOST>" in masked and "<PATH>" in masked and "<IP>" in masked and "<UUID>" in masked
    assert mask(masked) == masked  # a masked line is a fixed point: stored lines mine the same again
    assert masked.startswith("rank <NUM> on <HOST>") and "cannot open <PATH>" in masked


CASES = sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())


def _sources(case):
    return [MemorySource(p.name, p.read_bytes()) for p in sorted(case.iterdir()) if p.name != "expected.yaml"]


def test_sampling_changes_no_report_on_the_corpus():
    """The fleet's producers sample; every report must still be byte for byte what a plain scan says."""
    rules = load_rules()
    assert len(CASES) > 50
    sampled_any = 0
    for case in CASES:
        plain = diagnose_sources(_sources(case), rules)
        sampled = diagnose_sources(_sources(case), rules, sample_errors=True)
        assert json.dumps(plain.to_json(), default=str) == json.dumps(sampled.to_json(), default=str), case.name
        # A plain diagnosis samples only an input the size of a paste (to show what no rule knows).
        assert plain.error_sample == [] or sum(len(s.data) for s in _sources(case)) <= PASTE_BYTES
        sampled_any += bool(sampled.error_sample)
    assert sampled_any >= 5


def test_sampling_skips_lines_a_rule_knows():
    rules = load_rules()
    extra = b"gpu-002:77:77 [1] NCCL WARN Fabric agent: partition 9 failed health probe from 10.0.0.9 (attempt 1)\n"
    sources = _sources(CORPUS / "syn-ib-link-fault-2.28-long") + [MemorySource("x.log", extra)]
    sampled = diagnose_sources(sources, rules, sample_errors=True)
    texts = [payload for payload, _host, _n in sampled.error_sample]
    assert any("Fabric agent" in t for t in texts)
    # The IB link fault's own lines (work completion errors) are its rule's, not new templates.
    assert not any("completion" in t.lower() for t in texts), texts


def test_a_long_job_keeps_the_error_it_died_of(rules):
    """Forty distinct warnings at start-up, then the error the job died of: the record's 20 lines
    keep both the first warnings and the last error, and stay within their 2 KB."""
    import itertools

    names = ["".join(p) for p in itertools.islice(itertools.product("abcdefgh", repeat=3), 40)]
    early = [f"[rank0]: warning: prefetch of shard {n} failed, using the slow path" for n in names]
    text = "\n".join([*early, "step 10 loss 2.0", "[rank0]: FabricQuotaError: job exceeded its fabric quota"]) + "\n"
    report = diagnose_sources([MemorySource("slurm-9.out", text.encode())], rules, sample_errors=True)
    record = build_record(report, rules_fingerprint(rules), cluster="c", producer="scan", meta={"state": "FAILED"})
    kept = [line["text"] for line in record["error_sample"]]
    assert len(kept) <= 20 and len(json.dumps(record["error_sample"])) <= 2200
    assert kept[-1] == "FabricQuotaError: job exceeded its fabric quota"
    assert kept[0] == "warning: prefetch of shard aaa failed, using the slow path"
    # A job that a rule explains keeps none, though its scan sampled a line no rule knows.
    extra = MemorySource("x.log", b"[rank0]: FabricQuotaError: job exceeded its fabric quota\n")
    sources = _sources(CORPUS / "syn-ib-link-fault-2.28-long") + [extra]
    explained = diagnose_sources(sources, rules, sample_errors=True)
    assert explained.error_sample and explained.top().id == "ib-link-fault"
    record = build_record(explained, rules_fingerprint(rules), cluster="c", producer="scan", meta={"state": "FAILED"})
    assert record["error_sample"] == []


def test_old_records_without_the_field_still_compact_and_mine(tmp_path, rules):
    report = diagnose_bytes(b"srun: error: n1: task 0: Exited with exit code 1\n", rules)
    record = build_record(report, rules_fingerprint(rules), cluster="c", producer="scan", now=1796000000)
    record.update(job_id="1", end_time="2026-11-19T00:00:00Z", state="FAILED")
    old = {k: v for k, v in record.items() if k != "error_sample"}
    assert check_record(json.dumps(old))[1] is None
    assert check_record(json.dumps({**record, "error_sample": [{"host": None}]}))[1] is not None
    # A store whose month file predates the column: compact gives it the column, templates reads it.
    store = tmp_path / "store" / "month=2026-11"
    store.mkdir(parents=True)
    (tmp_path / "old.jsonl").write_text(dumps(old).replace(',"error_sample":null', ""))
    con = duckdb.connect()
    cols = ", ".join(f'"{k}"' for k in old)
    con.execute(
        f"COPY (SELECT {cols} FROM read_json('{tmp_path}/old.jsonl', format='newline_delimited')) "
        f"TO '{store}/fleet.parquet' (FORMAT parquet)"
    )
    (tmp_path / "shards").mkdir()
    sample = [{"text": "Fabric agent <NUM> down", "host": "n1", "count": 1}]
    new = {**record, "job_id": "2", "end_time": "2026-11-20T00:00:00Z", "error_sample": sample}
    (tmp_path / "shards" / "a.jsonl").write_text(dumps(new))
    _run("fleet", "compact", str(tmp_path))
    names = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{store}/fleet.parquet')").fetchall()}
    assert "error_sample" in names
    assert con.execute(f"SELECT count(*) FROM read_parquet('{store}/fleet.parquet')").fetchone()[0] == 2
    out = _run(
        "fleet", "templates", str(tmp_path), "--since", "30d", "--until", "2026-12-01T00:00:00Z", "--min-jobs", "1"
    )
    assert "1 unexplained jobs" in out and "Fabric agent <NUM> down" in out


# --- the miner ------------------------------------------------------------------------------------


def test_drain3_through_the_same_adapter_finds_the_same_top_template(mined):
    pytest.importorskip("drain3")
    _fleet, out, report = mined
    other = json.loads(_run("fleet", "templates", str(out), "--format", "json", "--min-jobs", "1", "--miner", "drain3"))
    assert other["miner"] == "drain3"
    assert other["templates"][0]["template"] == report["templates"][0]["template"]
    assert other["templates"][0]["jobs"] == report["templates"][0]["jobs"]


def test_drain_merges_lines_differing_in_one_token_and_keeps_others_apart():
    lines = [
        Line("Fabric agent: partition <NUM> failed on port alpha", "j1", "u1", ("n1",)),
        Line("Fabric agent: partition <NUM> failed on port beta", "j2", "u2", ("n2",)),
        Line("disk quota exceeded for project", "j3", "u1", ("n3",)),
    ]
    result = mine(lines, [], min_jobs=1)
    assert [t.template for t in result.templates] == [
        "Fabric agent: partition <NUM> failed on port <*>",
        "disk quota exceeded for project",
    ]
    assert len(result.templates[0].jobs) == 2


_TEXT = st.text(alphabet=st.sampled_from(list("ab01 <>*:\t\x1b/.-_NUMxé")), max_size=40)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.integers(0, 5), st.integers(0, 3)), max_size=30), st.randoms())
def test_miner_never_crashes_and_its_counts_do_not_depend_on_order(entries, rnd):
    lines = [Line(text, f"j{job}", f"u{user}", (f"n{job}",)) for text, job, user in entries]
    healthy = lines[: len(lines) // 4]
    shuffled = list(lines)
    rnd.shuffle(shuffled)
    a = mine(lines, healthy, min_jobs=1).to_json()
    b = mine(shuffled, list(reversed(healthy)), min_jobs=1).to_json()
    assert a == b
    assert sum(t["lines"] for t in a["templates"]) <= len(lines)
    miner = DrainMiner()
    for text, _job, _user in entries:
        cid = miner.add(text)
        assert miner.template(cid).split() == [] or len(miner.template(cid).split()) == len(text.split())
    for text, _job, _user in entries:  # every learned line fits a template once all are learned
        assert miner.match(text) is not None


def test_mining_speed_is_reported_for_ten_thousand_lines():
    """Not a benchmark gate: 10k distinct masked lines must mine in seconds, not minutes."""
    import time

    rng = random.Random(1)
    words = ["alpha", "beta", "gamma", "delta", "failed", "error", "port", "device", "timeout", "rank", "<NUM>", "<IP>"]
    lines = [
        Line(
            " ".join(rng.choice(words) for _ in range(rng.randint(4, 14))),
            f"j{i % 900}",
            f"u{i % 40}",
            (f"n{i % 300}",),
        )
        for i in range(10_000)
    ]
    start = time.perf_counter()
    mine(lines, lines[:500], min_jobs=2)
    assert time.perf_counter() - start < 20
