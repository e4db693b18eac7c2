"""The analyzers' toolbox: what an analyzer may look at (:class:`Context`) and how it builds a finding.

Analyzers import this module at the top; it imports nothing from the diagnosis that runs them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule, action_hosts, fill, fill_action
from diag.evidence import Evidence
from diag.hostlist import looks_redacted
from diag.input.framing import frame
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST, Facts
from diag.scan.scanner import ScanResult, SigStats

MAX_EVIDENCE_SHOWN = 8
MAX_VALUES_SHOWN = 6
MULTI_NODE_ASSUMED = "the job spans several nodes (the logs do not say how many)"
# A finding that rests on an assumption is less certain than one the logs prove.
ASSUMPTION_CONFIDENCE = 0.75
_NUM_SPLIT = re.compile(r"(\d+)")


def natural_key(text: str) -> list:
    # A digit run too long for int() (any bytes may name a host) sorts by its first 30 digits.
    return [int(p[:30]) if p.isdigit() else p for p in _NUM_SPLIT.split(text)]


# unexplained-failure's signatures for the scheduler's or operator's word that the whole job
# succeeded (a sacct job row COMPLETED 0:0, seff's/the mail's State: COMPLETED, Kubeflow's event).
SUCCESS_VERDICT = ("success_k8s", "success_sacct", "success_state")


@dataclass
class Context:
    """What an analyzer may look at: the scan, the facts and the findings of earlier phases."""

    scan: ScanResult
    facts: Facts
    findings: dict[str, Finding] = field(default_factory=dict)
    rules: dict[str, Rule] = field(default_factory=dict)
    expect_busbw: float | None = None  # --expect-busbw: the nccl-tests bus bandwidth this fabric should give

    def stats(self, rule: Rule, names: Iterable[str] | None = None) -> list[tuple[str, SigStats]]:
        if names is None:
            names = rule.condition.any or [s.name for s in rule.signatures if not s.fact]
        out = []
        for name in names:
            st = self.scan.stats.get((rule.id, name))
            if st is not None and st.count:
                out.append((name, st))
        return out

    def count(self, rule_id: str, names: Iterable[str] | None = None) -> int:
        rule = self.rules.get(rule_id)
        if rule is None:
            return 0
        return sum(st.count for _, st in self.stats(rule, names))

    def samples(self, rule: Rule, names: Iterable[str]) -> list[tuple[Evidence, dict[str, str]]]:
        out: list[tuple[Evidence, dict[str, str]]] = []
        for _, st in self.stats(rule, names):
            out.extend(st.samples)
        out.sort(key=lambda s: s[0].order)
        return out

    def captures(self, rule: Rule, group: str, names: Iterable[str] | None = None) -> list[str]:
        seen: dict[str, None] = {}
        for _, st in self.stats(rule, names):
            for value in st.captures.get(group, {}):
                seen[value] = None
        return list(seen)

    def host_for(self, ev: Evidence) -> str | None:
        """The host that printed ``ev``: its prefix, else the host NCCL placed its rank on; None for
        a placeholder the user pasted instead of the name (``xxxxx``), which may stand for any node."""
        host = ev.host
        if (host is None or looks_redacted(host)) and ev.rank is not None:
            host = self.facts.host_of_rank.get(ev.rank)
        return None if host is None or looks_redacted(host) else host

    def spans_nodes(self) -> tuple[bool, list[str]]:
        """Whether a finding that matters only between nodes may be reported, and what it then
        assumes: the logs show several nodes (yes, nothing assumed), show one (no), or do not say,
        as in a pasted excerpt of one host (yes, and the finding says it assumed it)."""
        known = self.facts.nodes_known()
        if known is None:
            return True, [MULTI_NODE_ASSUMED]
        return known, []

    def between_nodes_severity(self, severity: str, assumed: list[str]) -> str:
        """What a problem that costs only between nodes (TCP instead of IB) is worth: as the rule
        says where the logs show several nodes or a failure, a warning at most on an excerpt that
        shows neither."""
        if assumed and not self.job_failed() and severity_rank(severity) > severity_rank("warning"):
            return "warning"
        return severity

    def last_lines(self) -> dict[str, int]:
        """Each input's last line that says something: its line count less a paste's silent tail
        (closing fence, blank lines, a bare prompt)."""
        return {stats.path: stats.lines - stats.silent_tail for stats in self.scan.inputs}

    def evidence_at(self, order: tuple[int, int], text: str, host: str | None = None) -> Evidence:
        """Evidence for a line a fact remembered by its order ((input, line)) and text."""
        return Evidence(path=self.scan.inputs[order[0]].path, line=order[1], text=text, order=order, host=host)

    def job_failed(self) -> bool:
        """Whether the logs show the job failing: some failure line of unexplained-failure's, other than
        slurmstepd's error-level notices of runs that go on (pyxis' ignored options, the TMPDIR fallback,
        a memory limit reached at some point), and not where the scheduler's or operator's own verdict
        says the job completed (and no job row of a pasted sacct table says it failed)."""
        failed = self.failure_signatures()
        if not failed:
            return False
        completed = self.count("unexplained-failure", list(SUCCESS_VERDICT))
        return not completed or bool(self.count("unexplained-failure", ["sacct_failed"]))

    def failure_signatures(self) -> list[tuple[str, SigStats]]:
        rule = self.rules.get("unexplained-failure")
        if rule is None:
            return []
        failed = self.stats(rule, [s.name for s in rule.signatures if not s.fact])
        for error, notice in (("stepd_error", "stepd_notice"), ("sbatch_error", "sbatch_notice"), ("slurm_error", "srun_notice")):
            # Every such error line is a notice printed on runs that go on (pyxis' ignored options, an
            # sbatch option value it ignores before submitting): no failure of the job.
            failed = [(n, st) for n, st in failed if n != error or st.count != self.count(rule.id, [notice])]
        if [n for n, _ in failed] == ["task_exit"] and self._cleanup_exit(rule, failed[0][1]):
            return []
        return failed

    def _cleanup_exit(self, rule: Rule, exits: SigStats) -> bool:
        """Whether every task exit is exit code 1 after a killall that found nothing to kill: a job
        script's cleanup, whose status srun reports, not a failure of the run."""
        killed = [ev for ev, _ in self.samples(rule, ["nothing_killed", "nothing_killed_de"])]
        if not killed or exits.count > len(exits.samples):
            return False
        return all(
            g.get("how") == "Exited with exit code 1" and any(k.path == ev.path and k.line < ev.line for k in killed)
            for ev, g in exits.samples
        )

    def make_finding(
        self,
        rule: Rule,
        names: Iterable[str] | None = None,
        *,
        severity: str | None = None,
        confidence: float | None = None,
        detail: str | None = None,
        values: dict[str, str] | None = None,
        hosts: Iterable[str] | None = None,
        ranks: Iterable[int] | None = None,
        evidence: list[Evidence] | None = None,
        assumed: Iterable[str] = (),
    ) -> Finding:
        assumed = list(assumed)
        """A finding for ``rule`` from the named signatures' hits (default: the condition's)."""
        chosen = self.stats(rule, names)
        if evidence is None:
            evidence = pick_evidence(ev for _, st in chosen for ev, _ in st.samples)
        found_hosts: dict[str, None] = {}
        found_ranks: set[int] = set()
        for _, st in chosen:
            for h in st.hosts:
                found_hosts[h] = None
            found_ranks |= st.ranks
            for h in st.captures.get("host", {}):
                found_hosts[h] = None
            for r in st.captures.get("rank", {}):
                if r.isdigit():
                    found_ranks.add(int(r))
        captured: dict[str, dict] = {}
        for _, st in chosen:
            for group, vals in st.captures.items():
                captured.setdefault(group, {}).update(vals)
        merged = {k: _join(list(v)) for k, v in captured.items()}
        merged.update(values or {})
        rank_list = sorted(ranks if ranks is not None else found_ranks)
        if hosts is None:
            for ev in evidence:
                host = self.host_for(ev)
                if host:
                    found_hosts[host] = None
        host_list = sorted(
            (h for h in (hosts if hosts is not None else found_hosts) if h != UNNAMED_HOST), key=natural_key
        )
        task_list = sorted({ev.task for ev in evidence if ev.task is not None})
        merged.setdefault("hosts", _join(host_list) if host_list else "the nodes of this job")
        # A finding that rests on another rule's lines (names=[] and the evidence given) counts those lines.
        count = sum(st.count for _, st in chosen) or (len(evidence) if not chosen else 0)
        if detail is None:
            # What the first line says, without its prefixes, and how widespread it is.
            first = frame(evidence[0].text).payload.strip() if evidence else rule.title
            where = f" on {_join(host_list)}" if host_list else ""
            detail = f'"{shorten(first)}" ({count} line{"s" if count != 1 else ""}{where})'

        return Finding(
            id=rule.id,
            title=rule.title,
            severity=severity or rule.severity,
            role=rule.role,
            confidence=(rule.confidence if confidence is None else confidence)
            * (ASSUMPTION_CONFIDENCE if assumed else 1.0),
            detail=fill(detail, merged),
            remediation=fill(rule.remediation, merged),
            action=fill_action(rule.action, {**merged, "hosts": action_hosts(host_list)}) if rule.action else "",
            hosts=host_list,
            ranks=rank_list,
            tasks=task_list,
            evidence=evidence,
            settings=[fill(s, merged) for s in rule.settings],
            references=list(rule.references),
            count=count,
            assumed=list(assumed),
        )


