"""The compiled core (diag/scan/_core.c) gives exactly what the Python path gives, on any bytes."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diag.api import diagnose_bytes
from diag.input.framing import COMMON_NCCL_BYTES
from diag.input.sources import InputStats, MemorySource
from diag.scan import core
from diag.scan.engines import available_engines, lines_of_ends
from diag.scan.scanner import Scanner

needs_core = pytest.mark.skipif(not core.built(), reason="the compiled core is not built (no compiler or libpcre2)")


def test_ci_builds_the_core():
    """CI installs a compiler and libpcre2 (.ci/run), so every test below runs there."""
    if os.environ.get("CI"):
        assert core.built()

# Pieces of the lines a dense NCCL log holds, and of lines that look like them but are not framed
# the common way; hypothesis glues them with random bytes and every kind of terminator.
PIECES = [
    "node-001:12345:12360 [3] NCCL INFO Channel 00/0 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA",
    "node-001:12345:12360 [3] NCCL INFO Channel 01/0 : 3[3] -> 11[3] [receive] via NET/IB/3",
    "node-002:222:222 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0",
    "node-002:222:222 [0] NCCL INFO NCCL_IB_HCA set to mlx5_1",
    "node-002:222:222 [0] NCCL INFO comm 0x55d9 rank 7 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE",
    "node-002:223:223 [1] NCCL INFO comm 0x55da rank 9 nranks 16 cudaDev 1 busId 2a000 - Init COMPLETE",
    " 3: [default1]:node-003:9:9 [1] NCCL INFO Using network Socket",
    "12: [rank12]: node-004:77:78 [4] init.cc:123 NCCL WARN Call to ibv_open_device failed",
    "[2026-01-01 10:00:00] node-005:1:1 [0] enqueue.cc:1 NCCL WARN NET/IB : No device found.",
    "node-006:99999999999999999999999:1 [0] NCCL INFO NET/IB : No device found.",
    "node-007:5:5 [0] 12.5 NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0",
    "[0] NCCL INFO NET/IB : No device found.",
    "srun: error: node-003: task 3: Exited with exit code 1",
    "node-\u00e9:1:1 [0] NCCL INFO Using network Socket",
    "node-008:1:1 [0] NCCL INFO \x1b[31mUsing network Socket\x1b[0m",
    "[rank3]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000)",
    "node-009:4:4 NCCL INFO\tUsing network IB",
]
TERMINATORS = ["\n", "\r", "\r\n", "\n\n", ""]


def _blocks():
    piece = st.one_of(st.sampled_from(PIECES), st.text(max_size=30))
    line = st.tuples(piece, st.sampled_from(TERMINATORS)).map("".join)
    text = st.lists(line, max_size=40).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))
    return st.one_of(text, st.binary(max_size=400))


def _scanner(rules, engine: str, on: bool, monkeypatch) -> Scanner:
    monkeypatch.setenv(core.NO_CORE_ENV, "" if on else "1")
    return Scanner(rules, chunk_bytes=1 << 12, engine=engine, jobs=1)


def _digest(scanner: Scanner, blob: bytes, fold: bool, from_start: bool = True):
    stats = InputStats("job.log")
    folder = scanner.folder(from_start=from_start) if fold else None
    records = list(scanner.digest_source(0, MemorySource("job.log", blob), stats, folder=folder))
    return records, stats, folder.folded if folder else None


@needs_core
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(block=_blocks(), data=st.data())
def test_lines_of_match_ends_are_the_python_ones(block, data):
    """Any match ends (even at the block's edges, on terminators, out of order) give the lines the
    reference loop gives, with the same members."""
    members = [frozenset({0}), frozenset({1, 2}), frozenset({2})]
    ends = data.draw(st.lists(st.integers(0, len(block)), max_size=30))
    exprs = data.draw(st.lists(st.integers(0, len(members) - 1), min_size=len(ends), max_size=len(ends)))
    assert core.module().lines(block, ends, exprs, members, {}) == lines_of_ends(block, ends, exprs, members)


@needs_core
@settings(max_examples=100, deadline=None)
@given(block=_blocks(), data=st.data())
def test_hyperscan_matches_recorded_in_c_give_the_same_lines(block, data):
    """The collector Hyperscan calls per match, then its lines: those of the reference loop."""
    members = [frozenset({0}), frozenset({1, 2}), frozenset({2})]
    ends = data.draw(st.lists(st.integers(0, len(block)), max_size=30))
    exprs = data.draw(st.lists(st.integers(0, len(members) - 1), min_size=len(ends), max_size=len(ends)))
    collector = core.module().Collector()
    for end, expr in zip(ends, exprs):
        assert collector(expr, 0, end, 0, None) is None
    assert collector.lines(block, members, {}) == lines_of_ends(block, ends, exprs, members)
    assert collector.lines(block, members, {}) == []  # emptied


needs_libhs = pytest.mark.skipif(
    not core.built() or not hasattr(core.module() or object(), "hs_compile"),
    reason="the core was built without libhs (libhyperscan-dev)",
)


def _hyperscan_engines(rules, monkeypatch):
    """The Hyperscan engine run by the core's own libhs, and by the hyperscan package's binding."""
    from diag.scan.engines import HyperscanEngine, Pattern

    patterns = [Pattern(sig.pattern, sig.literal) for _, sig in Scanner(rules, engine="python").entries]
    own = HyperscanEngine(patterns)
    monkeypatch.setenv(core.NO_CORE_ENV, "1")
    binding = HyperscanEngine(patterns)
    monkeypatch.delenv(core.NO_CORE_ENV)
    assert own.hs is not None and binding.hs is None
    return own, binding


def test_ci_builds_the_core_with_libhs():
    """CI installs libhyperscan-dev on x86-64 (.ci/run), so the core runs Hyperscan itself there."""
    import platform

    if os.environ.get("CI") and platform.machine() == "x86_64":
        assert hasattr(core.module(), "hs_compile")


@needs_libhs
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(block=_blocks())
def test_libhs_in_the_core_finds_the_lines_the_binding_finds(rules, monkeypatch, block):
    """The core's libhs database (Debian's libhs) and the hyperscan package's give the same
    candidate lines with the same signatures to try, on NCCL lines cut anywhere and random bytes."""
    own, binding = _hyperscan_engines(rules, monkeypatch)
    assert own.lines(block) == binding.lines(block)


@needs_libhs
def test_libhs_in_the_core_finds_the_corpus_lines_the_binding_finds(rules, monkeypatch):
    own, binding = _hyperscan_engines(rules, monkeypatch)
    from tests.conftest import CORPUS

    blocks = [p.read_bytes() for ext in ("log", "out", "err") for p in sorted(CORPUS.glob(f"*/*.{ext}"))]
    assert len(blocks) > 100
    found = 0
    for block in blocks:
        lines = own.lines(block)
        assert lines == binding.lines(block)
        found += len(lines)
    assert found > 1000


@needs_libhs
def test_the_libhs_database_is_cached_and_reloaded(rules, monkeypatch, tmp_path):
    """A second engine loads the serialized database instead of compiling it (start-up), and
    a damaged cache entry is compiled again."""
    from diag.scan.engines import HyperscanEngine, Pattern

    monkeypatch.setenv("SLURMDIAG_CACHE", str(tmp_path))
    patterns = [Pattern(sig.pattern, sig.literal) for _, sig in Scanner(rules, engine="python").entries]
    block = b"node-1:1:1 [0] NCCL INFO Using network Socket\nstep 1\n"
    first = HyperscanEngine(patterns).lines(block)
    written = [p for p in tmp_path.rglob("hyperscan-core-*.db")]
    assert first and len(written) == 1
    assert HyperscanEngine(patterns).lines(block) == first
    written[0].write_bytes(b"not a database")
    assert HyperscanEngine(patterns).lines(block) == first
    with pytest.raises(ValueError):
        core.module().hs_load(b"not a database", 1)


@needs_core
def test_lines_rejects_offsets_outside_the_block():
    with pytest.raises(ValueError):
        core.module().lines(b"abc\n", [5], [0], [frozenset({0})], {})
    with pytest.raises(ValueError):
        core.module().lines(b"abc\n", [1], [3], [frozenset({0})], {})
    collector = core.module().Collector()
    collector(0, 0, 9, 0, None)
    with pytest.raises(ValueError):
        collector.lines(b"abc\n", [frozenset({0})], {})


@needs_core
@settings(max_examples=300, deadline=None)
@given(line=st.one_of(st.sampled_from(PIECES), st.text(alphabet=st.characters(max_codepoint=127), max_size=80)),
       tail=st.text(alphabet=st.characters(max_codepoint=127), max_size=20))  # fmt: skip
def test_pcre2_frames_an_ascii_line_as_python_re_does(line, tail):
    raw = (line + tail).encode("ascii", "ignore")
    frame = core.compile_frame(core.module())
    m = COMMON_NCCL_BYTES.match(raw)
    got = core.module().match(frame, raw)
    if m is None:
        assert got is None
    else:
        assert got == (0, m.end(), *(None if m.span(g) == (-1, -1) else m.span(g) for g in range(1, 11)))


def _corpus_payloads() -> list[str]:
    from diag.input.framing import frame

    from ..conftest import case_logs, corpus_cases

    payloads = {frame(line).payload for line in PIECES}
    for case in corpus_cases():
        for path in case_logs(case):
            with open(path, "rb") as fh:
                for raw in fh.read().splitlines():
                    if raw.isascii() and b"\x1b" not in raw:
                        payloads.add(frame(raw.decode("ascii")).payload)
    return sorted(payloads)


@needs_core
def test_pcre2_confirms_every_corpus_payload_as_python_re_does(rules):
    """Each signature the core confirms (its PCRE2 form) finds the same match and the same named
    groups as Python's ``re`` on every ASCII payload of the corpus."""
    scanner = Scanner(rules, engine="python")
    entries = [sig for _, sig in scanner.entries]
    confirmers = [core.confirmer(core.module(), sig) for sig in entries]
    # Today's rules all have one, except patterns with non-ASCII text (GNU mkdir's ‘…’ quotes), which
    # only Python confirms: the core matches ASCII payloads byte for byte.
    assert all(c is not None or not sig.pattern.isascii() for c, sig in zip(confirmers, entries))
    assert sum(c is None for c in confirmers) <= 4
    payloads = _corpus_payloads()
    matched = 0
    for sig, confirming in zip(entries, confirmers):
        if confirming is None:
            continue
        regex, _levels, groups = confirming
        compiled = re.compile(sig.pattern)
        for payload in payloads:
            m = compiled.search(payload)
            got = core.module().match(regex, payload.encode("ascii"))
            if m is None:
                assert got is None, (sig.name, payload)
                continue
            matched += 1
            assert got is not None and got[:2] == m.span(), (sig.name, payload)
            spans = [None if m.span(g) == (-1, -1) else m.span(g) for g in groups]
            assert [got[1 + g] for g in groups] == spans, (sig.name, payload)
    assert matched > 1000


