"""Guess a Slurm job id from log file names (``slurm-12345.out``, ``train-12345.err``, ``x-123_4.out``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

# sbatch's default pattern is slurm-%j.out; people keep the %j (or %A_%a for arrays) at the end.
_NAME = re.compile(r"(?:^|[-_.])(\d{3,}(?:_\d+)?)\.(?:out|err|log|txt)(?:\.gz)?$")


def guess_job_id(paths: Iterable[str]) -> str | None:
    """The job id all named files agree on, or None (no id, or files of different jobs)."""
    ids = set()
    for path in paths:
        if path == "-":
            continue
        m = _NAME.search(os.path.basename(path.rstrip("/")))
        if m:
            ids.add(m[1])
    return ids.pop() if len(ids) == 1 else None
