"""``slurmdiag fleet compact DIR``: the only writer of the store.

    DIR/spool/<day>/<cluster>-<job>.json    one record per job (epilog --fleet-dir)
    DIR/shards/*.jsonl                      one file per scan task (fleet scan)
    DIR/store/month=YYYY-MM/fleet.parquet   the store, one file per month of job end
    DIR/rejected/                           input files that held a line that is not a record

Every input line is checked before DuckDB sees it: a corrupt or half-written line is reported as
``file:line`` and skipped, and the other lines of that file are kept. Records are merged with the
months they touch, newest wins per (cluster, job, rules hash), and each month file is written beside
the old one and renamed over it, so a reader never sees half a store and a crash loses nothing (the
inputs are removed only after, and a re-run folds them again to the same result). Run twice, it
changes nothing: the second run finds no input.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from diag.fleet.record import COLUMNS, SCHEMA, dumps, key

INSTALL_HINT = (
    "DuckDB is needed for `fleet compact` and `fleet report`: pip install 'slurmdiag[fleet]' (or: pip install duckdb)"
)


class FleetError(Exception):
    """A fleet command cannot run (DuckDB missing, no store); the message says what to do."""


def duckdb_module():
    try:
        import duckdb
    except ImportError as exc:
        raise FleetError(INSTALL_HINT) from exc
    return duckdb


def store_glob(fleet_dir: str) -> str:
    return os.path.join(fleet_dir, "store", "month=*", "fleet.parquet")


def input_files(fleet_dir: str) -> list[str]:
    """Finished record files only: a producer's temporary file starts with a dot until it is renamed."""
    spool = glob.glob(os.path.join(fleet_dir, "spool", "*", "[!.]*.json"))
    shards = glob.glob(os.path.join(fleet_dir, "shards", "[!.]*.jsonl"))
    return sorted(spool) + sorted(shards)


def check_record(line: str) -> tuple[dict | None, str | None]:
    """(record, None) or (None, why it is not one)."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        return None, f"not JSON ({exc.msg}; a half-written line?)"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    if record.get("schema") != SCHEMA:
        return None, f"schema is {record.get('schema')!r}, not {SCHEMA}"
    for name in ("cluster", "job_id", "rules_sha256"):
        if not isinstance(record.get(name), str) or not record[name]:
            return None, f"no {name}"
    for name in ("nodes", "nccl_versions", "findings"):
        if not isinstance(record.get(name, []), list):
            return None, f"{name} is not a list"
    if not all(isinstance(n, str) for n in record.get("nodes", [])):
        return None, "nodes holds a non-string"
    for f in record.get("findings", []):
        if not isinstance(f, dict) or not isinstance(f.get("id"), str):
            return None, "a finding without an id"
        if not all(isinstance(f.get(k, []), list) for k in ("hosts", "ranks", "devices")):
            return None, "a finding's hosts/ranks/devices are not lists"
        if not all(isinstance(r, int) for r in f.get("ranks", [])):
            return None, "a finding's ranks hold a non-integer"
    sample = record.get("error_sample")
    if sample is not None:  # absent from records written before it existed
        if not isinstance(sample, list):
            return None, "error_sample is not a list"
        for line in sample:
            if not isinstance(line, dict) or not isinstance(line.get("text"), str):
                return None, "an error_sample line without text"
            if line.get("host") is not None and not isinstance(line["host"], str):
                return None, "an error_sample line's host is not a string"
            if not isinstance(line.get("count", 1), int):
                return None, "an error_sample line's count is not an integer"
    for name, kind in COLUMNS.items():
        if kind == "VARCHAR" and record.get(name) is not None and not isinstance(record[name], str):
            return None, f"{name} is not a string"
    return record, None


def read_records(path: str) -> Iterator[tuple[int, dict | None, str | None]]:
    """(line number, record or None, problem or None) for every non-blank line of one file."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                record, why = check_record(line)
                yield number, record, why


def month_of(record: dict) -> str:
    stamp = record.get("end_time") or record.get("scanned_at") or ""
    return stamp[:7] if len(stamp) >= 7 and stamp[4] == "-" else "unknown"


@dataclass
class CompactResult:
    files: int = 0
    records: int = 0
    rejected: list[str] = field(default_factory=list)  # "file:line: why"
    months: list[str] = field(default_factory=list)
    rows: int = 0  # in the store after


def _columns_sql() -> str:
    return "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in COLUMNS.items()) + "}"


def _select_list() -> str:
    return ", ".join(f'"{name}"' for name in COLUMNS)


LOCK = ".compact.lock"


@contextlib.contextmanager
def _only_writer(fleet_dir: str) -> Iterator[None]:
    """Refuse a second compact while one runs: two would each fold a different set of new files
    and the later rename would drop the other's records after their files were removed. O_EXCL
    creation is atomic on local file systems and NFSv3+. A crash leaves the file: the message says
    whose it is, so a person can check and remove it."""
    store = os.path.join(fleet_dir, "store")
    os.makedirs(store, exist_ok=True)
    path = os.path.join(store, LOCK)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                owner = fh.read().strip()[:200]
        except OSError:
            owner = "?"
        raise FleetError(
            f"another `fleet compact` holds {path} ({owner or 'no owner written'}); "
            "if it is not running any more, remove that file and run again"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"host {socket.gethostname()} pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n")
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def compact(fleet_dir: str) -> CompactResult:
    duckdb = duckdb_module()
    with _only_writer(fleet_dir):
        return _compact(duckdb, fleet_dir)