@pytest.mark.parametrize(
    "pattern",
    [r"(?i)nccl", r"a{,3}", r"[[:alpha:]]+", r"\Aabc", r"(a)\1", r"caf\u00e9", r"[\S]x", r"(?>a+)b", r"\v"],
)
def test_patterns_whose_meaning_may_differ_stay_in_python(pattern):
    assert core.pcre2_form(pattern) is None


@needs_core
@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_whitespace_and_classes_match_as_in_python(text):
    """\\s on a str also matches \\x1c-\\x1f: the PCRE2 form adds them, in and out of classes."""
    for pattern in (r"a\s+(?P<v>\S+)", r"(?P<v>[^\s:]+):(?P<n>\d+)", r"[\s,]+(?P<w>\w+)\b", r"^(?P<all>.*?)\s*$"):
        regex = core.module().compile(core.pcre2_form(pattern), False)
        m = re.search(pattern, text)
        got = core.module().match(regex, text.encode("ascii"))
        assert (None if m is None else (*m.span(), *(m.span(g) for g in range(1, m.re.groups + 1)))) == (
            None if got is None else tuple((-1, -1) if v is None else v for v in got)
        )


@needs_core
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(blob=_blocks(), fold=st.booleans())
def test_digesting_any_bytes_gives_the_python_records(rules, monkeypatch, blob, fold):
    """Records, line counts and folded counts are the same with the core on and off, for every
    engine, on random bytes and on NCCL lines cut anywhere."""
    for engine in available_engines():
        with_core = _digest(_scanner(rules, engine, True, monkeypatch), blob, fold)
        without = _digest(_scanner(rules, engine, False, monkeypatch), blob, fold)
        assert with_core == without, engine


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(blob=_blocks(), fold=st.booleans(), repeat=st.integers(1, 3))
def test_lines_framed_by_their_remembered_head_give_the_records_of_lines_framed_alone(rules, monkeypatch, blob, fold, repeat):
    """Without the core, a line is framed by the head it cuts at its first " NCCL INFO ", remembered
    per head (diag.input.framing.frame_head): the records, line counts and folded counts are those
    of framing every line on its own, with heads repeating within and across blocks."""
    from diag.scan import scanner as scanner_module

    blob *= repeat
    remembered = _digest(_scanner(rules, "hyperscan", False, monkeypatch), blob, fold)
    monkeypatch.setattr(scanner_module, "_MAX_HEAD", 0)  # no head is short enough: each line framed alone
    alone = _digest(_scanner(rules, "hyperscan", False, monkeypatch), blob, fold)
    assert remembered == alone


