"""Checks of the job's own limits."""

from __future__ import annotations

import re

from diag.lint.context import Hit, LintContext
from diag.lint.script import time_minutes

LONG_JOB_MINUTES = 4 * 60
_HOOK_SIGNAL = re.compile(r"\b(?:SIG)?(?:USR1|USR2|TERM|INT|10|12|15)\b")


def time_limit_hook(ctx: LintContext) -> list[Hit]:
    """A long ``--time`` with no ``--signal`` and no trap or requeue: the limit kills the job with
    whatever it had not saved."""
    limit = ctx.script.option("time")
    if limit is None or limit.value is None:
        return []
    minutes = time_minutes(limit.value)
    if minutes is None or minutes <= LONG_JOB_MINUTES:
        return []
    if ctx.script.option("signal") is not None or "requeue" in ctx.script.directives:
        return []
    if any(_HOOK_SIGNAL.search(t.raw) for t in ctx.script.traps):
        return []
    if any("signal" in cmd.options for cmd in ctx.script.commands if cmd.launcher == "srun"):
        return []
    if any(re.search(r"\bscontrol\s+requeue\b", line) for line in ctx.script.lines):
        return []
    where = [limit.line] if limit.line else []
    return [
        Hit(
            f"--time={limit.value} without --signal=B:USR1@<seconds> or a checkpoint/requeue trap: at the limit "
            "Slurm kills the job and everything since the last checkpoint is lost",
            where,
            True,
            advice=True,
        )
    ]


VERBOSE_NODES = 8  # from here NCCL_DEBUG=INFO on every rank is a log-volume problem


def nccl_debug_volume(ctx: LintContext) -> list[Hit]:
    """NCCL_DEBUG=TRACE, or INFO (with every subsystem) on a large job: log volume, slower init."""
    nodes = ctx.nodes
    subsys = [v.value for v in ctx.assignments("NCCL_DEBUG_SUBSYS") if v.value]
    hits = []
    for value in ctx.assignments("NCCL_DEBUG"):
        level = (value.value or "").upper()
        if (
            level == "TRACE"
            or (level == "INFO" and nodes and nodes >= VERBOSE_NODES)
            or (level == "INFO" and nodes and nodes > 1 and any("ALL" in s.upper() for s in subsys))
        ):
            size = f" on {nodes} nodes" if nodes else ""
            hits.append(Hit(f"NCCL_DEBUG={value.value}{size}: every rank logs NCCL's {level} lines", [value.line],
                            True, advice=True))  # fmt: skip
    return hits
