"""Honesty about coverage: which kinds of evidence a job's logs held, and which causes therefore
could not be checked at all (an all-clear over a log without NCCL INFO lines says nothing about IB).
"""

from __future__ import annotations

from collections.abc import Iterable

from diag.report import Coverage, Finding, Unchecked
from diag.scan.facts import Facts

# The causes whose analyzers read only what one kind of evidence says, and how to capture it.
# Kept to causes that truly cannot show without it: a cause also seen from other lines is not listed
# (pmix-not-used has MPI's own messages; rendezvous, port and world-size errors are printed by the
# processes themselves, so a missing launcher log leaves no cause unchecked: it is only reported).
NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "nccl_info": (
        ("nccl-tcp-fallback", "gdr-disabled", "nccl-ib-hca-wrong", "ib-hca-mismatch-nodes", "nccl-ib-disabled",
         "nccl-version-mismatch"),
        "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see NCCL's transport, HCAs and GPUDirect",
    ),
    "slurm": (
        ("job-time-limit", "job-oom", "node-failure", "preempted", "job-cancelled"),
        "include the job's Slurm output (slurm-JOBID.out/.err) or run 'slurmdiag job JOBID' for Slurm's record",
    ),
}  # fmt: skip


def assess(facts: Facts, findings: Iterable[Finding], rule_ids: Iterable[str], slurm_record: bool) -> Coverage:
    """The report's coverage. Causes already found, or whose rule is not loaded, are not listed."""
    present = {
        "nccl_info": facts.saw_nccl_info(),
        "slurm_messages": facts.slurm_messages,
        "slurm_record": slurm_record,
        "launcher": facts.launcher,
    }
    seen = {"nccl_info": present["nccl_info"], "slurm": facts.slurm_messages or slurm_record}
    found = {f.id for f in findings}
    loaded = set(rule_ids)
    unchecked = []
    for kind, (causes, how) in NEEDS.items():
        if seen[kind]:
            continue
        left = [c for c in causes if c in loaded and c not in found]
        if left:
            unchecked.append(Unchecked("slurm_messages" if kind == "slurm" else kind, left, how))
    return Coverage(present, unchecked, sorted(loaded))
