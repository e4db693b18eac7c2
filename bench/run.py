"""Benchmark slurmdiag against ripgrep and grep on generated job logs, in one run.

    python bench/run.py                  # 100M and 1G logs, dense 256M logs at 4 densities, startup, pathological inputs
    python bench/run.py --quick          # 20M logs (classic and dense) + small pathological inputs
    python bench/run.py --sizes 100M     # one size
    python bench/run.py --sizes '' --no-patho --densities 0.005,0.02,0.13,0.30 --dense-size 1G   # dense only

Every tool runs once, warm (the file is read to /dev/null first), under a timeout. Wall time covers
the whole process (start, rule compilation, scan, report). Peak RSS is the child's ``ru_maxrss``
from ``os.wait4``. Data goes to bench/data/ (reused when the seed and size match), results to
bench/out/ (the table is also written to bench/out/latest.md).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import gen_log
import patho

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
DATA = os.path.join(BENCH, "data")
OUT = os.path.join(BENCH, "out")
MB = 1e6
SLURMDIAG = [sys.executable, "-m", "diag"]


def _engines() -> list[str]:
    sys.path.insert(0, ROOT)
    from diag.scan.engines import available_engines

    return available_engines()


ENGINES = _engines()


def _core_built() -> bool:
    sys.path.insert(0, ROOT)
    from diag.scan import core

    return core.built()
C_ENV = {**os.environ, "LC_ALL": "C"}
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
RG_BASE = "rg --no-unicode -c -f"  # the "x rg" baseline: byte semantics, like LC_ALL=C grep


# -- running and measuring ------------------------------------------------------------------------
@dataclass
class Run:
    wall: float
    rss_mb: float
    pss_mb: float  # the whole process tree (slurmdiag's workers included), sampled; shared pages counted once
    rc: int
    timed_out: bool
    stdout: str
    stderr: str


def measure(cmd: list[str], timeout: float, name: str, env: dict | None = None) -> Run:
    """Run ``cmd`` with stdout/stderr to files under bench/out; wall time and the child's peak RSS.

    Peak RSS comes from GNU time (``%M``) when /usr/bin/time exists. Without it, ``ru_maxrss`` from
    ``os.wait4`` is used, which also counts the forked copy of this Python process (a ~30 MB floor).
    """
    out_path, err_path = os.path.join(OUT, f"{name}.stdout"), os.path.join(OUT, f"{name}.stderr")
    rss_path = os.path.join(OUT, f"{name}.rss")
    full = [GNU_TIME, "-f", "%M", "-o", rss_path, *cmd] if GNU_TIME else cmd
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=out, stderr=err, cwd=ROOT, env=env, start_new_session=True)
        killed = threading.Event()
        timer = threading.Timer(timeout, _kill, (proc.pid, killed))
        timer.start()
        done, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_sample_pss, args=(proc.pid, done, peak), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss_mb = _time_rss(rss_path) if GNU_TIME else usage.ru_maxrss / 1024
    return Run(wall, rss_mb, peak[0] / 1024, proc.returncode, killed.is_set(), _read(out_path), _read(err_path))


def _sample_pss(session: int, done: threading.Event, peak: list[int]) -> None:
    """Every 20 ms, the summed proportional set size (KiB) of the processes in ``session``: with
    workers, the peak RSS of one process (GNU time's %M) is not the whole cost."""
    while not done.wait(0.02):
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[-1].split()[3]) != session:
                        continue
                with open(f"/proc/{entry}/smaps_rollup") as f:
                    total += next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
            except (OSError, ValueError, IndexError):
                continue
        peak[0] = max(peak[0], total)