def _compact(duckdb, fleet_dir: str) -> CompactResult:
    result = CompactResult()
    files = input_files(fleet_dir)
    by_month: dict[str, list[str]] = {}
    seen: dict[str, os.stat_result] = {}
    damaged: set[str] = set()
    for path in files:
        try:
            seen[path] = os.stat(path)
            for number, record, why in read_records(path):
                if record is None:
                    result.rejected.append(f"{path}:{number}: {why}")
                    damaged.add(path)
                    continue
                by_month.setdefault(month_of(record), []).append(dumps(record))
                result.records += 1
        except OSError as exc:
            result.rejected.append(f"{path}: unreadable ({exc.strerror or exc})")
            seen.pop(path, None)
    result.files = len(seen)
    store = os.path.join(fleet_dir, "store")
    for month, lines in sorted(by_month.items()):
        _merge_month(duckdb, os.path.join(store, f"month={month}"), lines)
        result.months.append(month)
    # A month file written before a column existed gets it (null), so every file of the store has
    # one schema and a reader can glob them all.
    for target in sorted(glob.glob(store_glob(fleet_dir))):
        if _missing_columns(duckdb, target):
            _merge_month(duckdb, os.path.dirname(target), [])
    _retire_inputs(fleet_dir, seen, damaged)
    result.rows = count_rows(fleet_dir) if os.path.isdir(store) else 0
    return result


def _merge_month(duckdb, folder: str, lines: list[str]) -> None:
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, "fleet.parquet")
    fd, incoming = tempfile.mkstemp(prefix=".incoming-", suffix=".jsonl", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
    fd, out = tempfile.mkstemp(prefix=".fleet-", suffix=".parquet", dir=folder)
    os.close(fd)
    try:
        con = duckdb.connect()
        cols = _select_list()
        parts = []
        if lines:
            parts.append(
                f"SELECT {cols} FROM read_json({sql_str(incoming)}, format='newline_delimited', "
                f"columns={_columns_sql()})"
            )
        if os.path.exists(target):
            missing = _missing_columns(duckdb, target)  # a file from before a column existed: null there
            old = ", ".join(f'NULL::{COLUMNS[n]} AS "{n}"' if n in missing else f'"{n}"' for n in COLUMNS)
            parts.append(f"SELECT {old} FROM read_parquet({sql_str(target)})")
        sources = " UNION ALL ".join(parts)
        # Newest wins; among records scanned in the same second the larger text wins, so the
        # outcome does not depend on the order files were listed in.
        con.execute(
            f"COPY (SELECT {cols} FROM ({sources}) "
            "QUALIFY row_number() OVER (PARTITION BY cluster, job_id, rules_sha256 "
            "ORDER BY scanned_at DESC NULLS LAST, CAST(findings AS VARCHAR) DESC, CAST(nodes AS VARCHAR) DESC, "
            "coalesce(user, '') DESC, coalesce(state, '') DESC, CAST(error_sample AS VARCHAR) DESC NULLS LAST) = 1 "
            "ORDER BY end_time NULLS LAST, cluster, job_id, rules_sha256) "
            f"TO {sql_str(out)} (FORMAT parquet, COMPRESSION zstd)"
        )
        con.close()
        os.replace(out, target)
    finally:
        for tmp in (incoming, out):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _missing_columns(duckdb, parquet: str) -> set[str]:
    con = duckdb.connect()
    try:
        have = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM read_parquet({sql_str(parquet)})").fetchall()}
    finally:
        con.close()
    return set(COLUMNS) - have


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _retire_inputs(fleet_dir: str, seen: dict[str, os.stat_result], damaged: set[str]) -> None:
    """Remove the folded inputs; keep a damaged one under rejected/ for a person to look at. A file
    replaced since it was read (the epilog re-ran for that job) is left for the next run."""
    for path, before in seen.items():
        try:
            now = os.stat(path)
        except OSError:
            continue
        if (now.st_ino, now.st_mtime_ns, now.st_size) != (before.st_ino, before.st_mtime_ns, before.st_size):
            continue
        if path in damaged:
            rejected = os.path.join(fleet_dir, "rejected")
            os.makedirs(rejected, exist_ok=True)
            name = os.path.relpath(path, fleet_dir).replace(os.sep, "__")
            with contextlib.suppress(OSError):
                shutil.move(path, os.path.join(rejected, name))
            continue
        with contextlib.suppress(OSError):
            os.unlink(path)


def count_rows(fleet_dir: str) -> int:
    if not glob.glob(store_glob(fleet_dir)):
        return 0
    duckdb = duckdb_module()
    con = duckdb.connect()
    try:
        return con.execute(f"SELECT count(*) FROM read_parquet({sql_str(store_glob(fleet_dir))})").fetchone()[0]
    finally:
        con.close()


def known_keys(fleet_dir: str) -> set[tuple[str, str, str]]:
    """(cluster, job, rules hash) of every record already there (store, spool, shards): what a
    rescan with the same rules can skip. Without DuckDB only the not-yet-compacted files count."""
    keys: set[tuple[str, str, str]] = set()
    for path in input_files(fleet_dir):
        with contextlib.suppress(OSError):
            for _n, record, _why in read_records(path):
                if record is not None:
                    keys.add(key(record))
    if glob.glob(store_glob(fleet_dir)):
        with contextlib.suppress(FleetError):
            con = duckdb_module().connect()
            try:
                rows = con.execute(
                    f"SELECT DISTINCT cluster, job_id, rules_sha256 FROM read_parquet({sql_str(store_glob(fleet_dir))})"
                ).fetchall()
            finally:
                con.close()
            keys |= {(str(a), str(b), str(c)) for a, b, c in rows}
    return keys
