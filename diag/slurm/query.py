"""Ask Slurm about one job: its state, exit codes, nodes and where it wrote its output.

``scontrol show job -o ID`` while slurmctld remembers the job (``MinJobAge``), then accounting
(``sacct --json``, then ``sacct -P``) once it has forgotten it. Job ids come as ``123``, an array
task ``123_4`` or a heterogeneous component ``123+1``. Output paths are expanded the way sbatch
does (``%x %j %u %N %A %a %%``; ``%t %n %s`` become a glob: one file per task/node/step).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from diag.hostlist import expand

JOB_ID_RE = re.compile(r"^(?P<job>\d+)(?:_(?P<task>\d+)|\+(?P<het>\d+))?$")
_KEY_RE = re.compile(r"(?:^|(?<=\s))(?P<key>[A-Za-z][A-Za-z0-9_:/]*)=")
_PATTERN_RE = re.compile(r"%(?P<width>\d*)(?P<code>[%AaJjNnstux])")
LOG_NAME_RE = re.compile(r"\.(?:out|err|log|txt)(?:\.gz)?$")
COMMAND_TIMEOUT_S = 20
MAX_RANK_FILES = 4096
NULL_VALUES = ("", "(null)", "None", "N/A", "Unknown", "n/a")
# The fields asked of ``sacct -P`` (StdOut/StdErr exist from 23.02; older sacct rejects them, so
# they are asked for first and dropped on "Invalid field"). sacct has no restart count (22.05 says
# 'Invalid field requested: "Restarts"'): only scontrol's Restarts= gives it.
SACCT_FIELDS = (
    "JobIDRaw,JobID,JobName,User,State,ExitCode,DerivedExitCode,Reason,NodeList,NNodes,Timelimit,Elapsed,"
    "Start,End,WorkDir"
)
SACCT_IO_FIELDS = ",StdOut,StdErr"
FILL_FIELDS = "JobIDRaw,User,ExitCode,DerivedExitCode"  # see fill_from_parsable
_INVALID_FIELD_RE = re.compile(r'invalid field requested:\s*"?(?P<field>[A-Za-z]+)', re.I)
NO_NODES = ("None assigned",)  # sacct's node list of a job that never ran

Runner = Callable[[Sequence[str]], "tuple[int, str, str]"]


class SlurmError(Exception):
    """Slurm could not tell us about the job; the message names what was tried."""


@dataclass
class JobInfo:
    """What Slurm knows about one job (or one array task / het component)."""

    job_id: str  # as Slurm prints it: 46, 123_4, 123+1
    raw_id: str = ""  # the numeric JobId (an array task or het component has its own)
    name: str = ""
    user: str = ""
    partition: str = ""  # scontrol and the JSON forms give it; sacct -o is not asked for it
    state: str = ""  # TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, CANCELLED, FAILED, COMPLETED, COMPLETING ...
    reason: str = ""
    exit_code: str = ""  # "<status>:<signal>" of the batch script
    derived_exit_code: str = ""  # the highest exit code of any step (sacct/jobcomp; scontrol has it from 23.02)
    node_list: str = ""
    nodes: list[str] = field(default_factory=list)
    num_nodes: int = 0
    batch_host: str = ""
    time_limit: str = ""
    run_time: str = ""
    restarts: int = 0
    stdout: str = ""
    stderr: str = ""
    work_dir: str = ""
    start_time: str = ""
    end_time: str = ""
    array_job_id: str = ""
    array_task_id: str = ""
    het_job_id: str = ""
    het_offset: str = ""
    source: str = "scontrol"  # which command answered
    raw: dict[str, str] = field(default_factory=dict)

    @property
    def base_state(self) -> str:
        """``CANCELLED by 0`` (sacct) -> ``CANCELLED``."""
        return self.state.split()[0] if self.state else ""

    def to_json(self) -> dict:
        return {
            "job_id": self.job_id,
            "name": self.name,
            "user": self.user,
            "partition": self.partition or None,
            "state": self.state,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "derived_exit_code": self.derived_exit_code or None,
            "node_list": self.node_list,
            "nodes": self.nodes,
            "num_nodes": self.num_nodes,
            "time_limit": self.time_limit,
            "run_time": self.run_time,
            "restarts": self.restarts,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "source": self.source,
        }


# --- parsing --------------------------------------------------------------------------------


def parse_key_values(text: str) -> dict[str, str]:
    """``Key=value Key2=a value with spaces`` -> dict. Values run to the next `` Key=``, so a path
    with spaces survives; multi-line (``scontrol show job``) and one-line (``-o``) forms both work."""
    text = " ".join(text.split())
    out: dict[str, str] = {}
    matches = list(_KEY_RE.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.setdefault(m["key"], text[m.end() : end].strip())
    return out


def _clean(value: str | None) -> str:
    return "" if value is None or value in NULL_VALUES else value


def _user(value: str) -> str:
    return value.split("(", 1)[0]  # "alice(1000)" -> "alice"


def parse_scontrol(text: str) -> list[JobInfo]:
    """Every job record in ``scontrol show job [-o]`` output (records start at ``JobId=``)."""
    records = [r for r in re.split(r"(?=(?:^|\s)JobId=)", text) if "JobId=" in r]
    return [job_from_scontrol(parse_key_values(r)) for r in records]


def job_from_scontrol(kv: dict[str, str]) -> JobInfo:
    raw_id = kv.get("JobId", "")
    array_job, array_task = _clean(kv.get("ArrayJobId")), _clean(kv.get("ArrayTaskId"))
    het_job, het_offset = _clean(kv.get("HetJobId")), _clean(kv.get("HetJobOffset"))
    if array_job and array_task:
        job_id = f"{array_job}_{array_task}"
    elif het_job and het_offset and het_offset != "0":
        job_id = f"{het_job}+{het_offset}"
    else:
        job_id = raw_id
    node_list = _clean(kv.get("NodeList"))
    return JobInfo(
        job_id=job_id,
        raw_id=raw_id,
        name=_clean(kv.get("JobName")),
        user=_user(kv.get("UserId", "")),
        partition=_clean(kv.get("Partition")),
        state=_clean(kv.get("JobState")),
        reason=_clean(kv.get("Reason")),
        exit_code=_clean(kv.get("ExitCode")),
        derived_exit_code=_clean(kv.get("DerivedExitCode")),
        node_list=node_list,
        nodes=expand(node_list) if node_list else [],
        num_nodes=max(_int(kv.get("NumNodes")), _tres_nodes(kv.get("TRES", ""))),
        batch_host=_clean(kv.get("BatchHost")),
        time_limit=_clean(kv.get("TimeLimit")),
        run_time=_clean(kv.get("RunTime")),
        restarts=_int(kv.get("Restarts")),
        stdout=_clean(kv.get("StdOut")),
        stderr=_clean(kv.get("StdErr")),
        work_dir=_clean(kv.get("WorkDir")),
        start_time=_clean(kv.get("StartTime")),
        end_time=_clean(kv.get("EndTime")),
        array_job_id=array_job,
        array_task_id=array_task,
        het_job_id=het_job,
        het_offset=het_offset,
        source="scontrol",
        raw=kv,
    )


def _tres_nodes(tres: str) -> int:
    """``TRES=cpu=2,mem=512M,node=2``: the nodes allocated. While a job is COMPLETING, NumNodes and
    NodeList shrink to the nodes still completing (an Epilog sees 1 of 2); the allocation's TRES does not."""
    m = re.search(r"(?:^|,)node=(\d+)", tres)
    return int(m[1]) if m else 0


