from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diag.input.framing import _COMMON_NCCL, NCCL_INFO, frame, frame_general, frame_head, match_common_nccl, strip_ansi

CASES = [
    # (line, payload, expected context)
    (" 3: [default1]:node02:1234:1290 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB", "NET/IB : Using [0]mlx5_0:1/IB",
     {"host": "node02", "pid": 1234, "task": 3, "local_rank": 1, "level": "INFO"}),
    ("[2026-12-02 10:49:30] vm:717:717 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
     "Bootstrap : no socket interface found", {"host": "vm", "level": "WARN", "timestamp": "2026-12-02 10:49:30"}),
    ("n1:9:9 [0] transport/net_ib.cc:1 (ncclIbInit) NCCL WARN NET/IB : Unable to open device mlx5_0",
     "NET/IB : Unable to open device mlx5_0", {"host": "n1", "level": "WARN"}),
    # Documentation and redacted pastes replace the source line number with "XXX".
    ("n1:9:9 [0] transport/p2p.cc:XXX NCCL WARN Cuda failure 800 'operation not permitted'",
     "Cuda failure 800 'operation not permitted'", {"host": "n1", "level": "WARN"}),
    ("transport/p2p.cc:XXX NCCL WARN Cuda failure 800 'operation not permitted'",
     "Cuda failure 800 'operation not permitted'", {"level": "WARN"}),
    # Net plugins (HPC-X's ib_plugin.c) and NCCL up to 2.3 name C files; a paste may space the line number.
    ("ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.2.8.2<55466> with error 12",
     "NET/IB : Got completion from peer 10.2.8.2<55466> with error 12", {"level": "WARN"}),
    ("ibvwrap.c: 106 NCCL WARN Call to ibv_reg_mr failed", "Call to ibv_reg_mr failed", {"level": "WARN"}),
    # vLLM 0.8+ brackets the source line.
    ("ERROR 05-30 22:22:26 [worker_base.py:620] Traceback (most recent call last):",
     "Traceback (most recent call last):", {"level": "ERROR"}),
    # A paste with the host name cut out of NCCL's header.
    ("::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.",
     "XML Import Channel : dev 1 not found.", {"host": None, "level": "WARN"}),
    ("[rank3]:[E1202 10:49:30.014446102 ProcessGroupNCCL.cpp:1575] [Rank 3] Watchdog caught",
     "[Rank 3] Watchdog caught", {"rank": 3, "level": "ERROR"}),
    ("[rank0]: Traceback (most recent call last):", "Traceback (most recent call last):", {"rank": 0}),
    ("[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed", "Some NCCL operations have failed",
     {"level": "ERROR"}),
    ("E1202 10:49:31.172000 696 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1)",
     "failed (exitcode: 1)", {"level": "ERROR"}),
    ("[1,3]<stdout>:hello", "hello", {"rank": 3}),
    ("0: [n0:08369] OPAL ERROR: Unreachable", "OPAL ERROR: Unreachable", {"host": "n0", "task": 0}),
    ("node07: step 10 loss 2.0", "step 10 loss 2.0", {"host": "node07"}),
    ("2024-05-01T12:34:56.123Z srun: error: n2: task 2: Exited with exit code 3",
     "srun: error: n2: task 2: Exited with exit code 3", {"level": "ERROR"}),
    ("slurmstepd-n0: error: *** JOB 46 ON n0 CANCELLED AT 2026-12-02T11:00:01 DUE TO TIME LIMIT ***",
     "slurmstepd-n0: error: *** JOB 46 ON n0 CANCELLED AT 2026-12-02T11:00:01 DUE TO TIME LIMIT ***", {"host": "n0"}),
    ("[1712345678.123456] [node01:12345:0]     ucp_context.c:1508 UCX  WARN  network device 'x' is not available",
     "network device 'x' is not available", {"host": "node01", "level": "WARN"}),
    # UCX pads the pid to five columns (ucs/debug/log.c "%-5d").
    ("[1712345678.123456] [gpu1:123  :0]        ib_iface.c:746  UCX  ERROR ibv_create_cq(cqe=4096) failed",
     "ibv_create_cq(cqe=4096) failed", {"host": "gpu1", "pid": 123, "level": "ERROR"}),
    # UCX's fatal errors and backtraces (ucs/debug): host, pid, thread and tid, then the source line.
    ("[b5270:66372:0:66372]       ud_ep.c:280  Fatal: UD endpoint 0x203e6d10 to <no debug data>: unhandled timeout error",
     "Fatal: UD endpoint 0x203e6d10 to <no debug data>: unhandled timeout error", {"host": "b5270", "pid": 66372}),
    ("\x1b[34m[INFO]\x1b[0m Querying registry", "[INFO] Querying registry", {}),
    ("NCCL version 2.18.3+cuda12.2", "NCCL version 2.18.3+cuda12.2", {"emitter": "nccl"}),
    ("srun: error: Invalid MPI type 'pmix_v9'", "srun: error: Invalid MPI type 'pmix_v9'", {"host": None}),
    ("step 10: loss 2.0", "step 10: loss 2.0", {"host": None, "task": None}),
    # Container tools name themselves before ": " as pdsh names a host; they are programs.
    ("enroot-aufs2ovlfs: failed to create opaque ovlfs whiteout: /tmp/e: Not supported",
     "enroot-aufs2ovlfs: failed to create opaque ovlfs whiteout: /tmp/e: Not supported", {"host": None}),
    ("(RayWorkerWrapper pid=1061) ERROR 02-12 02:14:01 worker_base.py:574] RuntimeError: Gloo connectFullMesh failed",
     "RuntimeError: Gloo connectFullMesh failed", {"pid": 1061, "level": "ERROR", "timestamp": "0212 02:14:01"}),
    ("(RayTrainWorker pid=11904, ip=10.1.2.3) RuntimeError: NCCL error", "RuntimeError: NCCL error",
     {"pid": 11904, "host": "10.1.2.3"}),
    ("(pid=1234) ValueError: bad rank", "ValueError: bad rank", {"pid": 1234}),
    # What launchers and log shippers put before a line (tests/input/test_launcher_prefixes.py holds every form).
    ("[pod/train-worker-1/pytorch] 2024-05-01T12:00:00.123456789Z train-worker-1:77:77 [0] NCCL INFO Bootstrap",
     "Bootstrap", {"host": "train-worker-1", "pid": 77, "timestamp": "2024-05-01T12:00:00.123456789Z"}),
    ("[1,mpirank:3,algo-2]<stderr>:RuntimeError: NCCL error", "RuntimeError: NCCL error", {"rank": 3, "host": "algo-2"}),
    ("[1,mpirank:3,algo-2]<stdout>:algo-1:79:1300 [0] NCCL INFO Launch mode Parallel", "Launch mode Parallel",
     {"rank": 3, "host": "algo-1"}),  # NCCL's own header names the host that printed it
    ("Thu Jun 18 14:28:35 2020[1,2]<stderr>:OSError: x", "OSError: x", {"rank": 2, "timestamp": "Thu Jun 18 14:28:35 2020"}),
    ("[5]<stderr>:OSError: x", "OSError: x", {"rank": 5}),
    ("trainer-1  | trainer-1:9:9 [0] NCCL WARN x", "x", {"host": "trainer-1", "level": "WARN"}),
    # DeepSpeed's pdsh runner with a hostfile of IP addresses names the node by its address.
    ("10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : collective "
     "mismatch error, local size 496640 remote size 65536", "NET/IB : collective mismatch error, local size 496640 "
     "remote size 65536", {"host": "so-ucloud-10-10-23-10", "level": "WARN"}),
    ("10.0.87.143: RuntimeError: NCCL error", "RuntimeError: NCCL error", {"host": "10.0.87.143"}),
    ("loss | 2.0", "loss | 2.0", {}),
    ("2024-05-01T12:00:00+0000 gpu3 kernel: NVRM: Xid (PCI:0000:1b:00): 79", "NVRM: Xid (PCI:0000:1b:00): 79",
     {"host": "gpu3"}),
    ("May 01 12:00:00.123456 gpu3 python3[12]: OSError: x", "OSError: x", {"host": "gpu3"}),
    ("(worker2, rank=2, pid=5678, ip=10.0.0.3) OSError: x", "OSError: x", {"pid": 5678, "host": "10.0.0.3", "rank": None}),
    ("(worker2, rank=2, ip=10.0.0.3, pid=5678) OSError: x", "OSError: x", {"pid": 5678, "host": "10.0.0.3"}),
    ("[2024-03-15T16:29:06.552162Z] 5c902731 [rank=7] || OSError: x", "OSError: x", {"rank": 7}),
    ("[2024-01-01 12:00:00,000] [INFO] [launch.py:123:main] OSError: x", "OSError: x", {"level": None}),
    ("[WARNING|trainer.py:12] 2024-01-01 12:00:00,123 >> OSError: x", "OSError: x", {"level": None}),
    ("2024-01-01 12:00:00,123 - train - ERROR - OSError: x", "OSError: x", {}),
    ("ERROR:torch.distributed.run:OSError: x", "OSError: x", {}),
    ("ERROR: Unexpected segmentation fault encountered in worker.", "ERROR: Unexpected segmentation fault encountered in worker.", {}),
    ("2024-01-01 12:00:00.000 | ERROR    | __main__:<module>:12 - OSError: x", "OSError: x", {}),
]  # fmt: skip