def _time_rss(path: str) -> float:
    """The last line of GNU time's ``-o`` file is ``%M`` (KiB); earlier lines say why the command failed."""
    try:
        with open(path) as f:
            return int(f.read().split()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        return float("nan")


def _kill(pid: int, killed: threading.Event) -> None:
    killed.set()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _read(path: str, limit: int = 4 << 20) -> str:
    with open(path, "rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def warm(path: str) -> int:
    """Put the file in the page cache (the equivalent of ``cat file > /dev/null``); return its line feeds."""
    lines = 0
    with open(path, "rb", buffering=0) as f:
        while block := f.read(16 << 20):
            lines += block.count(b"\n")
    return lines


# -- patterns ---------------------------------------------------------------------------------------
_GROUP_OPEN = re.compile(r"\(\?(?:P<\w+>|:)")
_NAMED = re.compile(r"\(\?P<\w+>")
_OUTSIDE = {"d": "[0-9]", "D": "[^0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]",
            "W": "[^[:alnum:]_]", "b": r"\b"}  # fmt: skip
_INSIDE = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}


class Unsupported(ValueError):
    pass


def export_patterns() -> list[str]:
    res = subprocess.run([*SLURMDIAG, "rules", "--export-patterns"], cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"slurmdiag rules --export-patterns failed: {res.stderr.strip()}")
    return [line for line in res.stdout.splitlines() if line.strip()]


def signature_literals() -> list[str]:
    """Every signature's prefilter literal, as the catalog holds them."""
    code = "from diag.api import load_rules; print('\\n'.join(sorted({s.literal for r in load_rules().rules for s in r.signatures if s.literal})))"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in res.stdout.splitlines() if line]


def to_rg(pattern: str) -> str:
    """rg joins ``-f`` patterns into one alternation, where two rules' equal group names are an error
    ("duplicate capture group name"): make every group non-capturing."""
    return _NAMED.sub("(?:", unanchor(pattern))


def unanchor(pattern: str) -> str:
    """slurmdiag anchors ``^`` at the payload after the srun/torchrun/NCCL prefixes; a raw-line tool cannot,
    so the nearest equivalent is the unanchored pattern."""
    return pattern[1:] if pattern.startswith("^") else pattern


def to_ere(pattern: str) -> str:
    """Python regex -> POSIX ERE for GNU grep; raises Unsupported for what ERE cannot say."""
    pattern = _GROUP_OPEN.sub("(", pattern)
    if "(?" in pattern:
        raise Unsupported("lookaround or inline flag")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i = _ere_escape(pattern, i, out)
        elif c == "[":
            i = _ere_bracket(pattern, i, out)
        elif c == "?" and out and out[-1] in ("*", "+", "?", "}") and not (len(out) > 1 and out[-2] == "\\"):
            i += 1  # lazy quantifier: the same lines match
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ere_escape(p: str, i: int, out: list[str]) -> int:
    nxt = p[i + 1]
    if nxt == "x":  # a UTF-8 byte of non-ASCII text: the byte itself, which LC_ALL=C grep matches
        out.append(chr(int(p[i + 2 : i + 4], 16)))
        return i + 4
    if nxt in _OUTSIDE:
        out.append(_OUTSIDE[nxt])
    elif nxt.isalnum():
        raise Unsupported(f"escape \\{nxt}")
    else:
        out.append("\\" + nxt)
    return i + 2


def _ere_bracket(p: str, i: int, out: list[str]) -> int:
    j = i + 1
    negate = j < len(p) and p[j] == "^"
    j += negate
    items: list[str] = []
    has_rbracket = False
    while p[j] != "]":
        c = p[j]
        if c == "\\":
            e = p[j + 1]
            if e == "x":
                items.append(chr(int(p[j + 2 : j + 4], 16)))
                j += 4
                continue
            if e in _INSIDE:
                items.append(_INSIDE[e])
            elif e == "]":
                has_rbracket = True
            elif e.isalnum():
                raise Unsupported(f"escape \\{e} in a bracket")
            elif e == "\\":
                items.append("\\")
            else:
                items.append(e)
            j += 2
        else:
            items.append(c)
            j += 1
    body = "".join(items)
    if body.startswith("^"):  # a literal caret must not come first
        body = body[1:] + "^"
    out.append("[" + ("^" if negate else "") + ("]" if has_rbracket else "") + body + "]")
    return j + 1