def _int(value: str | None) -> int:
    value = (value or "").split("-")[0]  # NumNodes=2-4 while pending
    return int(value) if value.isdigit() else 0


def parse_sacct_json(text: str) -> list[JobInfo]:
    """``sacct -j ID --json`` (data_parser v0.0.38+): one JobInfo per job record."""
    data = json.loads(text)
    return [_job_from_sacct_json(j) for j in data.get("jobs", [])]


def _code(value) -> str:
    """sacct JSON exit codes: ``{"status": ..., "return_code": 3, "signal": {"signal_id": 9}}``
    (shapes vary by version; numbers may be ``{"set": true, "number": 3}``)."""
    if not isinstance(value, dict):
        return ""
    rc = _num(value.get("return_code"))
    sig = value.get("signal") or {}
    # data_parser v0.0.38 names it signal_id, v0.0.39+ id (a {"set", "number"} record)
    signal = _num(sig.get("id", sig.get("signal_id")) if isinstance(sig, dict) else sig)
    return f"{rc or 0}:{signal or 0}"


def _num(value) -> int | None:
    if isinstance(value, dict):
        return value.get("number") if value.get("set", True) else None
    return value if isinstance(value, int) else None


def _job_from_sacct_json(j: dict) -> JobInfo:
    state = j.get("state", {})
    current = state.get("current", "") if isinstance(state, dict) else str(state)
    if isinstance(current, list):
        current = current[0] if current else ""
    array = j.get("array") or {}
    het = j.get("het") or {}
    array_job = str(_num(array.get("job_id")) or "")
    task = _num(array.get("task_id"))
    array_task = "" if task is None else str(task)  # task 0 is a task (seen on the lab: 178_0 read as 185)
    raw_id = str(j.get("job_id", ""))
    het_job = str(_num(het.get("job_id")) or "")
    het_offset = str(_num(het.get("job_offset")) or "")
    if array_job and array_job != "0" and array_task:
        job_id = f"{array_job}_{array_task}"
    elif het_job and het_job != "0" and het_offset and het_offset != "0":
        job_id = f"{het_job}+{het_offset}"
    else:
        job_id = raw_id
    time = j.get("time") or {}
    node_list = _clean(j.get("nodes"))
    node_list = "" if node_list in NO_NODES else node_list
    alloc = j.get("allocation_nodes")
    limit = _num(time.get("limit"))
    return JobInfo(
        job_id=job_id,
        raw_id=raw_id,
        name=j.get("name", ""),
        user=j.get("user") or "",  # null in 22.05 for a user without an association
        partition=str(j.get("partition") or ""),
        state=str(current),
        reason=str((state.get("reason") if isinstance(state, dict) else "") or ""),
        exit_code=_code(j.get("exit_code")),
        derived_exit_code=_code(j.get("derived_exit_code")),
        node_list=node_list,
        nodes=expand(node_list) if node_list else [],
        num_nodes=_num(alloc) or 0 if not isinstance(alloc, int) else alloc,
        time_limit=f"{limit} min" if isinstance(limit, int) else "",
        run_time=f"{time.get('elapsed')} s" if isinstance(time.get("elapsed"), int) else "",
        restarts=_num(j.get("restart_cnt")) or 0,
        stdout=_clean(j.get("stdout")),
        stderr=_clean(j.get("stderr")),
        work_dir=_clean(j.get("working_directory")),
        array_job_id=array_job if array_job != "0" else "",
        array_task_id=array_task,
        het_job_id=het_job if het_job != "0" else "",
        het_offset=het_offset,
        source="sacct --json",
    )