@needs_core
def test_a_dense_job_reports_the_same_with_and_without_the_core(rules, monkeypatch):
    """Many ranks, communicators rebuilt, faults planted: the whole JSON report is byte-identical."""
    lines = []
    for comm in range(40):
        for rank in range(32):
            head = f"node-{rank // 8:03d}:{1000 + rank}:{1000 + rank} [{rank % 8}] NCCL INFO"
            lines += [
                f"{head} comm 0x{comm:x}{rank:04x} rank {rank} nranks 32 cudaDev {rank % 8} busId 1000 - Init COMPLETE",
                f"{head} Channel {comm % 4:02d}/0 : {rank}[0] -> {(rank + 8) % 32}[0] [send] via NET/IB/{rank % 8}/GDRDMA",
                f"{head} NCCL_IB_HCA set to mlx5_{comm % 3}",
                "step 10 loss 2.31",
            ]
            if rank // 8 == 2:
                lines.append(f"{head} Using network Socket")
    lines.append("srun: error: node-002: task 2: Exited with exit code 1")
    blob = "\n".join(lines).encode()
    reports = []
    for on in (True, False):
        monkeypatch.setenv(core.NO_CORE_ENV, "" if on else "1")
        report = diagnose_bytes([blob], rules, names=["job.log"], chunk_bytes=1 << 14)
        reports.append(json.dumps(report.to_json(), sort_keys=True))
    assert reports[0] == reports[1]
    assert "nccl-tcp-fallback" in reports[0]


