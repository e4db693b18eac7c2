"""What real users paste: one host, a few lines, no host prefix, markdown around them, old NCCL.
Missing context is not negative evidence: the finding is still made, says what it assumed and is
less certain; only what the logs *show* (one node) silences it."""

from __future__ import annotations

from diag.api import diagnose_bytes
from diag.catalog.causes import severity_rank
from diag.diagnosis.context import MULTI_NODE_ASSUMED

HCA_PASTE = b"""[0] NCCL INFO NCCL_IB_HCA set to mlx5_9:1
[0] NCCL INFO NET/IB : No device found.
[0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
[0] NCCL INFO Using network Socket
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error
"""


def _by_id(report):
    return {f.id: f for f in report.findings}


def test_a_hostless_excerpt_still_names_the_root_and_says_what_it_assumed(rules):
    report = diagnose_bytes(HCA_PASTE, rules)
    found = _by_id(report)
    assert report.findings[0].id == "nccl-ib-hca-wrong"
    fallback = found["nccl-tcp-fallback"]
    assert fallback.explained_by == "nccl-ib-hca-wrong"
    assert MULTI_NODE_ASSUMED in fallback.assumed
    assert "(host not shown)" not in fallback.hosts


def test_an_assumption_costs_confidence(rules):
    two_hosts = HCA_PASTE.replace(b"[0] NCCL", b"n1:11:11 [0] NCCL") + HCA_PASTE.replace(
        b"[0] NCCL", b"n2:22:22 [0] NCCL"
    )
    assumed = _by_id(diagnose_bytes(HCA_PASTE, rules))["nccl-tcp-fallback"]
    shown = _by_id(diagnose_bytes(two_hosts, rules))["nccl-tcp-fallback"]
    assert MULTI_NODE_ASSUMED not in shown.assumed
    assert assumed.confidence < shown.confidence


def test_a_log_that_shows_one_node_is_not_a_tcp_fallback(rules):
    one_node = HCA_PASTE + b"[0] NCCL INFO comm 0x5581 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
    assert "nccl-tcp-fallback" not in _by_id(diagnose_bytes(one_node, rules))


def test_an_excerpt_of_a_working_run_raises_no_error(rules):
    """IB switched off and sockets in use, no failure, node count unknown: worth a warning, not an alarm."""
    paste = b"""n7:9:9 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
n7:9:9 [0] NCCL INFO NET/Socket : Using [0]ib0:172.19.146.21<0>
n7:9:9 [0] NCCL INFO Using network Socket
n7:9:9 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 18000 - Init COMPLETE
"""
    report = diagnose_bytes(paste, rules)
    assert report.findings, "the disabled IB is still worth saying"
    assert all(severity_rank(f.severity) < severity_rank("error") for f in report.findings)
    assert any(f.assumed for f in report.findings)


def test_markdown_quotes_and_fences_do_not_change_the_diagnosis(rules):
    plain = [f.id for f in diagnose_bytes(HCA_PASTE, rules).findings]
    quoted = b"```\n" + b"".join(b"> > " + line + b"\n" for line in HCA_PASTE.splitlines()) + b"```\n"
    assert [f.id for f in diagnose_bytes(quoted, rules).findings] == plain


def test_nccl_before_2_4_is_read_as_nccl(rules):
    """NCCL 2.0-2.3 printed 'INFO'/'WARN' without the word NCCL, and .cu source paths."""
    old = b"""h1:77:77 [0] INFO NCCL_IB_HCA set to mlx5_9
h1:77:77 [0] INFO NET/IB : No device found.
h1:77:77 [0] INFO NET/Socket : 1 interfaces found
h1:77:77 [0] INFO Using internal Network Socket
h1:77:77 [0] include/socket.h:360 WARN Call to connect failed : Connection refused
"""
    found = _by_id(diagnose_bytes(old, rules))
    assert "nccl-ib-hca-wrong" in found


UNSEEN = b"""node013:37715:38896 [0] NCCL INFO NET/IB : No device found.
node013:37715:38896 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.
node013:37715:38896 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.1.13<0>
node013:37715:38896 [0] NCCL INFO Using network Socket
"""


def test_no_ib_device_where_ib_was_wanted_points_at_the_container(rules):
    found = _by_id(diagnose_bytes(UNSEEN, rules))
    root = found["ib-devices-not-mounted"]
    assert any("/dev/infiniband" in a for a in root.assumed)
    assert root.confidence < 0.6
    assert found["nccl-tcp-fallback"].explained_by == "ib-devices-not-mounted"


def test_no_ib_device_on_an_ethernet_job_is_not_blamed_on_the_container(rules):
    ethernet = UNSEEN.replace(
        b"NCCL_IB_DISABLE set by environment to 0.", b"NCCL_SOCKET_NTHREADS set by environment to 4."
    )
    assert "ib-devices-not-mounted" not in _by_id(diagnose_bytes(ethernet, rules))