def parse_sacct_parsable(text: str, fields: str) -> list[JobInfo]:
    """``sacct -P -n -X -o FIELDS`` lines (``|``-separated, in the order of ``fields``)."""
    names = fields.split(",")
    jobs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        row = dict(zip(names, line.split("|")))
        node_list = _clean(row.get("NodeList"))
        job_id = row.get("JobID", "")
        jobs.append(
            JobInfo(
                job_id=job_id,
                raw_id=row.get("JobIDRaw", ""),
                name=row.get("JobName", ""),
                user=row.get("User", ""),
                partition=_clean(row.get("Partition")),
                state=row.get("State", ""),
                reason=_clean(row.get("Reason")),
                exit_code=row.get("ExitCode", ""),
                derived_exit_code=row.get("DerivedExitCode", ""),
                node_list=node_list if node_list not in NO_NODES else "",
                nodes=expand(node_list) if node_list and node_list not in NO_NODES else [],
                num_nodes=_int(row.get("NNodes")),
                time_limit=_clean(row.get("Timelimit")),
                run_time=_clean(row.get("Elapsed")),
                restarts=_int(row.get("Restarts")),
                stdout=_clean(row.get("StdOut")),
                stderr=_clean(row.get("StdErr")),
                work_dir=_clean(row.get("WorkDir")),
                start_time=_clean(row.get("Start")),
                end_time=_clean(row.get("End")),
                array_job_id=job_id.split("_")[0] if "_" in job_id else "",
                array_task_id=job_id.split("_")[1] if "_" in job_id else "",
                het_job_id=job_id.split("+")[0] if "+" in job_id else "",
                het_offset=job_id.split("+")[1] if "+" in job_id else "",
                source="sacct -P",
            )
        )
    return jobs