@needs_core
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(0, len(PIECES) - 1), min_size=1, max_size=300), from_start=st.booleans())
def test_repeats_fold_in_the_core_as_in_python(rules, monkeypatch, picks, from_start):
    """Lines repeated in any order (ranks moving, settings changing, first sightings), from the
    job's start or from the middle of it (a worker's span): the core folds the repeats folding has
    seen, into the same counts."""
    blob = "\n".join(PIECES[i] for i in picks).encode()
    with_core = _digest(_scanner(rules, "auto", True, monkeypatch), blob, True, from_start)
    assert with_core == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True, from_start)


@needs_core
def test_the_core_folds_a_long_run_of_repeats(rules, monkeypatch):
    blob = "\n".join(PIECES * 200).encode()
    records, _, folded = _digest(_scanner(rules, "auto", True, monkeypatch), blob, True)
    assert (records, folded) == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True)[::2]
    assert sum(folded.counters.values()) >= 190  # the GDR channel line, counted without a record
    assert len(records) < len(PIECES) * 200 // 2


@needs_core
@settings(max_examples=200, deadline=None)
@given(block=_blocks(), data=st.data())
def test_line_feeds_are_counted_as_in_python(block, data):
    from diag.input.lines import count_newlines

    starts = sorted(data.draw(st.lists(st.integers(0, len(block)), max_size=20)))
    assert core.module().count_newlines(block, starts) == count_newlines(block, starts)
    if starts and starts[-1] > 0:
        with pytest.raises(ValueError):
            core.module().count_newlines(block, [starts[-1], 0])