def test_one_line_of_a_short_paste_is_less_certain_than_many_lines(rules):
    line = b"RuntimeError: Address already in use\n"
    one = _by_id(diagnose_bytes(line, rules))["port-in-use"]
    five = _by_id(diagnose_bytes(line * 5, rules))["port-in-use"]
    assert one.confidence < five.confidence
    assert any("short excerpt" in a for a in one.assumed)
    assert not any("short excerpt" in a for a in five.assumed)


def test_a_file_missing_only_away_from_rank_0_was_written_on_rank_0s_node(rules):
    lines = b"".join(
        b"%d: [rank%d]: FileNotFoundError: [Errno 2] No such file or directory: '/opt/run7/index/train_doc_idx.npy'\n"
        % (task, rank)
        for task, rank in ((1, 8), (2, 16), (3, 24))
    )
    found = _by_id(diagnose_bytes(lines, rules))
    assert "node-local-path" in found
    assert set(found["node-local-path"].ranks) == {8, 16, 24}


def test_a_file_missing_on_every_rank_is_a_wrong_path_not_a_local_one(rules):
    lines = b"".join(
        b"[rank%d]: FileNotFoundError: [Errno 2] No such file or directory: '/opt/run7/datsets/shard-0.arrow'\n" % rank
        for rank in (0, 8, 16)
    )
    assert "node-local-path" not in _by_id(diagnose_bytes(lines, rules))


def test_framework_caches_and_relative_paths_are_node_local(rules):
    for line in (
        b"FileNotFoundError: [Errno 2] Failed to open local file '/home/u/.cache/huggingface/datasets/x.arrow'.",
        b"[rank3]: FileNotFoundError: [Errno 2] No such file or directory: 'cache/tokenized/part-3.bin'",
        b"[WARNING] [engine.py:1656:_get_all_zero_checkpoints] The following zero checkpoints paths are missing: ['/c/a.pt']",
    ):
        report = diagnose_bytes(line + b"\nsrun: error: n2: task 3: Exited with exit code 1\n", rules)
        assert report.findings[0].id == "node-local-path", (line, [f.id for f in report.findings])


def test_two_nccl_versions_in_one_paste_are_a_mismatch_even_without_hosts(rules):
    paste = b"NCCL version 2.14.3+cuda11.7\nsome output\nNCCL version 2.19.3+cuda12.3\nRuntimeError: NCCL error\n"
    finding = _by_id(diagnose_bytes(paste, rules))["nccl-version-mismatch"]
    assert "2.14.3" in finding.detail and "2.19.3" in finding.detail
    assert finding.assumed


def test_a_c10d_store_wait_that_times_out_is_a_collective_timeout(rules):
    line = (
        b"[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, "
        b"addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms\n"
    )
    finding = _by_id(diagnose_bytes(line + b"[rank1]: torch.distributed.DistStoreError: wait timeout\n", rules))
    assert "nccl-timeout" in finding and finding["nccl-timeout"].severity != "info"


UNKNOWN_PASTE = (
    b"step 200 loss 2.31\n"
    b"gpu-a7: frobnicator: cannot attach \x1b[31mwidget\x1b[0m 3 to the hyperlane: Operation not permitted\n"
    b"n1:22:22 [0] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, retrying\n"
    b"gpu-a7: fatal: hyperlane refused the widget\n"
)


def test_a_paste_whose_errors_no_rule_knows_gets_no_all_clear(rules):
    from diag.formats.terminal import render_terminal

    report = diagnose_bytes(UNKNOWN_PASTE, rules)
    assert report.findings == []
    assert [(e.line, e.host) for e in report.unrecognised] == [(2, "gpu-a7"), (4, "gpu-a7")]  # INFO is no error
    assert "2 lines no rule knows look like errors" in report.summary()
    shown = render_terminal(report, color=True)
    assert "✔" not in shown and "\x1b[31mwidget" not in shown, "log text never reaches the terminal as escapes"
    assert "hyperlane: Operation not permitted" in shown
    assert [u["line"] for u in report.to_json()["unrecognised"]] == [2, 4]


def test_a_report_with_a_finding_lists_no_unrecognised_lines(rules):
    report = diagnose_bytes(UNKNOWN_PASTE + b"srun: error: gpu-a7: task 3: Out Of Memory\n", rules)
    assert report.findings and report.unrecognised == []


def test_a_quiet_paste_is_still_an_all_clear(rules):
    report = diagnose_bytes(b"n1:22:22 [0] NCCL INFO Channel 00/02 : 0 1\nstep 200 loss 2.31\n", rules)
    assert report.findings == [] and report.unrecognised == [] and report.summary() == "no known problem found"


def test_a_large_log_is_not_sampled(rules, tmp_path):
    from diag.api import diagnose
    from diag.input.paste import PASTE_BYTES

    log = tmp_path / "big.log"
    log.write_bytes(b"step 1 loss 2.0\n" * (PASTE_BYTES // 16 + 1) + UNKNOWN_PASTE)
    report = diagnose([str(log)], rules=rules)
    assert report.findings == [] and report.unrecognised == []