# --- asking Slurm ---------------------------------------------------------------------------


def run_sacct_parsable(runner: Runner, argv: Sequence[str], fields: str) -> tuple[str, int, str, str]:
    """``argv -o FIELDS``; a field this sacct does not know (StdOut/StdErr before 23.02) is dropped
    and the query asked again. Returns the fields that answered, the exit status, stdout, stderr."""
    names = fields.split(",")
    while True:
        rc, out, err = runner([*argv, "-o", ",".join(names)])
        m = _INVALID_FIELD_RE.search(err + out) if rc != 0 else None
        bad = [n for n in names if m and n.lower() == m["field"].lower()]
        if not bad or len(names) == 1:
            return ",".join(names), rc, out, err
        names.remove(bad[0])


def fill_from_parsable(jobs: Sequence[JobInfo], runner: Runner, argv: Sequence[str]) -> None:
    """Correct what Slurm 22.05.8's ``sacct --json`` gets wrong, seen on the lab: a job that exited 3
    reads ``{"status": "SUCCESS", "return_code": 0}`` (signals come through) and a user without an
    association in the database reads ``"user": null``. Both come from one ``argv -P -n`` query of
    fields without free text (no '|' can shift them); where it fails the JSON's values stay."""
    _fields, rc, out, _err = run_sacct_parsable(runner, [*argv, "-P", "-n"], FILL_FIELDS)
    if rc != 0:
        return
    rows = {}
    for line in out.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and parts[0]:
            rows[parts[0]] = parts[1:]
    for job in jobs:
        if job.raw_id in rows:
            user, job.exit_code, job.derived_exit_code = rows[job.raw_id]
            job.user = job.user or user


def run_command(argv: Sequence[str]) -> tuple[int, str, str]:
    """Run a Slurm client; (returncode, stdout, stderr). A missing binary is returncode 127."""
    if shutil.which(argv[0]) is None:
        return 127, "", f"{argv[0]}: command not found"
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {COMMAND_TIMEOUT_S} s"
    except OSError as exc:
        return 126, "", exc.strerror or str(exc)
    return done.returncode, done.stdout, done.stderr


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def query_job(job_id: str, runner: Runner = run_command, *, raw: bool = False) -> list[JobInfo]:
    """The job's records: one, or several for a whole het job. ``raw``: a plain number is the
    numeric JobId of one record (what an epilog's SLURM_JOB_ID is), never a whole array.
    Raises :class:`SlurmError` naming every command tried and what each said."""
    m = JOB_ID_RE.match(job_id.strip())
    if not m:
        raise SlurmError(f"{job_id!r} is not a job id (forms: 123, 123_4 for an array task, 123+1 for a het component)")
    tried: list[str] = []
    rc, out, err = runner(["scontrol", "show", "job", "-o", job_id])
    if rc == 0 and "JobId=" in out:
        return select(parse_scontrol(out), job_id, raw)
    tried.append(f"scontrol show job -o {job_id}: {_first_line(err) or _first_line(out) or f'exit {rc}'}")
    rc, out, err = runner(["sacct", "-j", job_id, "--json"])
    if rc == 0 and out.lstrip().startswith("{"):
        try:
            jobs = select(parse_sacct_json(out), job_id, raw)
            if jobs:
                fill_from_parsable(jobs, runner, ["sacct", "-j", job_id, "-X"])
                return jobs
            tried.append(f"sacct -j {job_id} --json: no such job in accounting")
        except (ValueError, SlurmError) as exc:
            tried.append(f"sacct -j {job_id} --json: {exc}")
    else:
        tried.append(f"sacct -j {job_id} --json: {_first_line(err) or _first_line(out) or f'exit {rc}'}")
    if rc != 127:  # sacct exists: try the plain form (older sacct has no --json)
        fields, rc, out, err = run_sacct_parsable(runner, ["sacct", "-j", job_id, "-X", "-P", "-n"],
                                                  SACCT_FIELDS + SACCT_IO_FIELDS)  # fmt: skip
        if rc == 0 and out.strip():
            jobs = select(parse_sacct_parsable(out, fields), job_id, raw)
            if jobs:
                return jobs
        reason = _first_line(err) or ("no such job in accounting" if rc == 0 else f"exit {rc}")
        tried.append(f"sacct -j {job_id} -X -P: {reason}")
    raise SlurmError(f"job {job_id} not found; tried " + "; ".join(tried))