def write_patterns(patterns: list[str]) -> tuple[str, str, list[str]]:
    """Write bench/out/patterns.rg and patterns.ere; return their paths and the dropped patterns."""
    rg_lines = [to_rg(p) for p in patterns]
    ere_lines, dropped = [], []
    for p in patterns:
        try:
            ere_lines.append(to_ere(unanchor(p)))
        except Unsupported as exc:
            dropped.append(f"{p}  ({exc})")
    rg_path, ere_path = os.path.join(OUT, "patterns.rg"), os.path.join(OUT, "patterns.ere")
    for path, lines in ((rg_path, rg_lines), (ere_path, ere_lines)):
        with open(path, "w", encoding="latin-1") as f:  # \xHH became single bytes: write them as such
            f.write("\n".join(lines) + "\n")
    return rg_path, ere_path, dropped


# -- the tools ---------------------------------------------------------------------------------------
@dataclass
class Row:
    tool: str
    input: str
    size: int
    run: Run | None
    note: str = ""
    extrapolated: bool = False

    def mbps(self) -> float | None:
        if self.run is None or self.run.timed_out or self.run.wall <= 0:
            return None
        return self.size / MB / self.run.wall


@dataclass
class Bench:
    timeout: float
    rg: str | None
    rg_patterns: str
    ere_patterns: str
    unicode_cap: float = 30
    rows: list[Row] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # input label -> line feeds

    def tools(self, label: str, path: str, full: bool = True, jobs1: bool | None = None) -> list[Row]:
        """Every tool on ``path``. ``full``: also rg's Unicode mode and grep in the session's locale; ``jobs1``
        (default: ``full``): slurmdiag's fastest engine again with ``--jobs 1``."""
        size = os.path.getsize(path)
        self.lines[label] = warm(path)
        rows: list[Row] = []
        tag = re.sub(r"[^\w.-]", "_", label)
        if self.rg:
            run = measure([self.rg, "--no-unicode", "-c", "-f", self.rg_patterns, path], self.timeout, f"rg-{tag}")
            rows.append(Row(RG_BASE, label, size, run, _count_note(run)))
            if full:  # rg's default Unicode mode: \b, \w, \S, [^x] in the rules take it off its fast path
                cap = min(self.timeout, self.unicode_cap)
                run = measure([self.rg, "-c", "-f", self.rg_patterns, path], cap, f"rgU-{tag}")
                note = _count_note(run, cap) + (f": < {size / MB / cap:.2f} MB/s" if run.timed_out else "")
                rows.append(Row("rg -c -f (Unicode, default)", label, size, run, note))
        run = measure(["grep", "-E", "-c", "-f", self.ere_patterns, path], self.timeout, f"grepC-{tag}", C_ENV)
        rows.append(Row("LC_ALL=C grep -E -c -f", label, size, run, _count_note(run)))
        if full:
            run = measure(["grep", "-E", "-c", "-f", self.ere_patterns, path], self.timeout, f"grepU-{tag}")
            locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or "default"
            rows.append(Row(f"grep -E -c -f ({locale})", label, size, run, _count_note(run)))
        for engine in ENGINES:
            run = measure([*SLURMDIAG, "--format", "json", "--engine", engine, path], self.timeout,
                          f"slurmdiag-{engine}-{tag}")  # fmt: skip
            rows.append(Row(f"slurmdiag --format json --engine {engine}", label, size, run, _diag_note(run)))
        if (full if jobs1 is None else jobs1) and ENGINES:  # the same on one core: what the workers add
            engine = ENGINES[0]
            run = measure([*SLURMDIAG, "--format", "json", "--engine", engine, "--jobs", "1", path], self.timeout,
                          f"slurmdiag-{engine}-j1-{tag}")  # fmt: skip
            rows.append(Row(f"slurmdiag --format json --engine {engine} --jobs 1", label, size, run, _diag_note(run)))
        if ENGINES and _core_built():  # the pure-Python fallback: what an install without a compiler runs
            engine = ENGINES[0]
            run = measure([*SLURMDIAG, "--format", "json", "--engine", engine, path], self.timeout,
                          f"slurmdiag-{engine}-nocore-{tag}", {**os.environ, "SLURMDIAG_NO_CORE": "1"})  # fmt: skip
            rows.append(Row(f"SLURMDIAG_NO_CORE=1 slurmdiag --format json --engine {engine}", label, size, run,
                            _diag_note(run)))  # fmt: skip
        self.rows.extend(rows)
        return rows


