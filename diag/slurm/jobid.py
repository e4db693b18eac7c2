"""Guess a Slurm job id from log file names (``slurm-12345.out``, ``train-12345.err``, ``x-123_4.out``),
and sort files of several jobs into one group per job."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

# sbatch's default pattern is slurm-%j.out; people keep the %j (or %A_%a for arrays) at the end.
# Shorter numbers there are more often a rank or a node (rank-3.log) than a job, except in
# sbatch's own default name.
_NAME = re.compile(r"(?:^|[-_.])(\d{3,}(?:_\d+)?)\.(?:out|err|log|txt)(?:\.gz)?$")
_DEFAULT_NAME = re.compile(r"^slurm-(\d+(?:_\d+)?)\.out(?:\.gz)?$")
# Files named by a run of consecutive numbers (out-1234-100.log ... out-1234-131.log) are one
# job's tasks, not that many jobs: from this many on, a contiguous run is not split.
TASK_RUN = 8


def job_id_of(path: str) -> str | None:
    """The job id a file's name carries, or None."""
    if path == "-":
        return None
    name = os.path.basename(path.rstrip("/"))
    m = _DEFAULT_NAME.search(name) or _NAME.search(name)
    return m[1] if m else None


def guess_job_id(paths: Iterable[str]) -> str | None:
    """The job id all named files agree on, or None (no id, or files of different jobs)."""
    ids = {i for i in (job_id_of(p) for p in paths) if i}
    return ids.pop() if len(ids) == 1 else None


def _looks_like_tasks(ids: Sequence[str]) -> bool:
    if len(ids) < TASK_RUN or not all(i.isdigit() for i in ids):
        return False
    numbers = sorted(int(i) for i in ids)
    return numbers[-1] - numbers[0] == len(numbers) - 1


def group_by_job(paths: Sequence[str]) -> list[tuple[str | None, list[int]]]:
    """(job id, indexes into ``paths``) per job when the names carry several job ids, in the order
    each job first appears; files without an id join the only job, or form one group of their own
    (id None) when there are several. One group (id None) when there is nothing to split."""
    ids = [job_id_of(p) for p in paths]
    distinct = list(dict.fromkeys(i for i in ids if i))
    if len(distinct) < 2 or _looks_like_tasks(distinct):
        return [(None, list(range(len(paths))))]
    groups: dict[str | None, list[int]] = {i: [] for i in distinct}
    for index, job in enumerate(ids):
        groups.setdefault(job, []).append(index)
    return list(groups.items())