def select(jobs: list[JobInfo], job_id: str, raw: bool = False) -> list[JobInfo]:
    """The records that are ``job_id``: an exact array task / het component, all components of a
    het job, or the one job. A bare array id with several tasks is ambiguous: an error."""
    m = JOB_ID_RE.match(job_id)
    if not m or not jobs:
        return []
    if m["task"] is not None or m["het"] is not None:
        return [j for j in jobs if j.job_id == job_id] or jobs[:1]
    base = m["job"]
    if raw and any(j.raw_id == base for j in jobs) and not any(j.het_job_id == base for j in jobs):
        return [j for j in jobs if j.raw_id == base]
    het = [j for j in jobs if j.het_job_id == base]
    if het:
        return het
    tasks = [j for j in jobs if j.array_job_id == base and j.array_task_id]
    if len(tasks) > 1:
        names = ", ".join(j.job_id for j in tasks[:6]) + (" …" if len(tasks) > 6 else "")
        raise SlurmError(f"job {job_id} is an array of {len(tasks)} tasks ({names}); name one, e.g. {tasks[0].job_id}")
    exact = [j for j in jobs if j.raw_id == base or j.job_id == base]
    return exact or jobs[:1]


# --- where the job wrote ----------------------------------------------------------------------


def expand_pattern(pattern: str, job: JobInfo) -> str:
    """sbatch's filename pattern -> a path, or a glob when it depends on the task/node/step."""

    def sub(m: re.Match) -> str:
        code, width = m["code"], m["width"]

        def num(value: str) -> str:
            return value.zfill(int(width)) if width and value.isdigit() else value

        if code == "%":
            return "%"
        if code == "A":
            return num(job.array_job_id or job.raw_id)
        if code == "a":
            return num(job.array_task_id or "4294967294")  # sbatch prints NO_VAL for non-arrays
        if code in "jJ":
            return num(job.raw_id or job.job_id)
        if code == "u":
            return job.user or "*"
        if code == "x":
            return job.name or "*"
        if code == "N":
            return job.batch_host or (job.nodes[0] if job.nodes else "*")
        return "*"  # %t %n %s: one file per task / node / step

    if "%" not in pattern:
        path = pattern
    else:
        path = _PATTERN_RE.sub(sub, pattern.replace("\\\\", "\x00")).replace("\x00", "\\")
    if job.work_dir and not os.path.isabs(path):
        path = os.path.join(job.work_dir, path)
    return path


def output_paths(job: JobInfo) -> list[str]:
    """The job's stdout/stderr files (globs where the pattern names a task/node/step)."""
    out: list[str] = []
    patterns = [p for p in (job.stdout, job.stderr) if p and p != "/dev/null"]
    if not patterns and job.work_dir:
        # Slurm's default when --output is not given.
        patterns = ["slurm-%A_%a.out" if job.array_task_id else "slurm-%j.out"]
    for p in patterns:
        path = expand_pattern(p, job)
        if path not in out:
            out.append(path)
    return out


def _id_tokens(job: JobInfo) -> list[str]:
    """The forms of the job's id its files carry: the numeric JobId, and ``A_a`` for an array task."""
    tokens = {job.raw_id} if job.raw_id else set()
    if job.array_job_id and job.array_task_id:
        tokens.add(f"{job.array_job_id}_{job.array_task_id}")
    tokens.discard("")
    return sorted(tokens)


