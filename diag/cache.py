"""A per-user cache for work that costs more than a small log's scan (compiled rules, databases).

Everything here is an optimisation: a missing, stale, unreadable or unwritable cache is rebuilt
or skipped silently, never an error.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("SLURMDIAG_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "slurmdiag"
    )
    return Path(base)


def read_bytes(name: str) -> bytes | None:
    try:
        return (cache_dir() / name).read_bytes()
    except OSError:
        return None


def write_bytes(name: str, data: bytes) -> None:
    path = cache_dir() / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old or the new file, whole
    except OSError:
        pass  # read-only home (an epilog, a container): work without the cache


def load_object(name: str):
    data = read_bytes(name)
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - a damaged cache entry is just rebuilt
        return None


def store_object(name: str, obj) -> None:
    write_bytes(name, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