@needs_core
def test_the_cores_tables_stay_bounded(rules, monkeypatch):
    """Ten thousand distinct captured values and signature combinations: what the core remembers
    (answers by matched values, shared member sets) stays within its caps."""
    lines = []
    for i in range(10_000):
        head = f"node-{i % 7}:{100 + i % 5}:1 [0] NCCL INFO"
        lines.append(f"{head} NCCL_IB_HCA set to mlx5_{i}")
        lines.append(f"{head} Channel 00/0 : {i}[0] -> {i + 1}[0] [send] via NET/IB/{i}/GDRDMA NCCL_IB_HCA set to x{i}")
    scanner = _scanner(rules, "auto", True, monkeypatch)
    answered = []
    resolve = scanner._resolve

    def spy(key, size, confirmed=None):
        answered.append(confirmed is not None)
        return resolve(key, size, confirmed)

    scanner._resolve = spy
    records, _, _ = _digest(scanner, "\n".join(lines).encode(), True)
    assert len(records) >= 10_000  # each setting changes a last-wins fact: shipped
    assert sum(answered) > 2 * 4096  # the core asked about more distinct matches than it may keep
    assert 0 < len(scanner._by_matches) <= 4096
    assert len(getattr(scanner.engine, "_unions", {})) <= 4096


@needs_core
@pytest.mark.parametrize("from_start", [True, False])
def test_rule_matches_without_a_rank_fold_by_their_process_rank(rules, monkeypatch, from_start):
    """A channel line that matches a rule and names no rank gets its process's rank as evidence:
    the core folds it only where that rank (written by the communicator lines, or unknown in a
    worker's span) is the one its first sighting had, as Python does."""
    from .test_fold import _init

    lines = []
    for restart in range(2):
        for comm in range(8):
            for r in range(32):
                sub_rank = r % 8 if comm % 2 else r
                lines += _init(f"node{r // 8}", 1000 * restart + r, sub_rank, 8 if comm % 2 else 32, 0x100 * comm + r)
    blob = "\n".join(lines).encode()
    records, _, folded = _digest(_scanner(rules, "auto", True, monkeypatch), blob, True, from_start)
    assert (records, folded) == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True, from_start)[::2]
    assert sum(folded.matches.values()) > 500


@needs_core
@pytest.mark.parametrize("from_start", [True, False])
def test_the_core_forgets_with_python_when_the_fold_tables_fill(rules, monkeypatch, from_start):
    """With tables of 64 keys, communicator lines of many processes fill them again and again: the
    core (which decides these lines itself) forgets at the same line as Python, so the same lines
    ship and the same repeats fold."""
    from diag.scan import fold

    from .test_fold import _init

    for name in ("_MAX_SEEN", "_MAX_SHADOW"):
        monkeypatch.setattr(fold, name, 64)
        monkeypatch.setattr(fold.Folder, name[1:], 64)
    lines = []
    for comm in range(6):
        for r in range(48):
            lines += _init(f"node{r // 8}", 1000 + r, r % 8 if comm % 2 else r, 8 if comm % 2 else 48, 0x100 * comm + r)
    blob = "\n".join(lines * 2).encode()
    records, _, folded = _digest(_scanner(rules, "auto", True, monkeypatch), blob, True, from_start)
    assert (records, folded) == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True, from_start)[::2]
    assert sum(folded.matches.values()) + sum(folded.counters.values()) > 100


