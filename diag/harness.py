"""Labelled logs and rule examples, checked through the real pipeline: the harness a site's rule
author runs (``slurmdiag test-rules``, ``slurmdiag eval``) and this project's own corpus test.

A *case* is a folder of one job's log files plus its label, in either form:

* ``expected.yaml`` (the bundled corpus): ``top`` (the first finding, ``null`` = none expected),
  ``expected`` (ids in rank order), ``absent``, ``healthy``, ``culprits``, ``expect_busbw``;
* ``case.yaml`` (real logs others wrote, ``corpus/wild``): ``source`` (the thread), ``label`` (the
  cause the thread established, or ``healthy``), ``secondary``, ``confirmed``, ``why``, and optionally
  ``evidence``: what a reader who knows the catalogue, blind to the tool, finds in the excerpt's own
  lines (EVIDENCE), so a score can say how much of a miss is the excerpt's and how much the tool's.

Cases of the second form are split by a rule fixed before any was read: a case is in the
*holdout* split when the first 8 hex digits of SHA-1 of its source URL (no ``#anchor``, no
trailing ``/``) are divisible by 3, so one thread's cases always fall on the same side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from diag.api import diagnose_bytes, diagnose_sources
from diag.catalog.causes import CAUSE_IDS, CUSTOM_ID_PREFIX, severity_rank
from diag.catalog.model import Rule, RuleSet
from diag.damage import DAMAGES, Damage, thin_paste
from diag.input.paste import PASTE_BYTES
from diag.input.sources import MemorySource, Source
from diag.report import Report
from diag.scan.scanner import Scanner

LABEL_FILES = ("expected.yaml", "case.yaml")
NOT_LOGS = {*LABEL_FILES, "README.md"}
HEALTHY = "healthy"
# lines: the lines alone name the label; partial: they point to a few causes, the label among them;
# context: the label came from the thread around the paste (a later fix, a maintainer), not its lines
EVIDENCE = ("lines", "partial", "context")


class CaseError(Exception):
    """A case folder whose label file cannot be read (one line, naming the file)."""


@dataclass
class Case:
    path: Path
    label: str | None  # the expected first finding; "healthy" for no error; None: no constraint
    expected: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    secondary: list[str] = field(default_factory=list)
    culprits: dict = field(default_factory=dict)
    healthy: bool = False
    expect_busbw: float | None = None
    source: str | None = None
    confirmed: bool = False
    seen: bool = False  # a holdout case someone read while tuning: from then on it counts as dev
    evidence: str | None = None  # one of EVIDENCE, where a reader has judged it

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def split(self) -> str:
        if not self.source:
            return "corpus"
        url = self.source.split("#", 1)[0].rstrip("/")
        holdout = int(hashlib.sha1(url.encode()).hexdigest()[:8], 16) % 3 == 0
        return "holdout" if holdout and not self.seen else "dev"

    def logs(self) -> list[Path]:
        return sorted(
            p for p in self.path.rglob("*") if p.is_file() and p.name not in NOT_LOGS and not p.name.startswith(".")
        )


@dataclass
class CaseResult:
    case: Case
    ids: list[str]
    problems: list[str]  # why the case fails its label; empty: it passes
    worst_error: bool  # a finding at error or worse

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def top1(self) -> bool:
        if self.case.label == HEALTHY:
            return not self.worst_error
        return bool(self.ids) and self.ids[0] == self.case.label

    @property
    def top3(self) -> bool:
        if self.case.label == HEALTHY:
            return not self.worst_error
        return self.case.label in self.ids[:3]


def find_cases(roots: Iterable[str | Path]) -> list[Case]:
    """Every case folder under ``roots`` (a root may itself be a case)."""
    found: dict[Path, None] = {}
    for root in roots:
        root = Path(root)
        for name in LABEL_FILES:
            for label in sorted(root.rglob(name)) if root.is_dir() else []:
                found[label.parent] = None
    return [load_case(p) for p in sorted(found)]


def load_case(folder: Path) -> Case:
    import yaml

    for name in LABEL_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise CaseError(f"{path}: cannot read: {str(exc).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise CaseError(f"{path}: must be a YAML mapping")
        return _from_case_yaml(folder, data, path) if name == "case.yaml" else _from_expected(folder, data, path)
    raise CaseError(f"{folder}: no {' or '.join(LABEL_FILES)}")


def _ids(values, path: Path, key: str) -> list[str]:
    values = values or []
    if isinstance(values, str):
        values = [values]
    for value in values:
        if value not in CAUSE_IDS and not str(value).startswith(CUSTOM_ID_PREFIX):
            raise CaseError(f"{path}: {key}: {value!r} is not a cause id")
    return list(values)


def _from_expected(folder: Path, data: dict, path: Path) -> Case:
    top = data.get("top", ...)
    if top is not ...:
        top = HEALTHY if top is None else _ids([top], path, "top")[0]
    return Case(
        path=folder,
        label=None if top is ... else top,
        expected=_ids(data.get("expected"), path, "expected"),
        absent=_ids(data.get("absent"), path, "absent"),
        culprits=data.get("culprits") or {},
        healthy=bool(data.get("healthy")),
        expect_busbw=data.get("expect_busbw"),
    )


def _from_case_yaml(folder: Path, data: dict, path: Path) -> Case:
    label = data.get("label")
    if label != HEALTHY:
        label = _ids([label], path, "label")[0]
    source = data.get("source")
    if not isinstance(source, str) or not source:
        raise CaseError(f"{path}: source: the thread or page the log came from is required")
    return Case(
        path=folder,
        label=label,
        secondary=_ids(data.get("secondary"), path, "secondary"),
        healthy=label == HEALTHY,
        source=source,
        confirmed=bool(data.get("confirmed")),
        seen=bool(data.get("seen")),
        evidence=_evidence(data.get("evidence"), path),
    )


def _evidence(value, path: Path) -> str | None:
    if value is None or value in EVIDENCE:
        return value
    raise CaseError(f"{path}: evidence: {value!r} is not one of {', '.join(EVIDENCE)}")


def diagnose_case(case: Case, rules: RuleSet) -> Report:
    sources = [Source(str(p)) for p in case.logs()]
    return diagnose_sources(sources, rules, expect_busbw=case.expect_busbw)


def check_case(case: Case, rules: RuleSet, report: Report | None = None) -> CaseResult:
    """Diagnose the case and say what, if anything, contradicts its label."""
    report = report or diagnose_case(case, rules)
    ids = [f.id for f in report.findings]
    worst_error = any(severity_rank(f.severity) >= severity_rank("error") for f in report.findings)
    problems: list[str] = []
    if case.label not in (None, HEALTHY) and (not ids or ids[0] != case.label):
        problems.append(f"top finding {ids[:1]} is not {case.label} (all: {ids})")
    positions = [ids.index(cid) if cid in ids else -1 for cid in case.expected]
    if -1 in positions:
        problems.append(f"missing {[c for c, p in zip(case.expected, positions) if p < 0]} (got {ids})")
    elif positions != sorted(positions):
        problems.append(f"rank order {ids} does not follow {case.expected}")
    present = sorted(set(ids) & set(case.absent))
    if present:
        problems.append(f"must not report {present} (got {ids})")
    if case.healthy and worst_error:
        bad = [f"{f.id}:{f.severity}" for f in report.findings if severity_rank(f.severity) >= severity_rank("error")]
        problems.append(f"healthy case reports {bad}")
    for cid, want in case.culprits.items():
        finding = next((f for f in report.findings if f.id == cid), None)
        if finding is None:
            problems.append(f"no {cid} finding to name culprits")
            continue
        for key, have in (("hosts", finding.hosts), ("tasks", finding.tasks), ("ranks", finding.ranks)):
            missing = [v for v in want.get(key, []) if v not in have]
            if missing:
                problems.append(f"{cid} should name {key} {missing} (names {have})")
    return CaseResult(case, ids, problems, worst_error)


@dataclass
class Tally:
    cases: int = 0
    failing: int = 0
    top1: int = 0
    top3: int = 0
    healthy: int = 0
    healthy_clean: int = 0

    def add(self, result: CaseResult) -> None:
        if result.case.label == HEALTHY:
            self.healthy += 1
            self.healthy_clean += result.top1
        elif result.case.label is not None:
            self.failing += 1
            self.top1 += result.top1
            self.top3 += result.top3
        self.cases += 1

    def to_json(self) -> dict:
        def rate(n: int, d: int) -> float | None:
            return round(n / d, 4) if d else None

        return {
            "cases": self.cases,
            "failing_jobs": self.failing,
            "top1": rate(self.top1, self.failing),
            "top3": rate(self.top3, self.failing),
            "healthy": self.healthy,
            "healthy_clean": rate(self.healthy_clean, self.healthy),
        }


def evaluate_cases(cases: Sequence[Case], rules: RuleSet) -> list[CaseResult]:
    return [check_case(case, rules) for case in cases]


def summarize(results: Sequence[CaseResult], show_holdout: bool = False) -> dict:
    """Top-1 / top-3 / healthy-clean per split and per expected cause, and the cases that miss.
    The holdout split's misses are only counted unless ``show_holdout``: their names and what the
    tool said of them are exactly what must not steer the next change (``holdout_misses``)."""
    splits: dict[str, Tally] = {}
    causes: dict[str, dict[str, Tally]] = {}
    evidence: dict[str, dict[str, Tally]] = {}
    for r in results:
        splits.setdefault(r.case.split, Tally()).add(r)
        splits.setdefault("all", Tally()).add(r)
        if r.case.evidence is not None:
            evidence.setdefault(r.case.evidence, {}).setdefault(r.case.split, Tally()).add(r)
            evidence[r.case.evidence].setdefault("all", Tally()).add(r)
        if r.case.label is not None:
            causes.setdefault(r.case.label, {}).setdefault(r.case.split, Tally()).add(r)
            causes[r.case.label].setdefault("all", Tally()).add(r)
    missed = [r for r in results if not r.passed or (r.case.label is not None and not r.top1)]
    hidden = 0 if show_holdout else sum(r.case.split == "holdout" for r in missed)
    misses = [
        {"case": str(r.case.path), "split": r.case.split, "label": r.case.label, "got": r.ids[:3],
         "problems": r.problems}
        for r in missed
        if show_holdout or r.case.split != "holdout"
    ]  # fmt: skip
    return {
        "schema": "slurmdiag.eval/1",
        "splits": {k: v.to_json() for k, v in sorted(splits.items())},
        "causes": {c: {k: v.to_json() for k, v in sorted(t.items())} for c, t in sorted(causes.items())},
        "evidence": {e: {k: v.to_json() for k, v in sorted(evidence[e].items())} for e in EVIDENCE if e in evidence},
        "misses": misses,
        "holdout_misses": hidden,
    }


def check_damage(
    results: Sequence[CaseResult], rules: RuleSet, damages: Sequence[Damage] = DAMAGES, show_holdout: bool = False
) -> dict:
    """Whether each case that passes as it is still passes after each kind of paste damage
    (diag.damage): ``{"damage": {name: {split: {"passing", "kept"}}}, "damage_misses": [...]}``, the
    holdout split's misses left out unless ``show_holdout``, as in :func:`summarize`. A case larger than a paste
    (PASTE_BYTES) is not damaged: nobody pastes it."""
    table: dict[str, dict[str, list[int]]] = {d.name: {} for d in damages}
    misses = []
    for r in results:
        if not r.passed:
            continue
        logs = r.case.logs()
        if sum(p.stat().st_size for p in logs) > PASTE_BYTES:
            continue
        blobs = [p.read_bytes() for p in logs]
        for damage in damages:
            sources = [MemorySource(str(p), damage.apply(b)) for p, b in zip(logs, blobs)]
            report = diagnose_sources(sources, rules, expect_busbw=r.case.expect_busbw)
            after = check_case(r.case, rules, report)
            for split in (r.case.split, "all"):
                counts = table[damage.name].setdefault(split, [0, 0])
                counts[0] += 1
                counts[1] += after.passed
            if not after.passed and (show_holdout or r.case.split != "holdout"):
                misses.append({"case": str(r.case.path), "damage": damage.name, "label": r.case.label, "got": after.ids[:3],
                               "problems": after.problems})  # fmt: skip
    return {
        "damage": {name: {split: {"passing": n, "kept": k} for split, (n, k) in sorted(per.items())}
                   for name, per in table.items()},
        "damage_misses": misses,
    }  # fmt: skip


def check_thin(results: Sequence[CaseResult], rules: RuleSet, arounds: Sequence[int], show_holdout: bool = False) -> dict:
    """Whether each failing case whose first finding is its label still gets that first finding
    when it is cut to a thin paste: the lines that finding cites and ``around`` lines either side
    (diag.damage.thin_paste), the files it cites nothing in left out, as a user pastes one host's
    error and a few lines: ``{"thin": {"thin-K": {split: {"passing", "kept"}}}, "thin_misses": [...]}``."""
    table: dict[str, dict[str, list[int]]] = {f"thin-{k}": {} for k in arounds}
    misses = []
    for r in results:
        if r.case.label in (None, HEALTHY) or not r.top1:
            continue
        top = diagnose_case(r.case, rules).findings[0]
        cited: dict[str, list] = {}
        for ev in top.evidence:
            cited.setdefault(ev.path, []).append(ev)
        logs = [p for p in r.case.logs() if str(p) in cited]
        if not logs:
            continue  # a finding from Slurm's record or the files' absence cites no line to keep
        blobs = {str(p): p.read_bytes() for p in logs}
        rows = {path: _record_rows(blob, cited[path]) for path, blob in blobs.items()}
        for around in arounds:
            name = f"thin-{around}"
            sources = [MemorySource(path, thin_paste(blob, rows[path], around)) for path, blob in blobs.items()]
            after = check_case(r.case, rules, diagnose_sources(sources, rules, expect_busbw=r.case.expect_busbw))
            for split in (r.case.split, "all"):
                counts = table[name].setdefault(split, [0, 0])
                counts[0] += 1
                counts[1] += after.top1
            if not after.top1 and (show_holdout or r.case.split != "holdout"):
                misses.append({"case": str(r.case.path), "thin": name, "label": r.case.label, "got": after.ids[:3]})
    return {
        "thin": {name: {split: {"passing": n, "kept": k} for split, (n, k) in sorted(per.items())}
                 for name, per in table.items()},
        "thin_misses": misses,
    }  # fmt: skip


def _record_rows(data: bytes, evidence: list) -> list[int]:
    """The rows of the records ``evidence`` cites: a record a terminal wrapped (rejoined when read) is
    cited at its first row with its whole text, so the rows that continue it go with it."""
    rows = data.decode("utf-8", "replace").split("\n")
    out = []
    for ev in evidence:
        whole = ev.text.strip()
        line = ev.line
        covered = len(rows[line - 1].strip()) if line <= len(rows) else 0
        out.append(line)
        # The next row continues the record while the record's text holds more than the rows so far, and that row.
        while covered < len(whole) and line < len(rows) and (more := rows[line].strip()) and more in whole:
            line += 1
            covered += len(more)
            out.append(line)
    return out


def _damage_rows(summary: dict, key: str = "damage") -> list[tuple[str, str, int, int]]:
    return [
        (name, split, c["passing"], c["kept"])
        for name, per_split in summary.get(key, {}).items()
        for split, c in per_split.items()
        if not (split == "all" and len(per_split) == 2)
    ]


def render_summary(summary: dict) -> str:
    """The evaluation as plain text: one line per split, a per-cause table, then each miss."""

    def pct(x: float | None) -> str:
        return "   -" if x is None else f"{100 * x:3.0f}%"

    out = ["split      cases  failing  top-1  top-3  healthy  clean"]
    for name, s in summary["splits"].items():
        out.append(
            f"{name:<10} {s['cases']:>5}  {s['failing_jobs']:>7}  {pct(s['top1'])}  {pct(s['top3'])}  "
            f"{s['healthy']:>7}  {pct(s['healthy_clean'])}"
        )
    out += ["", "cause                        split      cases  top-1  top-3"]
    for cause, per_split in summary["causes"].items():
        for name, s in per_split.items():
            if name == "all" and len(per_split) == 2:
                continue  # one split only: its row says it all
            top1 = s["healthy_clean"] if cause == HEALTHY else s["top1"]
            top3 = s["healthy_clean"] if cause == HEALTHY else s["top3"]
            out.append(f"{cause:<28} {name:<10} {s['cases']:>5}  {pct(top1)}  {pct(top3)}")
    if summary.get("evidence"):
        out += ["", "by what the excerpt's lines hold (cases a reader judged)", "evidence   split      cases  failing  top-1  top-3"]
        for kind, per_split in summary["evidence"].items():
            for name, s in per_split.items():
                if name == "all" and len(per_split) == 2:
                    continue  # one split only: its row says it all
                out.append(f"{kind:<10} {name:<10} {s['cases']:>5}  {s['failing_jobs']:>7}  {pct(s['top1'])}  {pct(s['top3'])}")
    if summary["misses"]:
        out += ["", "misses:"]
        for m in summary["misses"]:
            out.append(f"  [{m['split']}] {m['case']}: expected {m['label']}, got {m['got'] or 'nothing'}")
            out += [f"      {p}" for p in m["problems"]]
    if summary.get("holdout_misses"):
        out += ["", f"holdout: {summary['holdout_misses']} misses, not listed (--show-holdout lists them)"]
    if "damage" in summary:
        out += ["", "paste damage (of the cases that pass, how many still pass)", "damage                 split      passing   kept"]
        for name, split, n, k in _damage_rows(summary):
            out.append(f"{name:<22} {split:<10} {n:>7}  {k:>5}  {pct(k / n if n else None)}")
        for m in summary["damage_misses"]:
            out.append(f"  {m['damage']}: {m['case']}: {m['problems'][0] if m['problems'] else m['got']}")
    if "thin" in summary:
        out += ["", "thin pastes (of the failing cases answered right, how many still are when cut to the lines",
                "their first finding cites, K lines either side)", "thin paste             split      passing   kept"]
        for name, split, n, k in _damage_rows(summary, "thin"):
            out.append(f"{name:<22} {split:<10} {n:>7}  {k:>5}  {pct(k / n if n else None)}")
        for m in summary["thin_misses"]:
            out.append(f"  {m['thin']}: {m['case']}: expected {m['label']}, got {m['got'] or 'nothing'}")
    return "\n".join(out) + "\n"


def render_markdown_summary(summary: dict) -> str:
    """The evaluation as Markdown tables (a README, a pull request): splits, then each cause's
    cases and top-1 per split."""

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.0f}%"

    splits = summary["splits"]
    out = ["| split | cases | failing jobs | top-1 | top-3 | healthy | healthy clean |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, s in splits.items():
        out.append(
            f"| {name} | {s['cases']} | {s['failing_jobs']} | {pct(s['top1'])} | {pct(s['top3'])} | {s['healthy']} "
            f"| {pct(s['healthy_clean'])} |"
        )
    columns = [name for name in splits if name != "all"]
    out += ["", "| cause | " + " | ".join(f"{c}: cases, top-1" for c in columns) + " |"]
    out.append("|---|" + "---|" * len(columns))
    for cause, per_split in summary["causes"].items():
        cells = []
        for c in columns:
            s = per_split.get(c)
            rate = None if s is None else (s["healthy_clean"] if cause == HEALTHY else s["top1"])
            cells.append("–" if s is None else f"{s['cases']}, {pct(rate)}")
        out.append(f"| `{cause}` | " + " | ".join(cells) + " |")
    if summary.get("evidence"):
        out += ["", "| evidence in the excerpt | split | failing jobs | top-1 | top-3 | healthy | healthy clean |",
                "|---|---|---:|---:|---:|---:|---:|"]
        for kind, per_split in summary["evidence"].items():
            out += [f"| {kind} | {name} | {s['failing_jobs']} | {pct(s['top1'])} | {pct(s['top3'])} | {s['healthy']} "
                    f"| {pct(s['healthy_clean'])} |" for name, s in per_split.items()
                    if not (name == "all" and len(per_split) == 2)]  # one split only: its row says it all
    if "damage" in summary:
        out += ["", "| damage | split | passing | still passing |", "|---|---|---:|---:|"]
        out += [f"| {name} | {split} | {n} | {k} ({pct(k / n if n else None)}) |" for name, split, n, k in _damage_rows(summary)]
    if "thin" in summary:
        out += ["", "| thin paste | split | answered right | still right |", "|---|---|---:|---:|"]
        out += [f"| {name} | {split} | {n} | {k} ({pct(k / n if n else None)}) |"
                for name, split, n, k in _damage_rows(summary, "thin")]
    return "\n".join(out) + "\n"


@dataclass
class ExampleFailure:
    rule: Rule
    line: str
    should_match: bool
    hit: list[str]
    why: str = ""  # for a cue example: what went wrong

    def message(self) -> str:
        if self.why:
            return f"{self.rule.path}: rule '{self.rule.id}': cue example: {self.why} (got {self.hit}): {self.line!r}"
        if self.should_match:
            return f"{self.rule.path}: rule '{self.rule.id}': example should match but does not: {self.line!r}"
        return f"{self.rule.path}: rule '{self.rule.id}': example must not match, but {self.hit} did: {self.line!r}"


def check_examples(rules: RuleSet, only: Iterable[str] | None = None) -> list[ExampleFailure]:
    """Run every rule's ``examples`` through the real scanner (each line alone) and return the
    lines that match when they must not, or do not when they must; plus signatures no example uses."""
    scanner = Scanner(rules)
    wanted = set(only) if only is not None else None
    failures = []
    for rule in rules.rules:
        if wanted is not None and rule.id not in wanted:
            continue
        for line, should in [(x, True) for x in rule.examples_match] + [(x, False) for x in rule.examples_no_match]:
            scan = scanner.scan([MemorySource("example.log", (line + "\n").encode())])
            hit = sorted(n for (rid, n), st in scan.stats.items() if rid == rule.id and st.count)
            if not should:  # a fact signature is evidence for a condition: a healthy line may carry it
                hit = [n for n in hit if not rule.signature(n).fact]
            if bool(hit) != should:
                failures.append(ExampleFailure(rule, line, should, hit))
        data = "\n".join(rule.examples_match).encode() + b"\n"
        scan = scanner.scan([MemorySource("examples.log", data)])
        hit = {name for (rid, name), st in scan.stats.items() if rid == rule.id and st.count}
        for sig in rule.signatures:
            if not sig.fact and sig.name not in hit:
                failures.append(ExampleFailure(rule, f"(no match example uses signature {sig.name!r})", True, []))
        for line in rule.examples_match:
            diagnose_bytes(line.encode(), rules)  # a single line must never crash the diagnosis
        failures += _check_cue_examples(rule, rules, scanner)
    return failures


def _check_cue_examples(rule: Rule, rules: RuleSet, scanner: Scanner) -> list[ExampleFailure]:
    """Each ``cues.examples`` line must be a form no signature of the rule knows, and, diagnosed
    alone, must be reported as the rule's cause first."""
    failures = []
    for line in rule.examples_cue:
        scan = scanner.scan([MemorySource("example.log", (line + "\n").encode())])
        hit = sorted(
            n for (rid, n), st in scan.stats.items() if rid == rule.id and st.count and not rule.signature(n).fact
        )
        if hit:
            failures.append(ExampleFailure(rule, line, False, hit, "a signature knows this cue example"))
            continue
        top = [f.id for f in diagnose_bytes(line.encode(), rules).findings[:1]]
        if top != [rule.id]:
            failures.append(ExampleFailure(rule, line, True, top, "the cues do not make it this cause first"))
    return failures