def _count_note(run: Run, cap: float | None = None) -> str:
    if run.timed_out:
        return f"timeout (> {cap:g} s)" if cap else "timeout"
    if run.rc > 1:
        return f"rc={run.rc}: {run.stderr.strip()[:80]}"
    return f"{int(run.stdout.strip() or 0):,} matching lines"  # rg -c prints nothing for 0


def _diag_json(run: Run) -> dict | None:
    try:
        return json.loads(run.stdout)
    except ValueError:
        return None


def _diag_note(run: Run) -> str:
    if run.timed_out:
        return "timeout"
    report = _diag_json(run)
    if report is None:
        return f"rc={run.rc}, no JSON: {run.stderr.strip()[-80:]}"
    ids = [f["id"] for f in report.get("findings", [])]
    cut = sum(i.get("truncated_lines", 0) for i in report.get("inputs", []))
    note = f"findings: {', '.join(ids) or 'none'}"
    return note + (f"; {cut:,} line(s) cut" if cut else "")


def check_planted(row: Row, expected_path: str) -> str:
    """PASS if every planted cause id is among findings[].id, and no near-miss rule fired."""
    with open(expected_path) as f:
        exp = json.load(f)
    report = _diag_json(row.run) if row.run else None
    if report is None:
        return f"{row.input}: FAIL (no slurmdiag report: {row.note})"
    ids = {f["id"] for f in report.get("findings", [])}
    missing = [i for i in exp["expected_ids"] if i not in ids]
    false_pos = [i for i in exp["absent_ids"] if i in ids]
    verdict = "PASS" if not missing and not false_pos else "FAIL"
    return (f"{row.input}: {verdict}: expected {exp['expected_ids']} -> found {sorted(ids)}"
            f"{'; missing ' + str(missing) if missing else ''}{'; near-miss rules fired ' + str(false_pos) if false_pos else ''}")  # fmt: skip