def _pattern_regex(pattern: str, job: JobInfo) -> re.Pattern | None:
    """The job's own output pattern as a regex over file names in its directory, for its siblings:
    ``train-%j.out`` names ``train-46.out``, ``train-46.err`` and ``train-46.rank3.log``, never
    ``train-460.out``. None when the pattern names no job (``out.log``: every job writes it)."""
    base = os.path.basename(pattern)
    if "%" not in base:
        # scontrol prints the path already expanded (train-46.out): the id's place is where it appears.
        for token in _id_tokens(job)[::-1]:  # the array form (10_2) before the bare number
            spots = list(re.finditer(r"(?:^|(?<=[-_.]))" + re.escape(token) + r"(?![\d+])(?!_\d)", base))
            if spots:
                m = spots[-1]
                code = "%A_%a" if "_" in token else "%j"
                base = base[: m.start()] + code + base[m.end() :]
                break
    if not re.search(r"%\d*[AjJ]", base):
        return None
    base = LOG_NAME_RE.sub("", base)  # the extension is free: .out names the .err beside it
    parts: list[str] = []
    pos = 0
    for m in _PATTERN_RE.finditer(base):
        parts.append(re.escape(base[pos : m.start()]))
        pos = m.end()
        code, width = m["code"], m["width"]
        value = {
            "%": "%",
            "A": job.array_job_id or job.raw_id,
            "a": job.array_task_id or "4294967294",
            "j": job.raw_id or job.job_id,
            "J": job.raw_id or job.job_id,
            "u": job.user,
            "x": job.name,
            "N": job.batch_host or (job.nodes[0] if len(job.nodes) == 1 else ""),
        }.get(code)
        if value and width and value.isdigit():
            value = value.zfill(int(width))
        parts.append(re.escape(value) if value else (r"\d+" if code in "tns" else r"[^/]+?"))
    parts.append(re.escape(base[pos:]))
    # After the stem: the extension, or a delimiter and more name (never a digit: train-460).
    return re.compile("^" + "".join(parts) + r"(?![_+]\d)(?:[-_.][^/]*)?" + LOG_NAME_RE.pattern)


def _token_regex(tokens: Sequence[str]) -> re.Pattern:
    """The id as a whole name part: a delimiter (or the start) before it, a delimiter after it, and
    not a piece of another id form: not ``3_46`` (task 46 of array 3), not ``46_3`` / ``46+1`` (a
    task or component of 46 when the job is not that one), not ``pmix9-7.err`` for 9 (the number
    in sbatch's %j place, last before the extension, is 7), not ``lr1e-10`` (a float)."""
    alt = "|".join(re.escape(t) for t in tokens)
    return re.compile(
        r"(?:^|(?<=[-_.]))(?<!\d[_+])(?<![\d.][eE]-)(?:" + alt + r")(?=[-_.])(?![_+]\d)"
        r"(?!-\d+(?:_\d+)?" + LOG_NAME_RE.pattern + ")"
    )


def rank_files(job: JobInfo, outputs: Sequence[str]) -> list[str]:
    """The job's other logs in the directories of its outputs: names its own StdOut/StdErr pattern
    makes (any extension), or names that carry its id as a whole part (``rank3-46.log``,
    ``46.rank3.err``). A file of another job whose name merely holds the digits (``epoch10.log``,
    ``pmix9-7.err`` for job 9) is not the job's. Subdirectories are not searched."""
    tokens = _id_tokens(job)
    if not tokens:
        return []
    matchers = [r for r in (_pattern_regex(p, job) for p in (job.stdout, job.stderr) if p) if r]
    matchers.append(_token_regex(tokens))
    found: list[str] = []
    for directory in dict.fromkeys(os.path.dirname(p) or "." for p in outputs):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not LOG_NAME_RE.search(name) or name.startswith("slurmdiag-"):
                continue
            if any(m.search(name) for m in matchers):
                path = os.path.join(directory, name)
                if os.path.isfile(path) and path not in found:
                    found.append(path)
            if len(found) >= MAX_RANK_FILES:
                return found
    return found


def job_files(jobs: Sequence[JobInfo]) -> tuple[list[str], list[str]]:
    """(files to read, paths/globs Slurm named that match nothing) for the job's records."""
    files: list[str] = []
    missing: list[str] = []
    for job in jobs:
        outs = output_paths(job)
        for path in outs:
            matches = (
                sorted(glob.glob(path)) if any(c in path for c in "*?[") else ([path] if os.path.exists(path) else [])
            )
            if not matches:
                missing.append(path)
            files.extend(m for m in matches if m not in files)
        files.extend(p for p in rank_files(job, outs) if p not in files)
    return files, missing
