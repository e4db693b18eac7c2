"""Node-difference analyzers (diag/diagnosis/analyzers/nodes.py): HCA sets, IB link faults, NCCL versions, shared GPUs."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids

TWO_HCAS = "[0]mlx5_0:1/IB [1]mlx5_1:1/IB"


def ib_node(host: str, pid: int, devs: str = TWO_HCAS) -> list[str]:
    return [
        f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : Using {devs} ; OOB ib0:10.10.0.{pid}<0>",
        f"{host}:{pid}:{pid} [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
    ]


WATCHDOG = (
    "[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=20000) ran for "
    "20053 milliseconds before timing out."
)


# ------------------------------------------------------------------------------------ hca_mismatch
def test_node_with_fewer_hcas_is_the_odd_one_out(rules):
    report = diagnose(
        rules, ib_node("slinky-0", 10) + ib_node("slinky-1", 11) + ib_node("slinky-2", 12, "[0]mlx5_0:1/IB")
    )
    finding = found(report, "ib-hca-mismatch-nodes")
    # The job did not fail: a difference worth knowing, not yet an error.
    assert (finding.severity, finding.hosts) == ("warning", ["slinky-2"])


def test_nccls_unequal_device_notes_are_a_warning_while_the_run_goes_on(rules):
    # net_ib connect.cc prints these before it connects over the devices both sides share: the
    # rail-local note (INFO, 2.24+) and the merged-device count (WARN in 2.20-2.23, INFO since).
    notes = [
        "slinky-0:10:40 [0] NCCL INFO NET/IB : There are mismatched physical devices between local (0,1) and "
        "remote (0). To disable this warning, set NCCL_IB_WARN_RAIL_LOCAL=0",
        "slinky-0:10:40 [0] transport/net_ib.cc:1174 NCCL WARN NET/IB : Local mergedDev=mlx5_0+mlx5_1 has a "
        "different number of devices=2 as remoteDev=mlx5_0 nRemDevs=1",
    ]
    healthy = ib_node("slinky-0", 10) + ib_node("slinky-1", 11)
    for note in notes:
        finding = found(diagnose(rules, healthy + [note]), "ib-hca-mismatch-nodes")
        assert finding.severity == "warning", note
    # NCCL_IGNORE_NET_MISMATCH=1 makes 2.30's count check an INFO note (init.cc) and NCCL goes on.
    ignored = (
        "slinky-0:10:10 [0] NCCL INFO Detected mixed local Net device counts across ranks (min 1, max 2). Ignoring "
        "due to NCCL_IGNORE_NET_MISMATCH."
    )
    assert found(diagnose(rules, healthy + [ignored]), "ib-hca-mismatch-nodes").severity == "warning"
    # The same note in a job that then hung is the likeliest reason it did.
    assert found(diagnose(rules, healthy + [notes[1], WATCHDOG]), "ib-hca-mismatch-nodes").severity == "error"


def test_nccls_mixed_device_count_check_is_an_error_naming_the_odd_node(rules):
    check = (
        "[2026-06-02 10:11:12] slinky-3:12:12 [0] init.cc:1432 (ncclCommInitRankFunc) NCCL WARN Detected mixed local "
        "Net device counts across ranks (min 1, max 2). Set NCCL_IGNORE_NET_MISMATCH=1 to continue."
    )
    nodes = ib_node("slinky-0", 10) + ib_node("slinky-1", 11) + ib_node("slinky-3", 12, "[0]mlx5_0:1/IB")
    finding = found(diagnose(rules, nodes + [check]), "ib-hca-mismatch-nodes")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-3"])


def test_a_node_on_sockets_meeting_a_node_on_ib_is_a_mismatch_naming_the_node_without_ib(rules):
    report = diagnose(
        rules,
        [
            "slinky-0:16902:16954 [3] NCCL INFO NET/IB : No device found.",
            "slinky-0:16902:16954 [3] NCCL INFO NET/Socket : Using [0]ib0:192.168.1.11<0>",
            "slinky-0:16902:16954 [3] NCCL INFO Using network Socket",
            "slinky-1:695836:695883 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB [RO]; OOB ib0:192.168.1.14<0>",
            "slinky-1:695836:695883 [5] NCCL INFO Using network IB",
            "",
            "slinky-0:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
        ],
    )
    finding = report.findings[0]
    assert (finding.id, finding.severity) == ("ib-hca-mismatch-nodes", "error")
    assert "no IB device on slinky-0" in finding.detail
    # A bootstrap socket meeting a proxy one is another story (a stray connection), not IB against Socket.
    stray = "slinky-0:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 2 != 1"
    assert "ib-hca-mismatch-nodes" not in ids(diagnose(rules, [stray]))


def test_identical_hcas_on_every_node_is_no_mismatch(rules):
    report = diagnose(rules, ib_node("slinky-0", 10) + ib_node("slinky-1", 11) + ib_node("slinky-2", 12))
    assert "ib-hca-mismatch-nodes" not in ids(report)


# -------------------------------------------------------------------------------------- link_fault
RETRY_EXCEEDED = (
    "[2025-03-02 11:22:30] slinky-2:7781:7812 [3] transport/net_ib.cc:1132 NCCL WARN NET/IB : Got completion from peer "
    "10.10.0.13<53121> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.10.0.12 remoteGid "
    "::ffff:10.10.0.13"
)
FLUSH = (
    "[2025-03-02 11:22:35] slinky-3:7781:7812 [3] transport/net_ib.cc:1132 NCCL WARN NET/IB : Got completion from peer "
    "10.10.0.12<53121> with error 5, opcode 0, len 0, vendor err 249 (Recv) localGid ::ffff:10.10.0.13 remoteGid "
    "::ffff:10.10.0.12"
)


def test_link_fault_blames_the_first_real_completion_error_not_the_flushes(rules):
    # The flush (status 5) is printed first in the file but is a consequence of the retry error.
    report = diagnose(rules, [FLUSH, RETRY_EXCEEDED, WATCHDOG])
    fault = found(report, "ib-link-fault")
    assert (fault.severity, fault.hosts) == ("error", ["slinky-2"])
    assert found(report, "nccl-timeout").explained_by == "ib-link-fault"


def test_a_communicator_poisoned_by_a_fatal_hca_event_is_a_link_fault_even_when_only_pytorch_quotes_it(rules):
    # NCCL 2.23+ (net_ib ncclIbStatsCheckFatalCount) fails every later call once an async fatal event
    # was seen; a user often pastes only PyTorch's re-raise of it.
    paste = [
        "[rank5]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.23.4",
        "[rank5]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "[rank5]: Last error:",
        "[rank5]: communicator encountered a fatal error (detected in ncclIbIsend)",
    ]
    report = diagnose(rules, paste)
    assert report.findings[0].id == "ib-link-fault"
    # With the event itself in the log, that line is the first error the finding names.
    event = (
        "[2025-03-02 11:22:30] n3:7:9 [5] transport/net_ib.cc:123 NCCL WARN NET/IB : mlx5_5:1 async fatal event: "
        "local catastrophic error"
    )
    finding = found(diagnose(rules, [event, *paste]), "ib-link-fault")
    assert "local catastrophic error" in finding.detail and finding.hosts == ["n3"]


def test_link_speed_drop_is_a_warning_and_non_fatal_async_events_are_nothing(rules):
    drop = "slinky-2:7781:7790 [0] NCCL WARN NET/IB : mlx5_3:1 speed change detected: 400000 -> 200000 Mbps"
    finding = found(diagnose(rules, [drop]), "ib-link-fault")
    assert (finding.severity, finding.hosts) == ("warning", ["slinky-2"])
    rise = "slinky-2:7781:7790 [0] NCCL WARN NET/IB : mlx5_3:1 speed change detected: 200000 -> 400000 Mbps"
    assert "ib-link-fault" not in ids(diagnose(rules, [rise]))
    # A subnet manager failover: the HCA reports it, nothing is broken.
    failover = (
        "[2025-12-01 11:03:02] slinky-2:254280:254287 [0] transport/net_ib/init.cc:131 NCCL WARN NET/IB : mlx5_2:1 "
        "Got non-fatal async event: GID table change(18)"
    )
    assert "ib-link-fault" not in ids(diagnose(rules, [failover]))


# -------------------------------------------------------------------------------- version_mismatch
def version(host: str, text: str) -> str:
    return f"{host}:9912:9912 [0] NCCL INFO NCCL version {text}"


def test_node_with_another_nccl_is_named(rules):
    lines = [
        version("slinky-0", "2.23.4+cuda12.6"),
        version("slinky-1", "2.23.4+cuda12.6"),
        version("slinky-3", "2.21.5+cuda12.4"),
    ]
    finding = found(diagnose(rules, lines + [WATCHDOG]), "nccl-version-mismatch")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-3"])


def test_two_nodes_on_two_nccls_are_a_mismatch_without_a_majority(rules):
    # NCCL <= 2.22 has no check: the pair shows only as each node's version line, then a bootstrap
    # message cut short (bootstrap.cc "Message truncated : received <a> bytes instead of <b>").
    lines = [
        version("slinky-0", "2.18.5+cuda12.2"),
        version("slinky-1", "2.21.5+cuda12.4"),
        "slinky-0:9912:9950 [0] bootstrap.cc:150 NCCL WARN Message truncated : received 2048 bytes instead of 1536",
    ]
    report = diagnose(rules, lines)
    finding = found(report, "nccl-version-mismatch")
    assert report.findings[0].id == "nccl-version-mismatch"
    assert (finding.severity, finding.hosts) == ("error", ["slinky-0", "slinky-1"])
    # One node printing two versions (two programs run one after the other) is no split between nodes.
    assert "nccl-version-mismatch" not in ids(
        diagnose(rules, [version("slinky-0", "2.18.5+cuda12.2"), version("slinky-0", "2.21.5+cuda12.4")])
    )


def test_nccls_refusal_names_the_minority_rank_and_its_node(rules):
    placed = [
        f"slinky-{r // 8}:{100 + r}:{100 + r} [0] NCCL INFO comm 0x{r:x}1 rank {r} nranks 32 cudaDev 0 busId 1000 - "
        "Init START"
        for r in (0, 8, 16, 24)
    ]
    refused = [
        f"[2025-02-11 10:22:01] slinky-3:124:124 [0] init.cc:1021 NCCL WARN Mismatched NCCL version detected : "
        f"rank 24 version 21805 rank {r} version 22304"
        for r in (0, 8)
    ]
    finding = found(diagnose(rules, placed + refused), "nccl-version-mismatch")
    assert (finding.ranks, finding.hosts) == ([24], ["slinky-3"])


def test_same_nccl_built_for_another_cuda_is_no_mismatch(rules):
    lines = [version("slinky-0", "2.23.4+cuda12.6"), version("slinky-3", "2.23.4+cuda12.4")]
    assert "nccl-version-mismatch" not in ids(diagnose(rules, lines))


# ----------------------------------------------------------------------------------- duplicate_gpu
def test_duplicate_gpu_names_both_ranks(rules):
    line = (
        "[2026-12-02 10:49:47] vm:817:817 [0] init.cc:904 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both "
        "on CUDA device 60"
    )
    finding = found(diagnose(rules, [line]), "nccl-duplicate-gpu")
    assert (finding.severity, finding.ranks, finding.hosts) == ("error", [0, 1], ["vm"])


def test_shared_gpu_that_nccl_allows_is_a_warning_and_the_barrier_hint_is_nothing(rules):
    allowed = "slinky-0:51:51 [0] NCCL INFO Multiple ranks on the same GPU detected and allowed. Disabling NVLS."
    assert found(diagnose(rules, [allowed]), "nccl-duplicate-gpu").severity == "warning"
    hint = (
        "[rank3]:[W1202 10:49:30.1 ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank 3]  using GPU 3 to perform "
        "barrier as devices used by this process are currently unknown. This can potentially cause a hang if this "
        "rank to GPU mapping is incorrect."
    )
    assert "nccl-duplicate-gpu" not in ids(diagnose(rules, [hint]))


def test_mvapich2s_completion_error_is_a_link_fault(rules):
    report = diagnose(rules, [
        "[gpu-n3:mpi_rank_4][MPIDI_CH3I_MRAILI_Cq_poll] src/mpid/ch3/channels/mrail/src/gen2/ibv_channel_manager.c:586: "
        "[] Got completion with error 12, vendor code=0x81, dest rank=9",
    ])  # fmt: skip
    assert report.findings[0].id == "ib-link-fault"
    assert "status 12" in found(report, "ib-link-fault").detail


def test_two_ranks_on_one_device_quoted_without_ncclss_prefix_are_still_a_shared_gpu(rules):
    report = diagnose(rules, ["Error: rank 11 and rank 3 both on CUDA device 1b000 (PCI 1b:00.0)"])
    assert report.findings[0].id == "nccl-duplicate-gpu"
    assert found(report, "nccl-duplicate-gpu").ranks == [3, 11]


def test_a_peer_that_refused_nccls_connection_is_gone_and_its_address_is_named(rules):
    lines = [
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8",
        "r11i6n2:486514:486651 [1] include/socket.h:403 NCCL WARN Connect to 10.148.3.247<56821> failed : Connection refused",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "node-failure" and "10.148.3.247" in report.findings[0].detail
    assert "nccl-socket-ifname" not in ids(report)  # refused is an answer: the address was reachable
    # The same refusal printed while the job went on (a retry that then worked) is nothing.
    assert "node-failure" not in ids(diagnose(rules, lines[1:]))


def test_ucx_ud_endpoint_timeout_is_a_link_fault_on_the_node_that_reports_it(rules):
    line = "208: [b1374:545909:0:545909] ud_ep.c:278 Fatal: UD endpoint 0xaff0a40 to : unhandled timeout error"
    fault = found(diagnose(rules, [line]), "ib-link-fault")
    assert fault.hosts == ["b1374"] and "UD endpoint" in fault.detail and "timed out" in fault.detail


def test_open_mpi_losing_its_daemon_on_a_node_is_a_node_failure(rules):
    box = [
        "ORTE has lost communication with its daemon located on node:",
        "",
        "  hostname:  ip-10-15-20-17.ec2.internal",
        "",
        "This is usually due to either a failure of the TCP network",
    ]
    report = diagnose(rules, box)
    assert report.findings[0].id == "node-failure" and "lost the daemon" in report.findings[0].detail
    # Losing "a remote daemon" is PMIx/ORTE wiring at run time, as before.
    assert "node-failure" not in ids(diagnose(rules, ["ORTE has lost communication with a remote daemon."]))


def test_a_node_registering_with_less_memory_than_configured_is_a_lost_node(rules):
    lines = [
        "[2021-12-14T09:52:21.414] debug:  Node hb120v2-2 has low real_memory size (435161 < 443596)",
        "[2021-12-14T09:52:21.414] error: _slurm_rpc_node_registration node=hb120v2-2: Invalid argument",
    ]
    finding = found(diagnose(rules, lines), "node-failure")
    assert finding.hosts == ["hb120v2-2"] and "Low RealMemory" in finding.detail


def test_mvapich2s_fatal_port_event_is_a_link_fault(rules):
    line = (
        "[node017:mpi_rank_3][async_thread] src/mpid/ch3/channels/mrail/src/gen2/ibv_channel_manager.c:1376: "
        "Got FATAL event port error on port 1"
    )
    assert "port error" in found(diagnose(rules, [line]), "ib-link-fault").detail


def test_nccl_2_30_3_refusing_two_ranks_on_one_gpu_names_the_pair(rules):
    info = "node017:2231:2231 [0] NCCL INFO Detected ranks 0 and 1 sharing GPU with bus 1B000 on this node"
    refusal = (
        "node017:2231:2231 [0] graph/topo.cc:1977 NCCL WARN Multiple ranks detected using the same GPU on this node. "
        "Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."
    )
    finding = found(diagnose(rules, [info, refusal]), "nccl-duplicate-gpu")
    assert finding.severity == "error" and finding.ranks == [0, 1] and "1B000" in finding.detail


def test_ucx_endpoint_timeout_and_open_mpis_rnr_box_are_link_faults_naming_the_hca(rules):
    ucx = (
        "[1733390455.018822] [node017:2231 :0]          ucp_ep.c:1660 UCX  ERROR ep 0x7f2a4c0a1000: error "
        "'Endpoint timeout' on rc_mlx5/mlx5_0:1 will not be handled since no error callback is installed"
    )
    finding = found(diagnose(rules, [ucx]), "ib-link-fault")
    assert "mlx5_0 on node017" in finding.detail and "stopped acknowledging" in finding.detail
    rnr = [
        'The OpenFabrics "receiver not ready" retry count on a per-peer',
        "connection between two MPI processes has been exceeded.  In general,",
    ]
    assert "receiver not ready" in found(diagnose(rules, rnr), "ib-link-fault").detail


def test_ucx_saying_why_a_peer_is_unreachable_names_the_fabric_difference(rules):
    head = "[1733390412.611023] [node017:2231 :0]         select.c:722  UCX  ERROR no active messages transport to node018:77120: "
    reason = "self/memory - Destination is unreachable, rc_mlx5/mlx5_0:1 - {}"
    said = found(diagnose(rules, [head + reason.format("local IB remote RoCE")]), "ib-hca-mismatch-nodes")
    assert "InfiniBand, the peer's RoCE" in said.detail
    # A RoCE addressing reason is the GID's question, not a difference of devices.
    versions = diagnose(rules, [head + reason.format("local ::ffff:10.20.1.12/RoCE v2 remote fe80::ba3f:d2ff:fe1c:4e11/RoCE v1")])
    assert "roce-gid-index" in ids(versions) and "ib-hca-mismatch-nodes" not in ids(versions)
    # Older UCX says only "Destination is unreachable": the same suspect, at lower confidence, saying so.
    vague = found(diagnose(rules, [head + reason.format("Destination is unreachable")]), "ib-hca-mismatch-nodes")
    assert vague.confidence < said.confidence and any("already died" in a for a in vague.assumed)
    # Flush errors alone (status 5) are what every rank sees once a peer died: a warning naming no link.
    flush = (
        "node017:2231:2290 [0] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from peer 10.20.1.13<50432> with "
        "status=IBV_WC_WR_FLUSH_ERR(5) opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) reqSize=0 vendor_err=249 req_type=Recv hca mlx5_3"
    )
    flushed = found(diagnose(rules, [flush]), "ib-link-fault")
    assert flushed.severity == "warning" and "name no link" in flushed.detail


def test_completion_errors_from_an_empty_gid_entry_are_the_gid_index_not_the_link(rules):
    # NCCL's QP line shows the GID it uses as (prefix/interface id): 0/0 is an empty entry, which no peer answers.
    qp = "roce-2:5511:5602 [3] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1203 mtu 5 GID 3 (0/0) fifoRkey=0x1a fifoLkey=0x1a"
    cqe = (
        "roce-2:5511:5602 [3] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer 10.20.0.13<33101> "
        "with error 12, opcode 0, len 0, vendor err 129 (Send)"
    )
    report = diagnose(rules, [qp, cqe])
    assert [f.id for f in report.findings[:2]] == ["roce-gid-index", "ib-link-fault"]
    assert "empty (0/0)" in found(report, "ib-link-fault").detail
    # Without the empty entry the completion error stays the link's.
    assert diagnose(rules, [cqe]).findings[0].id == "ib-link-fault"
