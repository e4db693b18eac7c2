"""nccl-debug-verbose: NCCL_DEBUG=INFO left on for a large job."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.context import Context
from diag.report import Finding

INFO_VERBOSE_RANKS = 64

INFO_VERBOSE_LINES = 1_000_000


def debug_verbose(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    info_ranks = max(len(facts.host_of_rank), sum(st.count for _, st in ctx.stats(rule, ["init_complete"])))
    lines = sum(i.lines for i in ctx.scan.inputs)
    if info_ranks == 0:
        return []
    if facts.max_nranks >= INFO_VERBOSE_RANKS and info_ranks >= INFO_VERBOSE_RANKS:
        detail = f"NCCL_DEBUG=INFO is on for all {facts.max_nranks} ranks of this job ({lines:,} log lines)"
    elif lines >= INFO_VERBOSE_LINES:
        detail = f"NCCL_DEBUG=INFO output fills this job's log ({lines:,} lines)"
    else:
        return []
    samples = [ev for ev, _ in ctx.samples(rule, ["init_complete"])][:3]
    return [
        ctx.make_finding(
            rule, ["init_complete", "debug_env"], detail=detail + ".", evidence=samples, hosts=[], ranks=[]
        )
    ]
