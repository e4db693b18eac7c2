"""The rule-author harness and `slurmdiag eval`, as a site's rule author would use them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from diag.harness import Case, check_case, find_cases, summarize

from .conftest import CORPUS

RULE = {
    "id": "x-site-fs",
    "title": "The site's scratch file system hung",
    "severity": "error",
    "role": "root",
    "description": "Lustre client evictions on our scratch.",
    "signatures": [{"name": "evicted", "regex": r"LustreError: .*evicted by (?P<server>\S+)"}],
    "remediation": "Rerun; report the OST to the storage team.",
    "examples": {
        "match": ["LustreError: 11-0: scratch-OST0003: evicted by scratch-MDT0000"],
        "no_match": ["Lustre: scratch-OST0003: Connection restored"],
    },
}


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diag", *args], capture_output=True, text=True, timeout=120)


def _site(tmp_path: Path, rule: dict) -> tuple[Path, Path]:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "x-site-fs.yaml").write_text(yaml.safe_dump(rule))
    case = tmp_path / "cases" / "evicted"
    case.mkdir(parents=True)
    (case / "slurm-77.out").write_text(
        "step 10 loss 2.3\nLustreError: 11-0: scratch-OST0003: evicted by scratch-MDT0000\n"
    )
    (case / "expected.yaml").write_text("top: x-site-fs\n")
    return rules, tmp_path / "cases"


def test_a_site_rule_with_examples_and_cases_passes_with_one_command(tmp_path):
    rules, cases = _site(tmp_path, RULE)
    done = _run("test-rules", "--rules", str(rules), str(cases))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 example lines, 1 cases: 0 failure(s)" in done.stdout


def test_a_wrong_example_or_case_fails_and_names_the_file(tmp_path):
    bad = dict(RULE, examples={"match": ["LustreError: evicted without a server"], "no_match": ["x"]})
    rules, cases = _site(tmp_path, bad)
    (cases / "evicted" / "expected.yaml").write_text("top: job-oom\n")
    done = _run("test-rules", "--rules", str(rules), str(cases))
    assert done.returncode == 1
    assert "x-site-fs.yaml: rule 'x-site-fs': example should match" in done.stdout
    assert "top finding ['x-site-fs'] is not job-oom" in done.stdout


def test_eval_counts_top1_healthy_and_splits_by_source(tmp_path):
    for name, label, text in (
        ("oom", "cuda-oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
        ("fine", "healthy", "step 100 loss 1.5\n"),
        ("missed", "job-oom", "step 100 loss 1.5\n"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "log.txt").write_text(text + "\n")
        (folder / "case.yaml").write_text(yaml.safe_dump({"source": f"https://example.org/{name}", "label": label}))
    done = _run("eval", str(tmp_path), "--format", "json")
    summary = json.loads(done.stdout)
    assert summary["splits"]["all"]["failing_jobs"] == 2
    assert summary["splits"]["all"]["top1"] == 0.5
    assert summary["splits"]["all"]["healthy_clean"] == 1.0
    assert summary["misses"] == [] and summary["holdout_misses"] == 1, "a holdout miss is counted, not named"
    shown = json.loads(_run("eval", str(tmp_path), "--format", "json", "--show-holdout").stdout)
    assert [m["case"].rsplit("/", 1)[-1] for m in shown["misses"]] == ["missed"]
    assert "missed" not in _run("eval", str(tmp_path)).stdout
    table = _run("eval", str(tmp_path), "--format", "markdown").stdout
    assert "| holdout | 2 | 1 | 0% |" in table and "| `job-oom` | – | 1, 0% |" in table
    assert _run("eval", str(tmp_path), "--fail-under", "60").returncode == 1


def test_eval_tells_misses_on_excerpts_that_hold_their_cause_from_those_that_do_not(tmp_path):
    for name, label, evidence, text in (
        ("oom", "cuda-oom", "lines", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
        ("thin", "job-oom", "context", "step 100 loss 1.5"),
        ("unjudged", "job-oom", None, "step 100 loss 1.5"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "log.txt").write_text(text + "\n")
        case = {"source": f"https://example.org/{name}", "label": label}
        if evidence:
            case["evidence"] = evidence
        (folder / "case.yaml").write_text(yaml.safe_dump(case))
    summary = json.loads(_run("eval", str(tmp_path), "--format", "json").stdout)
    assert summary["evidence"]["lines"]["all"]["top1"] == 1.0
    assert summary["evidence"]["context"]["all"]["top1"] == 0.0
    assert summary["splits"]["all"]["failing_jobs"] == 3, "the judgement adds a view; it never drops a case"
    table = _run("eval", str(tmp_path), "--format", "markdown").stdout
    assert re.search(r"\| lines \| (dev|holdout) \| 1 \| 100% \|", table), table
    (tmp_path / "thin" / "case.yaml").write_text(
        yaml.safe_dump({"source": "https://example.org/thin", "label": "job-oom", "evidence": "maybe"})
    )
    done = _run("eval", str(tmp_path))
    assert done.returncode == 2 and "evidence: 'maybe' is not one of lines, partial, context" in done.stderr


def test_split_is_fixed_by_the_source_url_not_by_the_anchor():
    a = Case(path=Path("a"), label="cuda-oom", source="https://github.com/o/r/issues/1#issuecomment-9")
    b = Case(path=Path("b"), label="cuda-oom", source="https://github.com/o/r/issues/1/")
    assert a.split == b.split in ("dev", "holdout")
    splits = {Case(path=Path("x"), label=None, source=f"https://github.com/o/r/issues/{i}").split for i in range(30)}
    assert splits == {"dev", "holdout"}


def test_a_holdout_case_read_while_tuning_counts_as_dev():
    url = next(
        f"https://github.com/o/r/issues/{i}"
        for i in range(30)
        if Case(Path("x"), None, source=f"https://github.com/o/r/issues/{i}").split == "holdout"
    )
    assert Case(path=Path("x"), label=None, source=url, seen=True).split == "dev"


def test_the_bundled_corpus_passes_through_the_harness(rules):
    cases = [c for c in find_cases([CORPUS]) if c.source is None]
    results = [check_case(c, rules) for c in cases[:40]]
    assert all(r.passed for r in results), [(r.case.name, r.problems) for r in results if not r.passed]
    assert summarize(results)["splits"]["corpus"]["cases"] == len(results)


def test_every_real_paste_is_read_and_diagnosed_the_same_in_small_chunks(rules):
    """The pastes nobody here wrote (corpus/wild): each case's label file is valid, and cutting the
    input into 61-byte chunks never changes what is found."""
    from diag.api import diagnose_bytes

    cases = [c for c in find_cases([CORPUS / "wild"]) if c.source]
    assert len(cases) >= 100
    for case in cases:
        blobs = [p.read_bytes() for p in case.logs()]
        assert blobs, f"{case.path}: no log file"
        whole = [f.id for f in diagnose_bytes(blobs, rules).findings]
        assert [f.id for f in diagnose_bytes(blobs, rules, chunk_bytes=61).findings] == whole, case.path


def _wild_pair(tmp_path: Path, text: str, label: str) -> Path:
    """One case in each split, both with ``text`` as their log."""
    urls = (f"https://example.org/{i}" for i in range(100))
    by_split: dict[str, str] = {}
    for url in urls:
        by_split.setdefault(Case(Path("x"), None, source=url).split, url)
        if len(by_split) == 2:
            break
    for split, url in by_split.items():
        folder = tmp_path / "wild" / split
        folder.mkdir(parents=True)
        (folder / "log.txt").write_text(text)
        (folder / "case.yaml").write_text(yaml.safe_dump({"source": url, "label": label}))
    return tmp_path / "wild"


def test_eval_damage_shows_a_rule_anchored_at_the_line_start_survives_every_paste_damage(tmp_path):
    anchored = dict(RULE, signatures=[{"name": "evicted", "regex": r"^LustreError: .*evicted by (?P<server>\S+)"}])
    rules_dir, _ = _site(tmp_path, anchored)
    wild = _wild_pair(tmp_path, "LustreError: 11-0: scratch-OST0003: evicted by scratch-MDT0000\n", "x-site-fs")
    summary = json.loads(_run("eval", str(wild), "--rules", str(rules_dir), "--damage", "--format", "json").stdout)
    from diag.damage import DAMAGES

    assert summary["damage"] == {d.name: {"all": {"passing": 2, "kept": 2}, "dev": {"passing": 1, "kept": 1},
                                          "holdout": {"passing": 1, "kept": 1}} for d in DAMAGES}  # fmt: skip
    text = _run("eval", str(wild), "--rules", str(rules_dir), "--damage").stdout
    assert "paste damage" in text and "indented" in text


def test_damage_check_counts_what_does_not_survive_and_names_dev_cases_only(tmp_path, rules):
    from diag.damage import Damage
    from diag.harness import check_damage

    wild = _wild_pair(tmp_path, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "cuda-oom")
    results = [check_case(c, rules) for c in find_cases([wild])]
    assert all(r.passed for r in results)
    same = Damage("same", "nothing", lambda d: d)
    emptied = Damage("emptied", "every line gone", lambda d: b"\n")
    found = check_damage(results, rules, [same, emptied])
    assert found["damage"]["same"]["all"] == {"passing": 2, "kept": 2}
    assert found["damage"]["emptied"]["all"] == {"passing": 2, "kept": 0}
    assert [m["case"].rsplit("/", 1)[-1] for m in found["damage_misses"]] == ["dev"], "a holdout case is not named"
    shown = check_damage(results, rules, [emptied], show_holdout=True)["damage_misses"]
    assert sorted(m["case"].rsplit("/", 1)[-1] for m in shown) == ["dev", "holdout"]


def test_real_pastes_keep_their_verdict_after_every_kind_of_paste_damage(rules):
    """The dev split of corpus/wild (pastes nobody here wrote): of the cases that pass, at least 98%
    still pass after each kind of damage (a record cut by a terminal can still lose the words a rule
    needs when its rows are not ASCII)."""
    from diag.harness import check_damage

    results = [check_case(c, rules) for c in find_cases([CORPUS / "wild"]) if c.split == "dev"]
    table = check_damage(results, rules)["damage"]
    weak = {name: per["dev"] for name, per in table.items() if per["dev"]["kept"] < 0.98 * per["dev"]["passing"]}
    assert not weak, weak


def test_a_thin_paste_keeps_the_cited_lines_and_their_neighbours_and_marks_each_gap():
    from diag.damage import thin_paste

    log = b"\n".join(b"line %d" % n for n in range(1, 11)) + b"\n"
    assert thin_paste(log, [2, 9], 1) == b"line 1\nline 2\nline 3\n...\nline 8\nline 9\nline 10\n"
    assert thin_paste(log, [5], 0) == b"line 5\n"
    assert thin_paste(log, [4, 6], 1) == b"line 3\nline 4\nline 5\nline 6\nline 7\n", "touching windows: no gap"
    assert thin_paste(log, [1], 1000) == log, "a window wider than the log is the log"


def test_eval_thin_cuts_each_case_answered_right_to_its_evidence_and_counts_what_still_is(tmp_path):
    rules_dir, _ = _site(tmp_path, RULE)
    noise = "".join(f"step {n} loss 2.{n}\n" for n in range(40))
    wild = _wild_pair(tmp_path, noise + "LustreError: 11-0: scratch-OST0003: evicted by scratch-MDT0000\n" + noise,
                      "x-site-fs")  # fmt: skip
    summary = json.loads(_run("eval", str(wild), "--rules", str(rules_dir), "--thin", "0", "--thin", "3",
                              "--format", "json").stdout)  # fmt: skip
    both = {"all": {"passing": 2, "kept": 2}, "dev": {"passing": 1, "kept": 1}, "holdout": {"passing": 1, "kept": 1}}
    assert summary["thin"] == {"thin-0": both, "thin-3": both}
    assert summary["thin_misses"] == []
    text = _run("eval", str(wild), "--rules", str(rules_dir), "--thin", "2").stdout
    assert "thin pastes" in text and "thin-2" in text
    markdown = _run("eval", str(wild), "--rules", str(rules_dir), "--thin", "2", "--format", "markdown").stdout
    assert "| thin-2 | dev | 1 | 1 (100%) |" in markdown


def test_thin_check_leaves_healthy_runs_alone_and_names_dev_cases_only(tmp_path, rules, monkeypatch):
    import diag.harness as harness

    oom = "step 1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\nstep 2\n"
    wild = _wild_pair(tmp_path, oom, "cuda-oom")
    healthy = tmp_path / "wild" / "fine"
    healthy.mkdir()
    (healthy / "log.txt").write_text("step 1 loss 2.3\nstep 2 loss 2.1\n")
    (healthy / "case.yaml").write_text(yaml.safe_dump({"source": "https://example.org/fine", "label": "healthy"}))
    results = [check_case(c, rules) for c in find_cases([wild])]
    found = harness.check_thin(results, rules, [0])
    assert found["thin"]["thin-0"]["all"] == {"passing": 2, "kept": 2}, "the healthy run is not a case to thin"
    monkeypatch.setattr(harness, "thin_paste", lambda data, lines, around: b"\n")  # a cut that loses every word
    lost = harness.check_thin(results, rules, [0])
    assert lost["thin"]["thin-0"]["all"] == {"passing": 2, "kept": 0}
    assert [m["case"].rsplit("/", 1)[-1] for m in lost["thin_misses"]] == ["dev"], "a holdout case is not named"
    shown = harness.check_thin(results, rules, [0], show_holdout=True)["thin_misses"]
    assert sorted(m["case"].rsplit("/", 1)[-1] for m in shown) == ["dev", "holdout"]


def test_a_window_as_wide_as_the_log_keeps_every_bundled_verdict(rules):
    """Cut to its evidence with more context than the file has, a one-file case is its whole log
    again, so the thin check must give the verdict the case gets as it is."""
    from diag.harness import check_thin

    results = [r for r in (check_case(c, rules) for c in find_cases([CORPUS]) if c.split == "corpus")
               if len(r.case.logs()) == 1]  # fmt: skip
    table = check_thin(results, rules, [10**6])["thin"]["thin-1000000"]["corpus"]
    assert table["passing"] > 50
    assert table["kept"] == table["passing"]


def test_a_thin_paste_keeps_every_row_of_a_record_a_terminal_wrapped(tmp_path, rules):
    """The finding cites a wrapped record at its first row, with the whole record's text: cutting the
    case to that row alone would lose "DUE TO TIME LIMIT" and measure the cut, not the verdict."""
    from diag.harness import check_thin

    noise = "".join(f"step {n} loss 2.{n}\n" for n in range(20))
    banner = "slurmstepd: error: *** JOB 38193 ON gra533 CANCELLED AT 2017-07-02T16:35:48\nDUE TO TIME LIMIT ***\n"
    wild = _wild_pair(tmp_path, noise + banner + noise, "job-time-limit")
    results = [check_case(c, rules) for c in find_cases([wild])]
    assert all(r.top1 for r in results)
    assert check_thin(results, rules, [0])["thin"]["thin-0"]["all"] == {"passing": 2, "kept": 2}