@needs_core
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    picks=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 5), st.integers(0, 2)), min_size=1, max_size=120),
    chunk=st.sampled_from([256, 1024, 1 << 12]),
    cap=st.sampled_from([16, 64, 65536]),
    from_start=st.booleans(),
)
def test_the_fold_table_kept_between_blocks_folds_as_python(rules, monkeypatch, picks, chunk, cap, from_start):
    """The core's table of folded keys outlives a block (Folder._core_cache): with small blocks,
    processes whose rank moves between communicators, rule matches whose rank comes from the
    process (the folder's shadow) or from nowhere yet, and fold tables small enough to be forgotten
    again and again, the records and folded counts are Python's."""
    from diag.scan import fold

    from .test_fold import _init

    for name in ("_MAX_SEEN", "_MAX_SHADOW"):
        monkeypatch.setattr(fold, name, cap)
        monkeypatch.setattr(fold.Folder, name[1:], cap)
    lines = []
    for proc, comm, kind in picks:
        host, pid = f"node{proc // 4}", 100 + proc
        rank = (proc + comm) % 12
        init = _init(host, pid, rank, 12, 0x100 * comm + proc)
        lines += init if kind == 0 else init[1:4] if kind == 1 else [init[3], f"{host}:{pid}:{pid} [0] NCCL INFO Using network Socket"]
    blob = "\n".join(lines).encode()

    def digest(on: bool):
        monkeypatch.setenv(core.NO_CORE_ENV, "" if on else "1")
        scanner = Scanner(rules, chunk_bytes=chunk, engine="auto", jobs=1)
        stats = InputStats("job.log")
        folder = scanner.folder(from_start=from_start)
        records = list(scanner.digest_source(0, MemorySource("job.log", blob), stats, folder=folder))
        return (records, stats, folder.folded), folder

    (with_core, folder), (without, _) = digest(True), digest(False)
    assert with_core == without
    held = folder._core_cache
    assert held is None or 0 <= held.size() <= 4096


@needs_core
def test_the_fold_table_is_used_across_blocks_and_dropped_with_the_memory(rules, monkeypatch):
    """Keys folded in one block are counted from the table in the next ones (no try_fold), and the
    table is emptied when the folder forgets or adopts other memory (its _epoch, _seen or _full)."""
    from .test_fold import _init

    lines = []
    for comm in range(30):
        for r in range(16):
            lines += _init(f"node{r // 8}", 1000 + r, r, 16, 0x100 * comm + r)
    blob = "\n".join(lines).encode()
    scanner = _scanner(rules, "auto", True, monkeypatch)
    folder = scanner.folder(from_start=True)
    list(scanner.digest_source(0, MemorySource("job.log", blob), InputStats("job.log"), folder=folder))
    held = folder._core_cache
    assert held is not None and held.size() > 0
    size = held.size()
    folder._forget()  # a new epoch: the next call starts from an empty table
    list(scanner.digest_source(0, MemorySource("job.log", blob[:4000]), InputStats("job.log"), folder=folder))
    assert folder._core_cache is held and held.size() < size
    folder.adopt((set(), {}, set()))  # other memory: what was folded under the old one is dropped
    one_line = "\n".join(lines[:1]).encode()
    list(scanner.digest_source(0, MemorySource("job.log", one_line), InputStats("job.log"), folder=folder))
    assert held.size() == 0