@pytest.mark.parametrize(("line", "payload", "ctx"), CASES, ids=[c[0][:40] for c in CASES])
def test_prefixes_are_read_and_stripped(line, payload, ctx):
    fr = frame(line)
    assert fr.payload == payload
    for key, value in ctx.items():
        assert getattr(fr, key) == value, key


@given(st.text(max_size=300))
def test_framing_never_drops_text(line):
    fr = frame(line)
    assert fr.payload in fr.text  # the payload is a suffix of the line, never invented
    assert fr.text.endswith(fr.payload)


@given(st.sampled_from([c[0] for c in CASES]), st.sampled_from(["", " 12: ", "[default3]:", " 3: [default1]:"]))
def test_outer_prefixes_do_not_change_the_payload(line, prefix):
    assert frame(prefix + line).payload == frame(line).payload


PREFIX_PART = st.sampled_from(
    ["", " 3: ", "12: ", "   7: ", "P0 1: ", "[default3]:", "[rank5]:", "[rank5]: ", "[trainer12]:", "[rank]:",
     "[2026-01-02 03:04:05] ", "[1,3]<stdout>: ", "[E1202 10:11:12.123 ProcessGroupNCCL.cpp:12] ", " ", "x: "]
)  # fmt: skip
NCCL_HEAD = st.sampled_from(
    ["node-1:123:456 [0] NCCL INFO ", "node-1:123:456 NCCL WARN ", "h:1:2 [3] 12.5 NCCL TRACE ", "h:1:2 [3] NCCL INFO",
     "h:1:2 [3] misc/socket.cc:52 (12) NCCL INFO ", "h:x:2 [3] NCCL INFO ", ""]
)  # fmt: skip