# -- inputs ------------------------------------------------------------------------------------------
def job_log(size_arg: str, seed: int) -> str:
    path = os.path.join(DATA, f"job-{size_arg}.log")
    size = gen_log.parse_size(size_arg)
    if _reusable(path, size, seed):
        print(f"reusing {path}", file=sys.stderr)
        return path
    print(f"generating {path} ...", file=sys.stderr)
    t = time.perf_counter()
    gen_log.generate(path, size, seed)
    print(f"  {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return path


def dense_log(size_arg: str, seed: int, ranks: int, density: float) -> str:
    """gen_log.py --shape dense: a ``ranks``-GPU job with many communicators, ``density`` candidate lines."""
    path = os.path.join(DATA, f"dense-{ranks}r-{density:g}-{size_arg}.log")
    size = gen_log.parse_size(size_arg)
    if _reusable(path, size, seed, {"shape": "dense", "ranks": ranks, "density": density}):
        print(f"reusing {path}", file=sys.stderr)
        return path
    print(f"generating {path} ...", file=sys.stderr)
    t = time.perf_counter()
    gen_log.generate(path, size, seed, "dense", ranks, density)
    print(f"  {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return path


def _reusable(path: str, size: int, seed: int, more: dict | None = None) -> bool:
    try:
        with open(path + ".expected.json") as f:
            exp = json.load(f)
        same = all(exp.get(k) == v for k, v in (more or {}).items())
        return same and exp["size_arg"] == size and exp["seed"] == seed and exp["bytes"] == os.path.getsize(path)
    except (OSError, ValueError, KeyError):
        return False


def patho_inputs(quick: bool, seed: int) -> list[tuple[str, str]]:
    line_size, lines, rand_size = (20 << 20, 1_000_000, 20 << 20) if quick else (500 << 20, 10_000_000, 200 << 20)
    adversarial = 200 if quick else 2_000
    specs = [
        (f"one {line_size >> 20} MiB line, no newline", f"patho-line-{line_size >> 20}M.log",
         lambda p: patho.long_line(p, line_size, seed)),
        (f"{lines / 1e6:g}M tiny lines", f"patho-tiny-{lines // 1000}k.log", lambda p: patho.tiny_lines(p, lines, seed)),
        (f"random binary {rand_size >> 20} MiB", f"patho-random-{rand_size >> 20}M.bin",
         lambda p: patho.random_binary(p, rand_size, seed)),
        (f"{adversarial} lines of 60 KB: literals among long runs", f"patho-adversarial-{adversarial}.log",
         lambda p: patho.adversarial_lines(p, signature_literals(), adversarial, seed)),
    ]  # fmt: skip
    out = []
    for label, name, make in specs:
        path = os.path.join(DATA, name)
        if not os.path.exists(path):
            print(f"generating {path} ...", file=sys.stderr)
            make(path)
        out.append((label, path))
    return out


TINY_LOG = """\
slinky-0:4410:4410 [0] NCCL INFO Bootstrap: Using ib0:10.10.0.11<0>
slinky-0:4410:4410 [0] NCCL INFO NCCL version 2.28.9+cuda12.9
slinky-0:4410:4410 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.10.0.11<0>
slinky-0:4410:4410 [0] NCCL INFO Using network IB
slinky-0:4410:4410 [0] NCCL INFO comm 0x5a1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0

[2025-05-06 06:00:13] slinky-1:4411:4411 [0] misc/ibvwrap.cc:216 NCCL WARN Call to ibv_open_device failed
slinky-1:4411:4411 [0] NCCL INFO NET/IB : No device found.
slinky-1:4411:4411 [0] NCCL INFO Using network Socket
slinky-1:4411:4411 [0] NCCL INFO Channel 00/0 : 8[0] -> 7[7] [receive] via NET/Socket/0
[06:00:40] step       1 | loss 10.9121 | lr 6.00e-07 | 1402.1 ms/it | 93.5k tok/s
"""


def tiny_log() -> str:
    path = os.path.join(DATA, "tiny.log")
    with open(path, "w") as f:
        f.write(TINY_LOG)
    return path


# -- startup ----------------------------------------------------------------------------------------
def startup(bench: Bench, repeats: int = 3) -> None:
    tiny = tiny_log()
    cases = [("slurmdiag --version", [*SLURMDIAG, "--version"]),
             ("slurmdiag --format json", [*SLURMDIAG, "--format", "json", tiny])]  # fmt: skip
    if bench.rg:
        cases.append((RG_BASE, [bench.rg, "--no-unicode", "-c", "-f", bench.rg_patterns, tiny]))
    cases.append(("LC_ALL=C grep -E -c -f", ["grep", "-E", "-c", "-f", bench.ere_patterns, tiny]))
    for tool, cmd in cases:
        runs = [measure(cmd, 60, "startup", C_ENV if "grep" in tool else None) for _ in range(repeats)]
        med = sorted(runs, key=lambda r: r.wall)[len(runs) // 2]
        label = "startup (no input)" if "--version" in tool else f"startup: tiny log ({os.path.getsize(tiny):,} B)"
        note = f"median of {repeats}: " + ", ".join(f"{r.wall * 1000:.0f}" for r in runs) + " ms"
        bench.rows.append(Row(tool, label, 0, med, note))


# -- prefilter literals -------------------------------------------------------------------------------
def literal_profile(path: str, sample: int = 20 << 20, top: int = 12) -> list[str]:
    """Which required literals of slurmdiag's signatures occur most (lines that cost the python engine)."""
    sys.path.insert(0, ROOT)
    from diag.api import load_rules
    from diag.scan.scanner import Scanner

    scanner = Scanner(load_rules(), engine="python")
    with open(path, "rb") as f:
        data = f.read(sample)
    lines = data.count(b"\n") or 1
    by_literal: dict[str, list[str]] = {}
    for owner, sig in scanner.entries:
        by_literal.setdefault(sig.literal, []).append(f"{owner}/{sig.name}")
    counts = []
    for lit, owners in by_literal.items():
        n = data.count(lit.encode())
        if n:
            counts.append((n, lit, ", ".join(owners)))
    counts.sort(reverse=True)
    head = f"{len(by_literal)} distinct literals; occurrences in the first {len(data) / MB:.0f} MB ({lines:,} lines):"
    return [head] + [
        f"`{lit!r}`: {n:,} ({100 * n / lines:.1f}% of lines) <- {owners}" for n, lit, owners in counts[:top]
    ]


# -- report --------------------------------------------------------------------------------------------
def candidates(rows: list[Row]) -> dict[str, int]:
    """Input label -> candidate lines: the lines that slurmdiag's exported signatures match, as rg counts them
    (``rg --no-unicode -c -f``; LC_ALL=C grep's count where rg is missing or timed out)."""
    out: dict[str, int] = {}
    for tool in ("LC_ALL=C grep -E -c -f", RG_BASE):  # rg last: it wins
        for r in rows:
            if r.tool == tool and r.size and r.run and not r.run.timed_out and r.run.rc in (0, 1):
                out[r.input] = int(r.run.stdout.strip() or 0)
    return out


def startup_s(rows: list[Row]) -> float | None:
    """slurmdiag's wall time on the tiny log: start, rule compilation and report, the part of a run that is not
    per candidate."""
    return next((r.run.wall for r in rows if r.tool == "slurmdiag --format json" and r.run and not r.size), None)


def table(rows: list[Row], lines: dict[str, int] | None = None) -> str:
    head = (
        "| tool | input | size MB | wall s | MB/s | x rg | candidate lines | µs per candidate | peak RSS MB "
        "| all processes PSS MB | notes |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    rg = {r.input: r.mbps() for r in rows if r.tool == RG_BASE}
    cands, start = candidates(rows), startup_s(rows)
    body = []
    for r in rows:
        mbps = r.mbps()
        ratio = f"{mbps / rg[r.input]:.3f}" if mbps and rg.get(r.input) and r.size else ""
        n, total = cands.get(r.input), (lines or {}).get(r.input)
        cand = "" if n is None or not r.size else f"{n:,}" + (f" ({100 * n / total:.2f}%)" if total else "")
        per = ""
        if n and start is not None and mbps and r.tool.startswith("slurmdiag"):
            per = f"{(r.run.wall - start) / n * 1e6:.2f}"  # type: ignore[union-attr]
        wall = "timeout" if r.run and r.run.timed_out else (f"{r.run.wall:.3f}" if r.run else "")
        speed = f"{mbps:,.1f}" if mbps and r.size else ("timeout" if r.run and r.run.timed_out else "")
        size = f"{r.size / MB:,.1f}" if r.size else ""
        rss = f"{r.run.rss_mb:,.1f}" if r.run and r.run.rss_mb == r.run.rss_mb else ""  # nan: killed
        pss = f"{r.run.pss_mb:,.1f}" if r.run and r.run.pss_mb else ""  # 0: ended before the first sample
        body.append(
            f"| {r.tool} | {r.input} | {size} | {wall} | {speed} | {ratio} | {cand} | {per} | {rss} | {pss} "
            f"| {r.note} |"
        )
    return head + "\n" + "\n".join(body)


def versions(rg: str | None) -> list[str]:
    def first_line(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "?"

    return [
        f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.platform()}",
        f"python: {platform.python_version()}; slurmdiag: {first_line([*SLURMDIAG, '--version'])}",
        f"rg: {first_line([rg, '--version']) if rg else 'not found'}; grep: {first_line(['grep', '--version'])}",
    ]


def report(bench: Bench, head: list[str], extras: list[str]) -> str:
    parts = ["# slurmdiag benchmark", "", *[f"* {h}" for h in head], "", table(bench.rows, bench.lines), ""]
    parts += ["## Planted faults", "", *[f"* {c}" for c in bench.checks], ""]
    parts += extras
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100M,1G", help="comma-separated log sizes (default 100M,1G)")
    ap.add_argument("--quick", action="store_true", help="20M log and small pathological inputs only")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300, help="cap per tool run, seconds (default 300)")
    ap.add_argument("--unicode-cap", type=float, default=30, help="cap for rg in its default Unicode mode (s)")
    ap.add_argument("--no-patho", action="store_true", help="skip the pathological inputs")
    ap.add_argument("--densities", default="0.005,0.02,0.13,0.30",
                    help="candidate densities of the dense job logs (gen_log.py --shape dense), comma-separated; "
                         "'' for none (default 0.005,0.02,0.13,0.30)")  # fmt: skip
    ap.add_argument("--dense-size", default="256M", help="size of each dense job log (default 256M; 20M with --quick)")
    ap.add_argument("--ranks", type=int, default=256, help="GPUs of the dense job, 8 per node (default 256)")
    args = ap.parse_args(argv)
    os.makedirs(DATA, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    sizes = ["20M"] if args.quick else [s.strip() for s in args.sizes.split(",") if s.strip()]
    densities = [float(d) for d in args.densities.split(",") if d.strip()]
    dense_size = "20M" if args.quick else args.dense_size

    # An installed package has its bytecode compiled (pip does it); a working tree may not.
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "diag")], check=False,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})  # fmt: skip
    rg = shutil.which("rg")
    if rg is None:
        print("rg not found: apt-get install ripgrep", file=sys.stderr)
    patterns = export_patterns()
    rg_path, ere_path, dropped = write_patterns(patterns)
    bench = Bench(args.timeout, rg, rg_path, ere_path, args.unicode_cap)
    head = versions(rg) + [
        f"cores usable: {len(os.sched_getaffinity(0))}; slurmdiag runs with its default `--jobs` (the usable cores) "
        "unless the row says `--jobs 1`",
        f"patterns: {len(patterns)} exported by `slurmdiag rules --export-patterns`; leading `^` dropped for rg/grep; "
        f"{len(dropped)} not expressible in ERE (grep runs without them)",
        f"each tool run once, warm (file read to /dev/null first), timeout {args.timeout:g} s; "
        "wall time includes process start-up; peak RSS: GNU time %M of the tool, its largest process (rg's includes "
        "mmap'd file pages); all processes PSS: the peak of the summed proportional set size of the tool's processes "
        "(slurmdiag's workers included; shared pages counted once), sampled every 20 ms"
        if GNU_TIME
        else "peak RSS: ru_maxrss from wait4 (includes a ~30 MB floor from the forked Python parent)",
        f"x rg = MB/s / MB/s of `{RG_BASE}` on the same input (rg's default Unicode mode is capped at "
        f"{args.unicode_cap:g} s)",
        f"candidate lines: the lines that the exported signatures match, counted by `{RG_BASE}` (the rg row's "
        "count), with their share of the input's lines; µs per candidate = (slurmdiag's wall time - its wall time "
        "on the tiny log) / candidate lines",
    ]

    startup(bench)
    logs = []
    for size_arg in sizes:
        path = job_log(size_arg, args.seed)
        logs.append(path)
        label = f"job log {size_arg}"
        rows = bench.tools(label, path)
        for row in rows:
            if row.tool.startswith("slurmdiag"):
                bench.checks.append(f"{row.tool}: " + check_planted(row, path + ".expected.json"))
        _progress(rows)
    for density in densities:  # dense job logs: rg's Unicode mode and grep's locale run on the classic logs only
        path = dense_log(dense_size, args.seed, args.ranks, density)
        logs.append(path)
        label = f"dense {args.ranks} ranks {density:.1%} {dense_size}"
        rows = bench.tools(label, path, full=False, jobs1=True)
        for row in rows:
            if row.tool.startswith("slurmdiag"):
                bench.checks.append(f"{row.tool}: " + check_planted(row, path + ".expected.json"))
        _progress(rows)
    if not args.no_patho:
        for label, path in patho_inputs(args.quick, args.seed):
            _progress(bench.tools(label, path, full=False))

    extras = [
        "## Required literals (what the python engine searches for)",
        "",
        *[f"* {x}" for x in literal_profile(logs[0])],
        "",
    ]
    if dropped:
        extras += ["## Patterns grep -E cannot take", "", *[f"* `{d}`" for d in dropped], ""]
    md = report(bench, head, extras)
    with open(os.path.join(OUT, "latest.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if all(": PASS" in c for c in bench.checks) else 1


def _progress(rows: list[Row]) -> None:
    for r in rows:
        speed = r.mbps()
        print(
            f"  {r.tool:28} {r.input:34} {speed or 0:9.1f} MB/s  {r.run.rss_mb if r.run else 0:8.1f} MB  {r.note}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    sys.exit(main())