@needs_core
def test_one_off_lines_are_answered_in_c_within_bounds(rules, monkeypatch):
    """Communicator lines whose pointer is new every time and whose captured rank repeats: the
    core answers the repeats from its own table (at most 4,096 answers), with the records Python
    gives."""
    lines = [
        f"node-1:{100 + i % 3}:1 [0] NCCL INFO comm 0x{i:x} rank {r} nranks 8 cudaDev 0 busId 1000 - Init START"
        for i in range(12_000)
        for r in [i % 3000 + 3000 * (i // 6000)]  # 3,000 ranks twice, then 3,000 others twice
    ]
    blob = "\n".join(lines).encode()
    scanner = _scanner(rules, "auto", True, monkeypatch)
    with_core = _digest(scanner, blob, True)
    assert 0 < scanner._answers.size() <= 4096
    assert with_core == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True)


@needs_core
def test_matches_ending_together_are_taken_in_expression_order_as_python_does():
    """Found by the property test above: an empty line reported twice, by matches that end at the
    same offset in another order than their expressions'."""
    members = [frozenset({0}), frozenset({1, 2}), frozenset({2})]
    for ends, exprs in (([0, 1, 1], [0, 1, 0]), ([1, 1], [1, 0])):
        assert core.module().lines(b"\n", ends, exprs, members, {}) == lines_of_ends(b"\n", ends, exprs, members)



def _repeats_and_one_offs() -> bytes:
    """Channel lines repeated across communicators (memo hits) between channel lines of other ranks
    and new comm pointers (memo misses), long enough for the memo to turn over."""
    return "\n".join(
        f"node-{r // 8:03d}:{1000 + r}:{1000 + r} [{r % 8}] NCCL INFO {body}"
        for c in range(60)
        for r in range(64)
        for body in (
            f"Channel {c % 2:02d}/0 : {r}[0] -> {(r + 8) % 64}[0] [send] via NET/IB/{r % 8}",
            f"comm 0x{c:x}{r:04x} rank {r} nranks 64 cudaDev {r % 8} busId 1000 - Init COMPLETE",
            f"Channel {c % 2:02d}/0 : {r}[0] -> {c}[0] [receive] via NET/IB/{r % 8}",
        )
    ).encode()


@needs_core
@pytest.mark.parametrize("memo_entries", [7, 300, 4096])
def test_the_memo_key_set_never_hides_a_held_payload(rules, monkeypatch, memo_entries):
    """The core asks the payload memo only where its key set (the memo's keys by their bytes) says
    the memo may hold the line; with memos of any size turning over any number of times, the
    records and folded counts are Python's."""
    from diag.scan import scanner as scanner_module

    monkeypatch.setattr(scanner_module, "_MEMO_ENTRIES", memo_entries)
    blob = _repeats_and_one_offs()
    scanner = _scanner(rules, "auto", True, monkeypatch)
    resolved = []
    resolve = scanner._resolve

    def spy(key, size, confirmed=None):
        resolved.append(key)
        return resolve(key, size, confirmed)

    scanner._resolve = spy
    with_core = _digest(scanner, blob, True)
    assert with_core == _digest(_scanner(rules, "auto", False, monkeypatch), blob, True)
    assert 0 < scanner._memo_keys.size() <= len(scanner._bytes_memo)
    assert all(scanner._memo_keys.may_hold(key) for key in scanner._bytes_memo)
    if memo_entries < 10:
        assert len(resolved) > 100 * memo_entries  # the memo turned over again and again


@needs_core
def test_a_memo_changed_between_blocks_is_taken_in_again(rules, monkeypatch):
    """The key set follows the memo: cleared, replaced by a new dict or refilled between two blocks,
    the memo is asked again wherever it may hold a line (same records as a fresh scanner's)."""
    blob = _repeats_and_one_offs()
    reference = _scanner(rules, "auto", True, monkeypatch)
    expected = [reference.digest_block(blob, None) for _ in range(2)]
    scanner = _scanner(rules, "auto", True, monkeypatch)
    first = scanner.digest_block(blob, None)
    held = dict(scanner._bytes_memo)
    scanner._bytes_memo.clear()
    assert scanner.digest_block(blob, None) == expected[1]
    scanner._bytes_memo = dict(held)  # another dict with the same keys
    assert scanner.digest_block(blob, None) == expected[1]
    assert held and all(scanner._memo_keys.may_hold(key) for key in scanner._bytes_memo)
    assert first == expected[0]


# Parts of the prefix stack, right and slightly wrong, for frame_fast (the common prefix read without PCRE2).
_TASKS = ["", " 3: ", "12: ", "  7: ", "3:", "1234567890123456789: ", " x: "]
_LABELS = ["", "[rank3]:", "[rank3]: ", "[default4]:", "[default4]: ", "[rank1234567890123456789]:", "[rankx3]:",
           "[rank]:", "[a1234567890123456789]:", "[_9]:", "[rank3]", "[d4]"]  # fmt: skip
_STAMPS = ["", "[2026-01-01 10:00:00] ", "[2026-01-01 10:00:00]", "[2026-1-01 10:00:00] "]
_HOSTS = ["node-001", "n", "a.b-c_d", "node\x01x", "no de", "node>", "node*1", "", "h:1"]
_IDS = ["12345", "1", "123456789012345678", "1234567890123456789", "", "x"]
_DEVS = ["", "[3] ", "[3]", "[1234567890123456789] ", "[] "]
_HEADS = ["NCCL INFO ", "NCCL INFO", "NCCL WARN ", "NCCL TRACE ", "NCCL CALL ", "NCCL ERROR ", "NCCL  INFO ", "INFO ",
          "NCCL info ", "init.cc:12 NCCL WARN ", "12.5 NCCL INFO ", "NCCL INFOx", "NCCL "]  # fmt: skip


@needs_core
def test_the_frame_pattern_is_the_one_read_without_pcre2():
    """digest reads the common prefix without PCRE2 only for the pattern frame_fast was written for: a
    change of diag.input.framing's pattern must come with a change of frame_fast (or PCRE2 runs)."""
    assert core.module().frame_is_fast(core.compile_frame(core.module()))
    assert not core.module().frame_is_fast(core.module().compile(COMMON_NCCL_BYTES.pattern + b"x", True))
    assert all(core.module().frame_fast(line.encode()) for line in PIECES[:7])  # the NCCL INFO lines


@needs_core
@settings(max_examples=1500, deadline=None)
@given(parts=st.tuples(*(st.sampled_from(p) for p in (_TASKS, _LABELS, _STAMPS, _HOSTS, _IDS, _IDS, _DEVS, _HEADS))),
       tail=st.text(alphabet=st.characters(max_codepoint=127), max_size=12),
       cut=st.integers(0, 120), junk=st.text(alphabet=st.characters(max_codepoint=127), max_size=2))  # fmt: skip
def test_the_common_prefix_read_without_pcre2_is_pcre2s_match(parts, tail, cut, junk):
    """Wherever frame_fast reads a line (it may leave any line to PCRE2), it gives PCRE2's match and
    Python's, every group's span included: prefix stacks right and slightly wrong, cut or spliced anywhere."""
    task, label, stamp, host, pid, tid, dev, head = parts
    line = f"{task}{label}{stamp}{host}:{pid}:{tid} {dev}{head}{tail}"
    for text in (line, line[:cut] + junk + line[cut:], line[:cut]):
        raw = text.encode("ascii")
        fast = core.module().frame_fast(raw)
        if fast is not None:
            m = COMMON_NCCL_BYTES.match(raw)
            assert m is not None
            assert fast == core.module().match(core.compile_frame(core.module()), raw)
            assert fast == (0, m.end(), *(None if m.span(g) == (-1, -1) else m.span(g) for g in range(1, 11)))


@needs_core
def test_every_corpus_line_read_without_pcre2_is_pcre2s_match():
    from ..conftest import case_logs, corpus_cases

    frame, read = core.compile_frame(core.module()), 0
    for case in corpus_cases():
        for path in case_logs(case):
            with open(path, "rb") as fh:
                for raw in fh.read().splitlines():
                    fast = core.module().frame_fast(raw) if raw.isascii() and b"\x1b" not in raw else None
                    if fast is not None:
                        read += 1
                        assert fast == core.module().match(frame, raw), raw
    assert read > 1000
