"""Diagnosis: turn scan statistics and facts into ranked findings with causal links.

Each rule either uses the default condition (enough matching lines, optional multi-node gate)
or a named analyzer for what YAML cannot say. Rules run by phase so a late rule (the honest
``unexplained-failure``) sees what earlier ones found. Then symptoms are folded under the root
that explains them, and findings are ordered: severity, roots before symptoms, confidence,
earliest evidence.
"""

from __future__ import annotations

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule, RuleSet
from diag.diagnosis.analyzers import ANALYZERS
from diag.diagnosis.context import Context
from diag.diagnosis.cues import cue_findings
from diag.report import Finding
from diag.scan.scanner import ScanResult


def default_condition(rule: Rule, ctx: Context) -> list[Finding]:
    cond = rule.condition
    chosen = ctx.stats(rule)
    if sum(st.count for _, st in chosen) < cond.min_count:
        return []
    assumed: list[str] = []
    if cond.multi_node:
        spans, assumed = ctx.spans_nodes()
        if not spans:
            return []
    return [ctx.make_finding(rule, assumed=assumed)]


def evaluate(rules: RuleSet, scan: ScanResult, expect_busbw: float | None = None) -> list[Finding]:
    ctx = Context(scan=scan, facts=scan.facts, rules=rules.by_id(), expect_busbw=expect_busbw)
    # A one-node job, or an excerpt that does not say and shows no failure: what matters only
    # between nodes is then worth a warning at most. An excerpt of a failed job keeps the rule's
    # severity, and its findings say what they assumed.
    known = scan.facts.nodes_known()
    single_node = known is False or (known is None and not ctx.job_failed())
    for phase in sorted({r.condition.phase for r in rules.rules}):
        for rule in (r for r in rules.rules if r.condition.phase == phase):
            if rule.condition.analyzer:
                found = ANALYZERS[rule.condition.analyzer](rule, ctx)
            else:
                found = default_condition(rule, ctx)
            for finding in found:
                if single_node and rule.condition.single_node_severity:
                    if rule.condition.single_node_severity == "none":
                        continue
                    if severity_rank(rule.condition.single_node_severity) < severity_rank(finding.severity):
                        finding.severity = rule.condition.single_node_severity
                prior = ctx.findings.get(finding.id)
                if prior is None or finding.sort_key() < prior.sort_key():
                    ctx.findings[finding.id] = finding
    thin = sum(i.lines for i in scan.inputs) < PASTE_LINES
    if thin:
        for finding in ctx.findings.values():
            _weigh_thin_evidence(finding)
    for finding in cue_findings(ctx, _weigh_thin_evidence if thin else None):
        ctx.findings.setdefault(finding.id, finding)
    return rank(list(ctx.findings.values()), ctx.rules)


# An input this short is an excerpt someone pasted: a cause resting on one or two of its lines is
# likelier than the others, but the excerpt may have left out what would settle it.
PASTE_LINES = 60
THIN_LINES = 3


def _weigh_thin_evidence(finding: Finding) -> None:
    if finding.count >= THIN_LINES:
        return
    finding.confidence *= 0.7 + 0.1 * finding.count
    finding.assumed.append(
        f"the excerpt holds everything relevant: this rests on {finding.count or 'no'} "
        f"line{'s' if finding.count != 1 else ''} of a short excerpt"
    )


def rank(findings: list[Finding], rules: dict[str, Rule]) -> list[Finding]:
    """Fold symptoms under the best root that explains them, then order roots and their children."""
    present = {f.id: f for f in findings}
    for f in findings:
        f.explains = []
        f.explained_by = None
    roots_first = sorted(findings, key=_order_key)
    # A root another root names as its consequence first (the rendezvous the others waited in while
    # rank 0's port was taken or its node's container failed), then symptoms under the roots left.
    for only_roots in (True, False):
        for f in roots_first:
            if (f.role == "root") != only_roots or f.explained_by is not None or f.explains:
                continue
            for parent in roots_first:
                if parent is f or parent.explained_by is not None or parent.role != "root":
                    continue
                rule = rules.get(parent.id)
                if rule and f.id in rule.explains:
                    f.explained_by = parent.id
                    parent.explains.append(f.id)
                    break
    ordered: list[Finding] = []
    for f in sorted((f for f in findings if f.explained_by is None), key=_order_key):
        ordered.append(f)
        ordered.extend(sorted((c for c in findings if c.explained_by == f.id), key=_order_key))
    assert len(ordered) == len(present)
    return ordered


def _order_key(f: Finding) -> tuple:
    # The first failure in time is the prime suspect; file order only where lines carry no time.
    return (-severity_rank(f.severity), f.role != "root", -f.confidence, f.first_time(), f.first_order(), f.id)