@given(parts=st.lists(PREFIX_PART, max_size=3), head=NCCL_HEAD, payload=st.text(max_size=30))
def test_the_fast_path_reads_a_line_as_the_general_loop_does(parts, head, payload):
    line = "".join(parts) + head + payload
    assert frame(line) == frame_general(strip_ansi(line))


ASCII_TAIL = st.text(st.characters(min_codepoint=0, max_codepoint=127, blacklist_characters="\n\r\x1b"), max_size=30)


@given(parts=st.lists(PREFIX_PART, max_size=3), head=NCCL_HEAD, filler=ASCII_TAIL, payload=ASCII_TAIL)
def test_the_byte_level_prefix_reads_an_ascii_line_as_the_text_one(parts, head, filler, payload):
    """The scanner frames NCCL lines on their bytes; the separators \\x1c-\\x1f (whitespace to a str
    regex, not to a bytes one) and stray text inside the prefix must not make it read differently."""
    line = "".join(parts) + filler + head + payload
    m = match_common_nccl(line.encode())
    expected = _COMMON_NCCL.match(line)
    assert (m is None) == (expected is None)
    if m is not None:
        assert m.end() == expected.end()
        assert [g.decode() if g is not None else None for g in m.groups()] == list(expected.groups())


def test_the_byte_level_prefix_leaves_other_lines_to_the_general_reading():
    assert match_common_nccl("nöde:1:2 [0] NCCL INFO x".encode()) is None  # not ASCII: decoded first
    assert match_common_nccl(b"\x1b[1mh:1:2 [0] NCCL INFO x") is None
    assert match_common_nccl(b"h:1:2 [0] NCCL INFO Using network IB").end() == len(b"h:1:2 [0] NCCL INFO ")


# Pieces that the prefix pattern reads specially, to build heads that are right, nearly right or wrong.
HEAD_PIECE = st.sampled_from(
    [" ", "  ", ":", ": ", "[", "]", "]:", "[rank", "rank", "[rank3]", "[rank3]: ", "[default", "7", "12", "3.5", ".",
     "node-1", "h", "*", "`", ">", "(", ")", "(f) ", "x.cc:12 ", "XX", "NCCL", "NCCL ", "INFO", "INFO ", "WARN ",
     "[2026-01-02 03:04:05] ", "2026-01-02", "\x1c", "\t", "h:1:2 ", "h:1:2 [0] ", "1: "]
)  # fmt: skip
HEAD_TAIL = st.text(st.characters(min_codepoint=9, max_codepoint=126, blacklist_characters="\n\r\x1b"), max_size=20)


@given(pieces=st.lists(HEAD_PIECE, max_size=12), tail=st.lists(st.one_of(HEAD_PIECE, HEAD_TAIL), max_size=6))
def test_a_line_is_framed_as_its_head_up_to_the_first_nccl_info(pieces, tail):
    """The scanner without the compiled core frames a line by the head it cuts at the line's first
    " NCCL INFO " and remembers per head (diag.scan.scanner, frame_head): whatever follows the cut,
    and whatever stands before it, the line reads as its head does."""
    line = ("".join(pieces) + NCCL_INFO.decode() + "".join(tail)).encode()
    head = line[: line.find(NCCL_INFO) + len(NCCL_INFO)]
    assert frame_head(head) == frame_head(line)
    m = match_common_nccl(line)
    framed = frame_head(line)
    assert (m is None) == (framed is None)
    if m is not None:
        assert framed[:2] == (m.end(), m.group("level"))


@pytest.mark.parametrize("case", CASES, ids=[c[0][:40] for c in CASES])
def test_frame_head_reads_the_prefixes_of_known_lines_as_the_pattern_does(case):
    line = case[0].encode()
    if not line.isascii() or NCCL_INFO not in line:
        return
    head = line[: line.find(NCCL_INFO) + len(NCCL_INFO)]
    assert frame_head(head) == frame_head(line)
