"""Feed a few log lines through the real pipeline and look up what the diagnosis found.

The analyzer tests write each log as a list of lines (one list per file of the job), in the exact
forms NCCL, PyTorch, Slurm and pyxis print, and assert on the findings a user would read.
"""

from __future__ import annotations

from diag.api import diagnose_bytes
from diag.catalog.model import RuleSet
from diag.report import Finding, Report


def one_node(host: str = "slinky-1") -> list[str]:
    """NCCL's own word that the communicator spans one node: without it, a log that names one host
    is an excerpt whose node count is unknown, and findings about inter-node traffic still stand."""
    return [f"{host}:13:13 [0] NCCL INFO comm 0x5581 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0"]


def diagnose(rules: RuleSet, *files: list[str]) -> Report:
    """One job whose files hold ``files`` (each a list of lines)."""
    return diagnose_bytes([("\n".join(lines) + "\n").encode() for lines in files], rules)


def found(report: Report, cause: str) -> Finding:
    """The finding ``cause``; fails the test, listing what was found instead, when it is absent."""
    by_id = {f.id: f for f in report.findings}
    assert cause in by_id, f"{cause} not found; found: {sorted(by_id)}"
    return by_id[cause]


def top(report: Report, cause: str) -> Finding:
    """The first finding, which must be ``cause``; fails the test, listing the order found instead."""
    assert report.findings and report.findings[0].id == cause, [f.id for f in report.findings]
    return report.findings[0]


def leads(rules: RuleSet, lines: list[str], cause: str, says: str, not_also: str) -> Report:
    """Diagnose ``lines``: ``cause`` comes first, its detail says ``says``, and ``not_also`` (the
    cause a reader might wrongly take it for) is not reported beside it."""
    report = diagnose(rules, lines)
    assert says in top(report, cause).detail
    assert not_also not in ids(report), [f.id for f in report.findings]
    return report


def ids(report: Report) -> set[str]:
    return {f.id for f in report.findings}