def _join(values: list[str]) -> str:
    shown = values[:MAX_VALUES_SHOWN]
    more = len(values) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def shorten(text: str, limit: int = 200) -> str:
    """A log line quoted in a finding's text, cut with an ellipsis where it is too long (at a space when one is
    near the end, so that no word is cut in half)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 3 // 4:
        cut = cut[:space]
    return cut.rstrip() + "…"


def pick_evidence(items: Iterable[Evidence], limit: int = MAX_EVIDENCE_SHOWN) -> list[Evidence]:
    """The first line of each host/rank first (so every culprit is shown), then the earliest rest."""
    ordered = sorted(set(items), key=Evidence.file_order)
    chosen: list[Evidence] = []
    seen_where: set = set()
    for ev in ordered:
        where = (ev.host, ev.rank, ev.task)
        if where not in seen_where:
            seen_where.add(where)
            chosen.append(ev)
        if len(chosen) >= limit:
            break
    for ev in ordered:
        if len(chosen) >= limit:
            break
        if ev not in chosen:
            chosen.append(ev)
    return sorted(chosen, key=Evidence.file_order)


def hosts_text(hosts: Iterable[str]) -> str:
    """Host names in natural order, six at most, then how many more."""
    hosts = sorted(hosts, key=natural_key)
    return ", ".join(hosts[:6]) + (f" (+{len(hosts) - 6} more)" if len(hosts) > 6 else "")
