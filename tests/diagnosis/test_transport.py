"""Transport analyzers (diag/diagnosis/analyzers/transport/): why NCCL runs over TCP, and which setting did it."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, one_node


def top(report) -> str | None:
    """The finding a user reads first."""
    return report.findings[0].id if report.findings else None


def ib_node(host: str, pid: int = 12, gdr: bool = True) -> list[str]:
    """A node where NCCL found its HCAs and uses InfiniBand (with GPUDirect RDMA unless ``gdr`` is off)."""
    via = "NET/IB/0/GDRDMA" if gdr else "NET/IB/0"
    return [
        f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.10.0.{pid}<0>",
        f"{host}:{pid}:{pid} [0] NCCL INFO Using network IB",
        f"{host}:{pid}:{pid} [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via {via}",
    ]


def socket_node(host: str, pid: int = 13) -> list[str]:
    """A node where NCCL carries inter-node traffic over its TCP socket transport."""
    return [
        f"{host}:{pid}:{pid} [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.{pid}<0>",
        f"{host}:{pid}:{pid} [0] NCCL INFO Using network Socket",
        f"{host}:{pid}:{pid} [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/Socket/0",
    ]


# ------------------------------------------------------------------------------------ tcp_fallback
def test_tcp_fallback_names_the_socket_node_when_another_node_uses_ib(rules):
    report = diagnose(rules, ib_node("slinky-0") + socket_node("slinky-1"))
    tcp = found(report, "nccl-tcp-fallback")
    assert tcp.severity == "error"
    assert tcp.hosts == ["slinky-1"]


def test_tcp_fallback_is_only_info_on_ethernet_nodes_and_silent_on_one_node(rules):
    ethernet = found(diagnose(rules, socket_node("slinky-0", 12) + socket_node("slinky-1")), "nccl-tcp-fallback")
    assert ethernet.severity == "info"
    # One node: no inter-node traffic at all, so sockets mean nothing.
    assert "nccl-tcp-fallback" not in ids(diagnose(rules, one_node() + socket_node("slinky-1")))


# ------------------------------------------------------------------------------------- ib_expected
def provider_warning(provider: str) -> str:
    """libibverbs (dynamic_driver.c) on stderr, no host prefix: a provider in /etc/libibverbs.d it cannot load."""
    lib = f"lib{provider}-rdmav34.so"
    return f"libibverbs: Warning: couldn't load driver '{lib}': {lib}: cannot open shared object file: No such file"


def test_verbs_provider_warnings_on_nodes_whose_hcas_nccl_opened_are_no_finding(rules):
    healthy = ib_node("slinky-0") + ib_node("slinky-1", 13)
    # ConnectX-3's provider missing on nodes with mlx5 HCAs, or any provider where IB came up everywhere.
    assert "ib-verbs-library-missing" not in ids(diagnose(rules, healthy + [provider_warning("mlx4")]))
    assert "ib-verbs-library-missing" not in ids(diagnose(rules, healthy + [provider_warning("mlx5")]))
    # The HCA's own provider missing where a node then found no device and used sockets: the cause.
    broken = ["slinky-1:13:13 [0] NCCL INFO NET/IB : No device found.", *socket_node("slinky-1")]
    report = diagnose(rules, ib_node("slinky-0") + [provider_warning("mlx5"), *broken])
    assert found(report, "ib-verbs-library-missing").severity == "error"


UNOPENABLE = "slinky-1:13:13 [0] transport/net_ib.cc:201 NCCL WARN NET/IB : Unable to open device mlx5_0"
NO_VERBS = "slinky-1:13:13 [0] misc/ibvwrap.cc:109 NCCL WARN Failed to open libibverbs.so.1"


def test_unopenable_ib_devices_are_the_root_of_the_tcp_fallback(rules):
    report = diagnose(rules, ib_node("slinky-0") + [UNOPENABLE] + socket_node("slinky-1"))
    root = found(report, "ib-devices-not-mounted")
    assert (root.severity, root.hosts) == ("error", ["slinky-1"])
    assert found(report, "nccl-tcp-fallback").explained_by == "ib-devices-not-mounted"
    # One node: the same line cannot slow inter-node traffic (the rule's single_node_severity).
    assert (
        found(diagnose(rules, [UNOPENABLE] + socket_node("slinky-1")), "ib-devices-not-mounted").severity == "warning"
    )


def test_missing_verbs_library_matters_only_where_ib_was_expected(rules):
    report = diagnose(rules, ib_node("slinky-0") + [NO_VERBS] + socket_node("slinky-1"))
    root = found(report, "ib-verbs-library-missing")
    assert (root.severity, root.hosts) == ("error", ["slinky-1"])
    assert found(report, "nccl-tcp-fallback").explained_by == "ib-verbs-library-missing"
    # Ethernet-only nodes print the same line on every healthy job: only info there.
    ethernet = diagnose(rules, [NO_VERBS] + socket_node("slinky-0", 12) + socket_node("slinky-1"))
    assert found(ethernet, "ib-verbs-library-missing").severity == "info"
    # One node, as nccl-tests lists its ranks: NCCL never uses the network there.
    tests = [f"#  Rank  {r} Group  0 Pid   4766 on   slinky-0 device  {r} [0x21] NVIDIA H100" for r in (0, 1)]
    assert found(diagnose(rules, tests + [NO_VERBS]), "ib-verbs-library-missing").severity == "info"


# ------------------------------------------------------------------------------------- ib_disabled
IB_DISABLE = "slinky-1:13:13 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1."


def test_ib_disable_is_an_error_where_the_cluster_has_ib(rules):
    report = diagnose(rules, ib_node("slinky-0") + [IB_DISABLE] + socket_node("slinky-1"))
    root = found(report, "nccl-ib-disabled")
    assert (root.severity, root.hosts) == ("error", ["slinky-1"])
    assert found(report, "nccl-tcp-fallback").explained_by == "nccl-ib-disabled"


def test_ib_disable_is_milder_without_ib_or_on_one_node(rules):
    ethernet = diagnose(rules, socket_node("slinky-0", 12) + [IB_DISABLE] + socket_node("slinky-1"))
    assert found(ethernet, "nccl-ib-disabled").severity == "warning"
    one = diagnose(rules, one_node() + [IB_DISABLE] + socket_node("slinky-1"))
    assert found(one, "nccl-ib-disabled").severity == "info"


# ------------------------------------------------------------------------------------ ib_hca_wrong
def test_ib_hca_matching_nothing_names_its_node(rules):
    wrong = [
        "slinky-1:13:13 [0] NCCL INFO NCCL_IB_HCA set to mlx5_9:1",
        "slinky-1:13:13 [0] NCCL INFO NET/IB : No device found.",
    ]
    report = diagnose(rules, ib_node("slinky-0") + wrong + socket_node("slinky-1"))
    root = found(report, "nccl-ib-hca-wrong")
    assert (root.severity, root.hosts) == ("error", ["slinky-1"])
    assert found(report, "nccl-tcp-fallback").explained_by == "nccl-ib-hca-wrong"


def test_ib_hca_that_matches_is_no_finding(rules):
    hca = "{h}:{p}:{p} [0] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1"
    report = diagnose(
        rules,
        [hca.format(h="slinky-0", p=12)]
        + ib_node("slinky-0")
        + [hca.format(h="slinky-1", p=13)]
        + ib_node("slinky-1", 13),
    )
    assert "nccl-ib-hca-wrong" not in ids(report)
    assert "nccl-tcp-fallback" not in ids(report)


# ----------------------------------------------------------------------------------- socket_ifname
def bootstrap(host: str, iface: str, addr: str) -> str:
    return f"{host}:12:12 [0] NCCL INFO Bootstrap: Using {iface}:{addr}<0>"


def test_bootstrap_over_loopback_names_the_node_and_is_an_error_once_connects_fail(rules):
    lines = [bootstrap("slinky-0", "lo", "127.0.0.1"), bootstrap("slinky-1", "eth0", "10.0.0.11")]
    quiet = found(diagnose(rules, lines), "nccl-socket-ifname")
    assert (quiet.severity, quiet.hosts) == ("warning", ["slinky-0"])
    failed = lines + [
        "slinky-1:12:30 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 127.0.0.1<44131> failed : "
        "Connection refused"
    ]
    loud = found(diagnose(rules, failed), "nccl-socket-ifname")
    assert (loud.severity, loud.hosts) == ("error", ["slinky-0"])


def test_routable_bootstrap_interface_or_one_node_is_no_finding(rules):
    ib0 = [bootstrap("slinky-0", "ib0", "10.10.0.10"), bootstrap("slinky-1", "ib0", "10.10.0.11")]
    assert "nccl-socket-ifname" not in ids(diagnose(rules, ib0))
    # lo on a one-node job reaches every rank.
    assert "nccl-socket-ifname" not in ids(diagnose(rules, [bootstrap("slinky-0", "lo", "127.0.0.1")]))


def test_no_socket_interface_is_an_error_on_its_own(rules):
    line = "[2026-12-02 10:49:30] vm:717:717 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found"
    finding = found(diagnose(rules, [line]), "nccl-socket-ifname")
    assert (finding.severity, finding.hosts) == ("error", ["vm"])


# -------------------------------------------------------------------------------------- net_plugin
def test_net_plugin_that_failed_to_initialize_is_an_error(rules):
    line = "[2026-12-02 10:49:24] vm:668:668 [0] plugin/net.cc:379 NCCL WARN Failed to initialize any NET plugin"
    finding = found(diagnose(rules, [line]), "nccl-net-plugin")
    assert (finding.severity, finding.hosts) == ("error", ["vm"])


def test_asked_for_plugin_missing_is_a_warning_but_the_default_probe_is_nothing(rules):
    asked = [
        "slinky-0:12:12 [0] NCCL INFO NCCL_NET_PLUGIN set by environment to aws-ofi",
        "slinky-0:12:12 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net-aws-ofi.so",
    ]
    finding = found(diagnose(rules, asked + ib_node("slinky-0")), "nccl-net-plugin")
    assert (finding.severity, finding.hosts) == ("warning", ["slinky-0"])
    # Every NCCL probes the default name; not finding it is how a job without a plugin looks.
    default = ["slinky-0:12:12 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so"]
    assert "nccl-net-plugin" not in ids(diagnose(rules, default + ib_node("slinky-0")))
    # RCCL (AMD) probes its own default name the same way, in the same words.
    rccl = ["mi300x-01:401:1403 [2] NCCL INFO NET/Plugin: Could not find: librccl-net.so. Using internal network plugin."]
    assert "nccl-net-plugin" not in ids(diagnose(rules, rccl + ib_node("slinky-0")))
    # ... except on HPE Slingshot, whose NICs (hsn*) carry RDMA only through the libfabric plugin.
    slingshot = [
        "g1064:11143:11143 [0] NCCL INFO NET/Plugin : No plugin found (librccl-net.so), using internal implementation",
        "g1064:11143:11194 [0] NCCL INFO NET/IB : No device found.",
        "g1064:11143:11194 [0] NCCL INFO NET/Socket : Using [0]bond0:10.64.4.21<0> [1]hsn0:10.80.0.205<0>",
        "g1064:11143:11194 [0] NCCL INFO Using network Socket",
        "g1064:11143:11194 [0] NCCL INFO comm 0xf37f2e0 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0",
    ]
    report = diagnose(rules, slingshot)
    assert top(report) == "nccl-net-plugin" and "aws-ofi" in found(report, "nccl-net-plugin").detail


def test_a_plugin_without_the_last_api_an_old_nccl_tries_is_unused_but_a_newer_api_missing_is_not(rules):
    def probe(*apis: int) -> list[str]:
        return [f"node017:2231:2231 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v{a} symbol." for a in apis]

    socket = ["node017:2231:2231 [0] NCCL INFO Using network Socket"]
    for lines in (probe(2), probe(3) + socket, probe(5, 4)):
        finding = found(diagnose(rules, lines), "nccl-net-plugin")
        assert "ncclNetPlugin_v" in finding.detail, lines
    v4_or_v5 = probe(6, 5) + ["node017:2231:2231 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin symbol (v4 or v5)."]
    assert "older NCCL" in found(diagnose(rules, v4_or_v5), "nccl-net-plugin").detail
    # 2.12 tries v5, then loads the plugin's v4: it works.
    assert "cannot be used" not in " ".join(f.detail for f in diagnose(rules, probe(5)).findings)


def test_nccl_2_26_probe_chain_that_reaches_v6_unloaded_is_a_plugin_too_old_to_use(rules):
    def probe(*apis: int) -> list[str]:
        return [f"node01:5521:5521 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v{a} symbol." for a in apis]

    # 2.26-2.27 try v10 down to v6 and then say nothing more: the plugin is dropped.
    unused = found(diagnose(rules, probe(10, 9, 8, 7, 6) + socket_node("node01")), "nccl-net-plugin")
    assert "NCCL 2.26+" in unused.detail and "cannot be used" in unused.detail
    # ... while a chain that ends in a load is an older plugin that works.
    loaded = ["node01:5521:5521 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v7)"]
    assert "cannot be used" not in " ".join(f.detail for f in diagnose(rules, probe(10, 9, 8) + loaded).findings)
    # 2.19-2.21 probe v8/v7/v6 and go on to v5: v6 missing there is not the end of the chain.
    assert "NCCL 2.26+" not in " ".join(f.detail for f in diagnose(rules, probe(8, 7, 6)).findings)


TCPX_HOST = "a3-node-03:2210:2400 [1] NCCL WARN {fatal}10.0.1.3:43321<-10.0.1.4:55102 data landed on host memory 4 times"


def test_tcpx_data_in_host_memory_is_flow_steering_that_rxdm_did_not_set_up(rules):
    finding = found(diagnose(rules, [TCPX_HOST.format(fatal="fatal, ")]), "nccl-net-plugin")
    assert "flow steering" in finding.detail and "RxDM" in finding.detail
    assert finding.severity == "error"
    # The build that goes on after it, in a run that did not fail: worth a warning, not an error.
    assert found(diagnose(rules, [TCPX_HOST.format(fatal="")]), "nccl-net-plugin").severity == "warning"


def test_a_tcpx_or_fastsocket_warning_nothing_else_explains_is_a_weak_plugin_suspect(rules):
    tcpx = "a3-node-07:3310:3310 [0] NCCL WARN NET/GPUDirectTCPX/CUDA : no cuDevices found"
    finding = found(diagnose(rules, [tcpx]), "nccl-net-plugin")
    assert "GPUDirect-TCPX" in finding.detail and finding.confidence < 0.5
    listen = (
        "a3-node-03:2210:2400 [1] tcpxResult_t tcpxListen(int, void*, void**):541 NCCL WARN gpu 1 0000:0c:00.0, "
        "net dev 1, listen FAILED (no flow steering)"
    )
    assert "listen FAILED" in found(diagnose(rules, [listen]), "nccl-net-plugin").detail
    # The plugins' notices on runs that go on (a slow first connect, retries that then connect) are not suspects.
    notices = [
        "a3-0:11:11 [0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0xadca8062b70:0xadca805d0f0, nic 0, "
        "enp12s0, 172.16.0.11<39187><-172.16.0.95<46723> rx rx ctrl timeout cnt 7331502, nanos 10000000585",
        "full-debug2-test-0:4300:4325 [0] net_fastsocket.cc:785 NCCL WARN Maximum retry reached for accept 3.",
    ]
    assert "nccl-net-plugin" not in ids(diagnose(rules, notices))


HOROVOD_DONE = "Fri Jun 19 09:02:11 2020[1,0]<stdout>:Total img/sec on 8 GPU(s): 433.1 +-20.5"


def test_a_run_that_finished_over_tcp_was_slowed_not_failed(rules):
    lines = ib_node("slinky-0") + [UNOPENABLE] + socket_node("slinky-1")
    report = diagnose(rules, lines + [HOROVOD_DONE])
    root = found(report, "ib-devices-not-mounted")
    assert root.severity == "warning" and "the run still finished" in root.detail
    assert found(report, "nccl-tcp-fallback").severity == "warning"
    # Without the benchmark's last line the same fallback is an error (test above); nccl-tests' data check
    # does not count as finishing: the bandwidth over the transport is what that run measures.
    tests_ok = "# Out of bounds values : 0 OK"
    assert found(diagnose(rules, lines + [tests_ok]), "ib-devices-not-mounted").severity == "error"


# ---------------------------------------------------------------------------------------- roce_gid
MODIFY_QP = (
    "[2025-05-02 08:11:02] {h}:5511:5602 [3] misc/ibvwrap.cc:196 NCCL WARN Call to ibv_modify_qp failed with 22 "
    "Invalid argument, on dev mlx5_3:1, curr state INIT, next state RTR, local GID index 1, local GID "
    "fe80::ba59:9f03:29a:1b4e, remote GID fe80::ba59:9f03:29a:1b4f"
)


def fabric(link: str, prefix: str) -> list[str]:
    return [
        f"{prefix}-{n}:5511:5511 [3] NCCL INFO NET/IB : Using [0]mlx5_3:1/{link} ; OOB eth0:10.20.0.1{n}<0>"
        for n in (1, 2)
    ]


def test_modify_qp_failure_on_roce_is_a_gid_index_problem_of_that_node(rules):
    finding = found(diagnose(rules, fabric("RoCE", "roce") + [MODIFY_QP.format(h="roce-2")]), "roce-gid-index")
    assert (finding.severity, finding.hosts) == ("error", ["roce-2"])


def test_modify_qp_failure_on_infiniband_is_not_about_gid_indexes(rules):
    assert "roce-gid-index" not in ids(diagnose(rules, fabric("IB", "ib") + [MODIFY_QP.format(h="ib-2")]))


# ------------------------------------------------------------------------------------ gdr_disabled
def test_gdr_disabled_names_the_node_whose_ib_channels_lack_gdrdma(rules):
    finding = found(diagnose(rules, ib_node("slinky-0") + ib_node("slinky-1", 13, gdr=False)), "gdr-disabled")
    assert (finding.severity, finding.hosts) == ("warning", ["slinky-1"])


def test_gdr_everywhere_or_one_node_is_no_finding(rules):
    assert "gdr-disabled" not in ids(diagnose(rules, ib_node("slinky-0") + ib_node("slinky-1", 13)))
    # Inside one node GPUs talk over NVLink/PCIe: no inter-node data to stage.
    assert "gdr-disabled" not in ids(diagnose(rules, one_node() + ib_node("slinky-1", 13, gdr=False)))


# ----------------------------------------------------------------------------------- shm_too_small
def test_shm_extend_failure_is_an_error_on_its_node(rules):
    line = (
        "[2025-02-11 10:22:01] slinky-1:9912:9977 [2] misc/shmutils.cc:89 NCCL WARN Error: failed to extend "
        "/dev/shm/nccl-Xa8Pfd to 9637892 bytes, error: No space left on device (28)"
    )
    finding = found(diagnose(rules, [line]), "shm-too-small")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-1"])


def test_sigbus_is_blamed_on_shm_only_with_an_nccl_that_fails_that_way(rules):
    def job(version: str) -> list[str]:
        return [
            f"slinky-1:9912:9912 [0] NCCL INFO NCCL version {version}+cuda12.2",
            "slinky-1:9912:9912 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
            "srun: error: slinky-1: task 1: Bus error (core dumped)",
        ]

    assert found(diagnose(rules, job("2.18.3")), "shm-too-small").severity == "error"
    # 2.19+ report a full /dev/shm as an NCCL error: a bare SIGBUS there is something else.
    assert "shm-too-small" not in ids(diagnose(rules, job("2.21.5")))


# ------------------------------------------------------------------- socket interfaces as pasted
def test_container_bridges_in_a_hand_wrapped_socket_list_name_the_interfaces(rules):
    # A paste where the user broke NCCL's one-line interface list into one entry per line.
    lines = ["INFO NET/Socket : Using", "[0]bond0:192.168.1.161<0>"] + [
        f"[{i}]br-{i:02d}ab815fa14e:172.{18 + i}.0.1<0>" for i in range(1, 4)
    ]
    finding = found(diagnose(rules, lines), "nccl-socket-ifname")
    assert "br-01ab815fa14e" in finding.detail and finding.assumed
    assert finding.severity == "warning"  # nothing failed in the excerpt
    # On a job known to run on one node the same list is harmless.
    assert "nccl-socket-ifname" not in ids(diagnose(rules, one_node() + lines))


def test_bootstrap_failure_over_ipoib_points_at_the_socket_interface(rules):
    lines = [
        "dgx-03:2331:2666 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB/SHARP [1]mlx5_1:1/IB/SHARP [RO]; OOB ibp75s0:192.168.0.103<0>",
        "dgx-03:2330:2658 [2] NCCL INFO misc/socket.cc:567 -> 2",
        "dgx-03:2330:2658 [2] NCCL INFO bootstrap.cc:270 -> 2",
    ]
    finding = found(diagnose(rules, lines), "nccl-socket-ifname")
    assert "ibp75s0" in finding.detail and finding.hosts == ["dgx-03"]
    # The same IPoIB interface in a job whose bootstrap worked is no finding.
    assert "nccl-socket-ifname" not in ids(diagnose(rules, lines[:1]))


# --------------------------------------------------------------------------- plugins, HCA filters
def test_net_plugin_present_on_some_nodes_only_names_the_nodes_without_it(rules):
    lines = [
        "HGX-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
        "HGX-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
    ]
    finding = found(diagnose(rules, lines), "nccl-net-plugin")
    assert finding.hosts == ["HGX-11"] and "HGX-04" in finding.detail
    # Every node without the plugin is the usual, harmless case.
    assert "nccl-net-plugin" not in ids(diagnose(rules, lines[:1]))


def test_hca_filter_set_by_the_script_with_no_ib_device_is_the_likely_cause(rules):
    lines = [
        "export NCCL_IB_HCA=mlx5_9",
        "[0] NCCL INFO NET/IB : No device found.",
        "[0] NCCL INFO NET/Socket : Using [0]eth0:10.47.14.218<0>",
        "[0] NCCL INFO Using network Socket",
    ]
    finding = found(diagnose(rules, lines), "nccl-ib-hca-wrong")
    assert "NCCL_IB_HCA=mlx5_9" in finding.detail and finding.assumed
    assert finding.confidence < 0.85  # a script's setting is not NCCL's own echo
    # IB switched off on purpose is nccl-ib-disabled's, not a wrong filter.
    off = ["export NCCL_IB_DISABLE=1", "[0] NCCL INFO NCCL_IB_DISABLE set by environment to 1."] + lines
    assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, off))


def test_ib_disable_does_not_switch_off_an_external_plugin(rules):
    lines = [
        "gpu01:138:138 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
        "gpu01:138:138 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        "gpu01:138:138 [0] NCCL INFO P2P plugin IBext",
        "gpu01:138:138 [0] NCCL INFO NET/IB : Using [0]mlx5_9:1/RoCE ; OOB enp225s0f1:88.200.23.102<0>",
        "gpu01:138:138 [0] NCCL INFO Using network IBext",
    ]
    finding = found(diagnose(rules, lines), "nccl-net-plugin")
    assert "NCCL_IB_DISABLE=1" in finding.detail and "IBext" in finding.detail
    assert "nccl-ib-disabled" not in ids(diagnose(rules, lines))  # it did not force TCP
    # The built-in IB transport honours it: no plugin finding then.
    builtin = [lines[0], "gpu01:138:138 [0] NCCL INFO Using network Socket"]
    assert "nccl-net-plugin" not in ids(diagnose(rules, builtin))


def test_verbs_provider_older_than_the_kernel_is_a_library_problem(rules):
    line = (
        "libibverbs: Warning: Driver bnxt_re does not support the kernel ABI of 6 (supports 1 to 1) "
        "for device /sys/class/infiniband/bnxt_re2"
    )
    assert "ib-verbs-library-missing" in ids(diagnose(rules, [line]))


def test_no_libibverbs_in_an_excerpt_that_shows_no_ib_is_a_warning_not_the_cause(rules):
    lines = [
        "e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]",
        "e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by protocol",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "nccl-socket-ifname"
    assert found(report, "ib-verbs-library-missing").severity == "warning"


def test_perftest_finding_no_rdma_device_points_at_the_container_devices(rules):
    lines = [
        " Did not detect devices",
        " If device exists, check if driver is up",
        " Unable to find the Infiniband/RoCE device",
    ]
    finding = found(diagnose(rules, lines), "ib-devices-not-mounted")
    assert "uverbs" in finding.detail and finding.confidence < 0.6


# ------------------------------------------------------------- message forms learned from upstream
def test_nccl_2_3_socket_lines_are_a_fallback_too(rules):
    """NCCL 2.3 said "Using internal Network Socket" and printed ring lines without [send]/[receive]."""
    old = [
        "gpu3:201:201 [0] INFO NET/IB : No device found.",
        "gpu3:201:201 [0] INFO Using internal Network Socket",
        "gpu3:201:201 [0] NCCL INFO Ring 01 : 3 -> 0 via NET/Socket/0",
    ]
    ib = ib_node("gpu4")
    tcp = found(diagnose(rules, old, ib), "nccl-tcp-fallback")
    assert tcp.severity == "error"
    assert "gpu3" in tcp.hosts


def test_no_ib_device_alone_is_read_as_the_start_of_a_fallback_unless_a_plugin_carries_traffic(rules):
    paste = [
        "n12:40:40 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.",
        "n12:40:40 [0] NCCL INFO NET/IB : No device found.",
    ]
    assert "nccl-tcp-fallback" in ids(diagnose(rules, paste))
    with_plugin = paste + ["n12:40:40 [0] NCCL INFO Using network AWS Libfabric"]
    assert "nccl-tcp-fallback" not in ids(diagnose(rules, with_plugin))


def test_loopback_only_sockets_mean_one_host(rules):
    paste = [
        "box:7:7 [0] NCCL INFO NET/IB : No device found.",
        "box:7:7 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>",
        "box:8:8 [1] NCCL INFO NET/IB : No device found.",
    ]
    assert "nccl-tcp-fallback" not in ids(diagnose(rules, paste))


def test_a_failed_excerpt_without_ib_signs_still_names_the_fallback_as_an_assumption(rules):
    paste = [
        "[0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.4<0>",
        "[0] NCCL INFO Using network Socket",
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, remote process exited or there was a network error",
    ]
    tcp = found(diagnose(rules, paste), "nccl-tcp-fallback")
    assert tcp.severity == "warning"
    assert any("InfiniBand" in a for a in tcp.assumed)


def test_old_nccl_docker_interface_and_refused_connect_name_the_interface(rules):
    old = [
        "w1:9:9 [0] NCCL INFO NET : Using interface docker0:172.17.0.2<0>",
        "w1:9:9 [0] include/socket.h:390 NCCL WARN Net : Connect to 172.17.0.3<40001> failed : No route to host",
    ]
    ifname = found(diagnose(rules, old), "nccl-socket-ifname")
    assert "docker0" in ifname.detail


def test_oob_interface_that_matches_nothing_is_an_ifname_problem(rules):
    line = ["c7:5:5 [0] bootstrap.cc:410 NCCL WARN no device found after excluding ^eth, verify NCCL_OOB_NET_IFNAME"]
    assert top(diagnose(rules, line)) == "nccl-socket-ifname"


def test_a_bare_system_error_is_a_weak_socket_suspect_that_says_what_it_assumed(rules):
    paste = [
        "Traceback (most recent call last):",
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:290, unhanled system error",
    ]
    report = diagnose(rules, paste)
    ifname = found(report, "nccl-socket-ifname")
    # The job failed of it (the exception shows): its likeliest cause, named first, weakly, saying so.
    assert ifname.severity == "error" and ifname.confidence < 0.4 and report.findings[0] is ifname
    assert any("socket" in a for a in ifname.assumed)
    # The same error quoted without a failure around it is a warning.
    quoted = diagnose(rules, ["ncclSystemError: System call (e.g. socket, malloc) or external library call failed"])
    assert all(f.severity == "warning" for f in quoted.findings if f.id == "nccl-socket-ifname")
    # The logs name the failing call: that cause, not a guess about sockets.
    shm = paste + [
        "n1:3:3 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-Zx1 to 9637892 bytes"
    ]
    assert "nccl-socket-ifname" not in ids(diagnose(rules, shm))
    # One node shown: nothing between nodes to blame.
    assert "nccl-socket-ifname" not in ids(diagnose(rules, paste + one_node("n1")))


def test_aws_ofi_plugin_failure_is_a_net_plugin_finding_but_its_info_probe_is_not(rules):
    failed = [
        "ip-10-0-0-5:8:8 [0] nccl_net_ofi_init:1405 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available"
    ]
    plugin = found(diagnose(rules, failed), "nccl-net-plugin")
    assert "aws-ofi-nccl" in plugin.detail
    probe = [
        "ip-10-0-0-5:8:8 [0] NCCL INFO NET/OFI No eligible providers were found",
        "ip-10-0-0-5:8:8 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
        "ip-10-0-0-5:8:8 [0] NCCL INFO Using network AWS Libfabric",
        "ip-10-0-0-5:8:8 [0] NCCL INFO comm 0x55 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE",
    ]
    assert "nccl-net-plugin" not in ids(diagnose(rules, probe))


def test_an_external_plugin_in_an_excerpt_that_never_starts_is_a_suspect_not_after_init(rules):
    start = [
        "g1:9:9 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        "g1:9:9 [0] NCCL INFO P2P plugin IBext",
        "g1:9:9 [0] NCCL INFO NET/IB : Using [0]mlx5_4:1/RoCE ; OOB eth0:10.0.0.9<0>",
        "g1:9:9 [0] NCCL INFO Using network IBext",
    ]
    plugin = found(diagnose(rules, start), "nccl-net-plugin")
    assert plugin.severity == "warning" and "NCCL_IB_DISABLE" in plugin.detail
    assert any("IBext" in ev.text for ev in plugin.evidence)
    done = start + ["g1:9:9 [0] NCCL INFO comm 0x5a rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE"]
    assert "nccl-net-plugin" not in ids(diagnose(rules, done))


def test_completion_errors_from_open_mpi_ucx_and_perftest_are_link_faults(rules):
    for line in (
        "[a1][[4411,1],3][btl_openib_component.c:3644:handle_wc] from a1 to: a2 error polling HP CQ with status "
        "RETRY EXCEEDED ERROR status number 12 for wr_id 1e3f opcode 0  vendor error 129 qp_idx 3",
        "[1712000000.5] [a1:77:0]  ib_mlx5_log.c:179  UCX  ERROR Local protection error on mlx5_2:1/IB "
        "(synd 0x4 vend 0x33 hw_synd 0/0)",
        " Failed status 12: wr_id 0 syndrom 0x81",
    ):
        assert top(diagnose(rules, [line])) == "ib-link-fault", line


def test_open_mpi_flush_status_alone_is_only_a_consequence(rules):
    line = (
        "[a1][[4411,1],3][btl_openib_component.c:3644:handle_wc] from a1 to: a2 error polling LP CQ with status "
        "WORK REQUEST FLUSHED ERROR status number 5 for wr_id 1e3f opcode 0  vendor error 244 qp_idx 0"
    )
    fault = found(diagnose(rules, [line]), "ib-link-fault")
    assert fault.confidence < 0.6 and "flush" in fault.detail.lower()


def test_verbs_open_failures_outside_nccl_mean_devices_not_mounted(rules):
    for line in (
        "[1712000000.5] [a1:77:0]        ib_md.c:1001 UCX  ERROR ibv_open_device(mlx5_3) failed: Permission denied",
        "ib_read_lat: Couldn't get context for mlx5_3",
    ):
        assert top(diagnose(rules, [line])) == "ib-devices-not-mounted", line


def test_unreadable_roce_gid_version_is_a_gid_warning(rules):
    line = ["r4:6:6 [1] NCCL WARN NET/IB: open failed in ncclIbRoceGetVersionNum: No such file or directory"]
    gid = found(diagnose(rules, line), "roce-gid-index")
    assert gid.severity == "warning" and "RoCE v2" in gid.detail


def test_link_layer_merge_mismatch_names_the_nodes_problem(rules):
    line = [
        "m2:6:6 [0] NCCL WARN NET/IB : Can't merge net devices with different link_layer. i=1 remMeta.ndevs=2 link_layer=1 rem_link_layer=2"
    ]
    assert top(diagnose(rules, line)) == "ib-hca-mismatch-nodes"


# ------------------------------------------------------------------------- damaged and thin pastes
def test_fabric_lines_survive_launcher_prefixes_markdown_and_progress_bars(rules):
    """The same NCCL records as users paste them: pdsh/DeepSpeed host prefix, Open MPI's rank tag,
    srun --label stacked on PyTorch's [rankN]:, markdown emphasis, a tqdm bar ending in a carriage return."""
    cases = {
        "ib-devices-not-mounted": "[1,3]<stderr>:xxxxx:811:811 [3] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed",
        "nccl-socket-ifname": "3: [rank3]: `c2:5:5 [0] bootstrap.cc:99 NCCL WARN Bootstrap : no socket interface found`",
        "ib-link-fault": "  7%|▋         | 35/500 [00:41<09:10,  1.2s/it]\rb5:22:40 [3] transport/net_ib.cc:1295 NCCL WARN "
        "NET/IB : Got async event : port error",
        "roce-gid-index": "worker-2: **worker-2:61:90 [1] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 22 "
        "Invalid argument, on dev mlx5_1:1, curr state INIT, next state RTR, local GID index 2, local GID fe80::1, "
        "remote GID fe80::2**",
    }
    for cause, line in cases.items():
        assert top(diagnose(rules, [line])) == cause, line


def test_a_pytorch_last_error_quoting_the_ib_search_is_read(rules):
    """PyTorch glues NCCL's last WARN/INFO onto its own error line after "Last error:"."""
    line = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3 ncclSystemError: "
        "System call (e.g. socket, malloc) or external library call failed or device error. Last error: "
        "NET/IB : No device found."
    )
    assert "nccl-tcp-fallback" in ids(diagnose(rules, [line]))


def test_host_and_loader_messages_name_their_fabric_causes(rules):
    """Lines from outside NCCL that users paste next to it: the kernel, modprobe, the dynamic loader, ls."""
    cases = {
        "gdr-disabled": "modprobe: FATAL: Module nv_peer_mem not found in directory /lib/modules/5.4.0-150-generic",
        "ib-link-fault": "[Tue Mar  4 10:11:12 2025] mlx5_core 0000:c1:00.0: Port module event: module 1, Cable unplugged",
        "ib-verbs-library-missing": "ImportError: libibverbs.so.1: cannot open shared object file: No such file or directory",
        "ib-devices-not-mounted": "ls: cannot access '/dev/infiniband': No such file or directory",
    }
    for cause, line in cases.items():
        assert top(diagnose(rules, [line])) == cause, line


def test_pyxis_failing_to_mount_a_missing_host_directory_is_not_a_container_mount_omission(rules):
    line = "slurmstepd-n3: error: pyxis:     enroot-mount: failed to mount: /dev/infiniband at /run/pyxis/0/7.0/dev/infiniband: No such file or directory"
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, [line]))


def test_nccl_socket_errors_that_mean_unreachable_point_at_the_interface_but_refused_does_not(rules):
    no_route = [
        "n1:5:9 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 10.3.4.5<41234> failed : No route to host"
    ]
    assert top(diagnose(rules, no_route)) == "nccl-socket-ifname"
    # A peer that advertised loopback (a hostname resolving to 127.0.1.1): unreachable whatever the error.
    loopback = [
        "n1:5:9 [0] include/socket.h:403 NCCL WARN Net : Connect to 127.0.1.1<52311> failed : Connection refused"
    ]
    found_loopback = found(diagnose(rules, loopback), "nccl-socket-ifname")
    assert "127.0.1.1" in found_loopback.detail
    # Refused by a routable peer: it answered, nobody listened. Not an interface problem.
    refused = [
        "n1:5:9 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 10.3.4.5<41234> failed : Connection refused"
    ]
    assert "nccl-socket-ifname" not in ids(diagnose(rules, refused))


def test_port_state_dumps_are_a_weak_link_warning_and_firmware_health_a_fault(rules):
    ibstat = ["CA 'mlx5_2'", "\tPort 1:", "\t\tState: Down", "\t\tPhysical state: Polling"]
    down = found(diagnose(rules, ibstat), "ib-link-fault")
    assert down.severity == "warning" and "Polling" in down.detail
    healthy = ["CA 'mlx5_2'", "\tPort 1:", "\t\tState: Active", "\t\tPhysical state: LinkUp"]
    assert "ib-link-fault" not in ids(diagnose(rules, healthy))
    health = ["mlx5_core 0000:5e:00.0: poll_health:801:(pid 0): Fatal error 1 detected"]
    assert found(diagnose(rules, health), "ib-link-fault").severity == "error"


def test_gdr_level_that_allows_no_pair_is_gdr_off_unless_one_node_or_sockets(rules):
    env = ["g5:3:3 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC"]
    assert "LOC" in found(diagnose(rules, env), "gdr-disabled").detail
    assert "gdr-disabled" not in ids(diagnose(rules, env + one_node("g5")))
    wide = ["g5:3:3 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to SYS"]
    assert "gdr-disabled" not in ids(diagnose(rules, wide))


def test_sockets_over_ipoib_are_tcp_on_a_cluster_that_has_infiniband(rules):
    nodes = [
        line
        for host in ("n3", "n4")
        for line in (
            f"{host}:5:5 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.50.{host[1]}<0>",
            f"{host}:5:5 [0] NCCL INFO Using network Socket",
        )
    ]
    tcp = found(diagnose(rules, nodes), "nccl-tcp-fallback")
    assert tcp.severity == "error" and "IPoIB" in tcp.detail


def test_sharp_that_cannot_start_is_a_plugin_warning(rules):
    line = ["n2:5:5 [0] sharp_plugin.c:310 NCCL WARN NET/IB : SHARP coll init error: Cannot connect to SHARPD(-4)"]
    plugin = found(diagnose(rules, line), "nccl-net-plugin")
    assert plugin.severity == "warning" and "SHARPD" in plugin.detail


def test_open_mpi_fabric_help_texts(rules):
    event = [
        "The OpenFabrics stack has reported a network error event.  Open MPI",
        "will try to continue, but your job may end up failing.",
        "  Local host:        n7",
        "  Error number:      10 (IBV_EVENT_PORT_ERR)",
    ]
    assert top(diagnose(rules, event)) == "ib-link-fault"
    no_ports = [
        "WARNING: There is at least non-excluded one OpenFabrics device found,",
        "but there are no active ports detected (or Open MPI was unable to use",
        "them).  This is most certainly not what you wanted.",
    ]
    down = found(diagnose(rules, no_ports), "ib-link-fault")
    assert down.severity == "warning"


def test_ib_disable_set_from_python_or_a_yaml_env_map_is_read(rules):
    for line in ('os.environ["NCCL_IB_DISABLE"] = "1"', '      NCCL_IB_DISABLE: "1"'):
        assert "nccl-ib-disabled" in ids(diagnose(rules, [line, *socket_node("w1"), *socket_node("w2", 14)])), line


def test_a_qp_timeout_with_ipv4_mapped_gids_is_read_as_roce(rules):
    line = (
        "h1:1:1 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev "
        "mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.1.1.1, remote GID ::ffff:10.2.2.2"
    )
    assert top(diagnose(rules, [line])) == "roce-gid-index"
    # Both GIDs are RoCE v2 IPv4 entries, what NCCL picks itself: the index is likely right, the route is not
    # (ports of different rails on a rail-only fabric, another subnet): a lead, not the job's failure.
    lead = found(diagnose(rules, [line]), "roce-gid-index")
    assert lead.severity == "info" and "NCCL_CROSS_NIC=0" in lead.detail
    # Forced by the job, the same index is the suspect again.
    forced = found(diagnose(rules, ["export NCCL_IB_GID_INDEX=3", line]), "roce-gid-index")
    assert forced.severity == "error" and "NCCL_IB_GID_INDEX=3 is forced" in forced.detail
    # The same timeout between InfiniBand ports (known from NCCL's device line) is no GID question.
    ib = ["h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>", line]
    assert "roce-gid-index" not in ids(diagnose(rules, ib))


def test_ucx_offering_no_verbs_transport_points_at_invisible_devices(rules):
    none = "[1712] [n1:4:0] ucp_context.c:1078 UCX  WARN  transports 'rc','ud' are not available, please use one or more of: cma, mm, posix, self, sysv, tcp"
    assert top(diagnose(rules, [none])) == "ib-devices-not-mounted"
    other_verbs = "[1712] [n1:4:0] ucp_context.c:1078 UCX  WARN  transports 'rc_x' are not available, please use one or more of: posix, self, tcp, rc_verbs, ud_verbs"
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, [other_verbs]))


def test_a_bare_qp_timeout_is_a_gid_suspect_unless_the_ports_are_infiniband(rules):
    line = "n2:7:7 [0] misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"
    gid = found(diagnose(rules, [line]), "roce-gid-index")
    assert gid.confidence < 0.6 and "RoCE or InfiniBand" in gid.detail
    ib = ["n2:7:7 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.2<0>", line]
    assert "roce-gid-index" not in ids(diagnose(rules, ib))


def test_libfabric_finding_no_provider_points_at_the_efa_device_not_the_plugin(rules):
    line = [
        "[2025-10-16 22:16:08] ip-10-0-3-9:19:37 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available"
    ]
    report = diagnose(rules, line)
    assert top(report) == "ib-devices-not-mounted"
    assert "nccl-net-plugin" in ids(report)
    # With the verbs library itself missing, that is the likelier reason libfabric saw no device.
    nolib = line + ["ip-10-0-3-9:19:19 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"]
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, nolib))


def test_a_quoted_partial_modify_qp_line_on_a_roce_named_device_is_a_gid_question(rules):
    paste = [
        "both ranks died in `ncclCommInitRank` with `NCCL error: unhandled system error` and "
        "`ibv_modify_qp failed with 110 Connection timed out, on dev rocep1s0f0:1` (head)"
    ]
    report = diagnose(rules, paste)
    assert top(report) == "roce-gid-index"
    assert "nccl-socket-ifname" not in ids(report)  # the failing call is named: no guess about sockets


def test_an_hca_list_written_in_words_is_the_suspect_of_a_qp_timeout(rules):
    # Users write the setting in prose; a multi-port list and queue pairs that time out point at the list.
    paste = [
        "`NCCL_IB_HCA` was `roceP2p1s0f0,roceP2p1s0f1,rocep1s0f0,rocep1s0f1`.",
        "spark-a:3301:3390 [0] misc/ibvwrap.cc:208 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed "
        "out, on dev rocep1s0f0:1, curr state INIT, next state RTR, local GID index 3",
    ]
    report = diagnose(rules, paste)
    assert top(report) == "nccl-ib-hca-wrong" and "lists 4 ports" in found(report, "nccl-ib-hca-wrong").detail
    # "NCCL_IB_HCA is not set" names no HCA.
    unset = ["NCCL_IB_HCA is not set on these nodes.", paste[1]]
    assert top(diagnose(rules, unset)) == "roce-gid-index"


def test_a_disabled_port_beside_active_ones_is_the_device_choice_not_a_link(rules):
    def port(ca: str, state: str, phys: str) -> list[str]:
        return [f"CA '{ca}'", "\tPort 1:", f"\t\tState: {state}", f"\t\tPhysical state: {phys}", "\t\tLink layer: Ethernet"]

    disabled = port("mlx5_0", "Active", "LinkUp") + port("mlx5_1", "Down", "Disabled")
    report = diagnose(rules, disabled)
    assert top(report) == "nccl-ib-hca-wrong" and "ib-link-fault" not in ids(report)
    assert found(report, "nccl-ib-hca-wrong").severity == "warning"
    # A port that lost its link (Polling) is the link's question.
    polling = port("mlx5_0", "Active", "LinkUp") + port("mlx5_1", "Down", "Polling")
    assert top(diagnose(rules, polling)) == "ib-link-fault"


def test_ucx_address_handles_failing_on_unlike_devices_point_at_the_device_list(rules):
    def ah(pid: int, dgid: str, sgid: int, dev: str) -> str:
        return (
            f"[1641998540.196336] [cpu01:{pid}:0]       ib_device.c:1319 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 "
            f"port=1 src_path_bits=0 dgid={dgid} sgid_index={sgid} traffic_class=106) on {dev} failed: Invalid argument"
        )

    two = [ah(31658, "::ffff:172.17.22.101", 1, "rocep33s0f1"), ah(31659, "fe80::a8a4:c3ff:febb:1d33", 7, "rocep129s0f1")]
    report = diagnose(rules, two)
    assert top(report) == "nccl-ib-hca-wrong" and "UCX_NET_DEVICES is not set" in found(report, "nccl-ib-hca-wrong").detail
    # One device (UCX up to 1.12 prints no " for <usage>"): the GID the handle was built from.
    assert top(diagnose(rules, two[:1])) == "roce-gid-index"
    # With UCX_NET_DEVICES set, the devices were chosen: the GID again.
    assert top(diagnose(rules, ["export UCX_NET_DEVICES=rocep33s0f1:1,rocep129s0f1:1", *two])) == "roce-gid-index"


def test_a_script_choosing_ucx_net_devices_is_no_wrong_hca_by_itself(rules):
    # MLPerf's launch scripts export it on every run (echoed by `set -x` under srun --label); only UCX's
    # own complaint about a device says the setting is wrong.
    healthy = ["2: ++ export UCX_NET_DEVICES=mlx5_0:1", "2: ++ UCX_NET_DEVICES=mlx5_0:1", ":::MLLOG {\"key\": \"run_stop\"}"]
    assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, healthy))
    refused = "[1698164339.521] [gpu01:2143:0]   ucp_context.c:1081 UCX  WARN  network device 'mlx5_9:1' is not available, please use one or more of: 'mlx5_0:1'(ib)"
    assert top(diagnose(rules, [healthy[0], refused])) == "nccl-ib-hca-wrong"


def test_channels_over_an_external_plugin_show_it_works(rules):
    lines = [
        "NCCL INFO P2P plugin IBext_v6",
        "NCCL INFO Channel 01/0 : 6[4f000] -> 3[9d000] [receive] via NET/IBext_v6/1",
        "NCCL INFO Channel 02/0 : 5[a4000] -> 6[4f000] [send] via NET/IBext_v6/1",
    ]
    assert "nccl-net-plugin" not in ids(diagnose(rules, lines))


def test_queue_pairs_that_cannot_reach_the_peer_with_several_listed_ports_blame_the_port_list(rules):
    qp = (
        "n1:7:7 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev "
        "rocep1s0f1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.1.1.1, remote GID ::ffff:10.2.2.2"
    )
    listed = ["export NCCL_IB_HCA=rocep1s0f0,rocep1s0f1,rocep2s0f0", qp]
    assert top(diagnose(rules, listed)) == "nccl-ib-hca-wrong"
    assert "roce-gid-index" in ids(diagnose(rules, listed))  # still a candidate
    # A forced GID index is the likelier culprit, and one listed port is no pairing question.
    forced = ["export NCCL_IB_GID_INDEX=1", *listed]
    assert top(diagnose(rules, forced)) == "roce-gid-index"
    single = ["export NCCL_IB_HCA=rocep1s0f1", qp]
    assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, single))


def test_an_empty_gid_entry_enodata_is_a_gid_index_finding(rules):
    line = [
        "w2:9:9 [0] misc/ibvwrap.cc:288 NCCL WARN Call to ibv_modify_qp failed with 61 No data available, on dev "
        "mlx5_0:1, curr state INIT, next state RTR, local GID index 3"
    ]
    gid = found(diagnose(rules, line), "roce-gid-index")
    assert "empty" in gid.detail and gid.severity == "error"


def test_libibverbs_warnings_are_read_without_their_prefix(rules):
    """A paste often keeps "Warning: ..." and loses or splits off the "libibverbs: " emitter."""
    line = ["Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0"]
    assert top(diagnose(rules, line)) == "ib-verbs-library-missing"


def test_nccl_using_an_all_zero_gid_is_an_empty_gid_index(rules):
    lines = [
        "r2:5:9 [3] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1203 mtu 5 GID 3 (0/0) fifoRkey=0x1a fifoLkey=0x1a"
    ]
    gid = found(diagnose(rules, lines), "roce-gid-index")
    assert "empty" in gid.detail and gid.hosts == ["r2"]
    filled = ["r2:5:9 [3] NCCL INFO NET/IB: Dev 0 Port 1 qpn 1203 mtu 5 GID 3 (0/FFFF0A0A000C)"]
    assert "roce-gid-index" not in ids(diagnose(rules, filled))


def test_no_fallback_when_nccl_net_forces_a_network_or_the_failure_has_its_own_cause(rules):
    forced = ["w:1:1 [0] NCCL INFO NET/IB : No device found.", "export NCCL_NET=IB"]
    assert "nccl-tcp-fallback" not in ids(diagnose(rules, forced))
    # A failed one-host excerpt whose failure NCCL explains (two ranks on one GPU): sockets stay context.
    dup = [
        *socket_node("vm"),
        "vm:13:13 [0] init.cc:871 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
        "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1296, invalid usage, NCCL version 2.18.1",
    ]
    tcp = found(diagnose(rules, dup), "nccl-tcp-fallback")
    assert tcp.severity == "info"


def test_a_roce_port_striped_beside_ib_hcas_is_a_port_to_leave_out(rules):
    mixed = "[0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_bond_0:1/RoCE [RO]; OOB ib0:10.1.0.7<0>"
    report = diagnose(rules, [f"gpu-07:411:411 [0] NCCL INFO NET/IB : Using {mixed}"])
    finding = found(report, "nccl-ib-hca-wrong")
    assert finding.severity == "warning" and "NCCL_IB_HCA=^mlx5_bond_0" in finding.detail
    uniform = "[0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.1.0.7<0>"
    assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, [f"gpu-07:411:411 [0] NCCL INFO NET/IB : Using {uniform}"]))


def test_gloo_peers_at_a_loopback_address_mean_ranks_advertised_loopback(rules):
    lines = [
        "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback.",
        "[rank8] Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:14215",
        "RuntimeError: Gloo connectFullMesh failed ...",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "nccl-socket-ifname"
    assert "GLOO_SOCKET_IFNAME" in report.findings[0].detail
    # The same warning on a run that went on (one node: loopback is right there) is no failure.
    assert "nccl-socket-ifname" not in ids(diagnose(rules, one_node() + lines[:1]))


def test_a_verbs_driver_missing_right_before_nccl_fails_is_the_cause(rules):
    warning = "libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0"
    failed = diagnose(rules, [warning, "ip-0AB85F07: Test NCCL failure common.cu:775 'internal error'"])
    assert failed.findings[0].id == "ib-verbs-library-missing" and failed.findings[0].severity == "error"
    # Alone, in an excerpt that shows no IB and no failure, it is the same line every Ethernet job prints.
    assert found(diagnose(rules, [warning]), "ib-verbs-library-missing").severity == "warning"


# --------------------------------------------------------------------------- UCX (MPI jobs, UCX PML)
def ucx(host: str, level: str, text: str) -> str:
    """A UCX log line: file right-aligned in 17 characters, component and level padded."""
    return f"[1712345678.123456] [{host}:4711:0] {'ucp_context.c:1770':>17} UCX  {level:<5} {text}"


def test_ucx_without_verbs_transports_is_a_mount_problem_unless_ucx_net_devices_names_a_missing_hca(rules):
    none = ucx("n2", "ERROR", "no usable transports/devices (asked rc,ud on network:mlx5_0:1 )")
    assert top(diagnose(rules, [none])) == "ib-devices-not-mounted"
    # The device UCX_NET_DEVICES names is not there: that setting is the cause, not the mount.
    typo = ucx("n2", "WARN", "network device 'mlx5_9:1' is not available, please use one or more of: 'mlx5_0:1'(ib)")
    report = diagnose(rules, [typo, ucx("n2", "ERROR", "no usable transports/devices (asked rc on network:mlx5_9:1 )")])
    assert top(report) == "nccl-ib-hca-wrong"
    assert "ib-devices-not-mounted" not in ids(report)
    # Shared memory and TCP only were asked for: nothing says an RDMA device was wanted.
    shm_tcp = ucx("n2", "ERROR", "no usable transports/devices (asked sm,tcp on all devices)")
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, [shm_tcp]))


def test_ucx_gid_entry_it_cannot_read_is_a_gid_index_finding_naming_the_setting(rules):
    lines = [
        "export UCX_IB_GID_INDEX=7",
        ucx("n2", "ERROR", "ibv_query_gid(dev=mlx5_0 port=1 index=7) failed: Invalid argument"),
    ]
    finding = found(diagnose(rules, lines), "roce-gid-index")
    assert "index 7 on mlx5_0:1" in finding.detail and "UCX_IB_GID_INDEX=7" in finding.detail


def test_ucx_async_error_events_are_link_faults_and_its_routine_events_are_not(rules):
    fault = ucx("n3", "ERROR", "IB Async event on mlx5_2: local work queue catastrophic error on QPN 0x1a2b")
    finding = found(diagnose(rules, [fault]), "ib-link-fault")
    assert finding.hosts == ["n3"] and "mlx5_2" in finding.detail
    routine = [
        ucx("n3", "DIAG", "IB Async event on mlx5_2: port active on port 1"),
        ucx("n3", "WARN", "IB Async event on mlx5_2: GID table change on port 1"),
        ucx("n3", "DIAG", "IB Async event on mlx5_2: communication established on QPN 0x1a2b"),
    ]
    assert "ib-link-fault" not in ids(diagnose(rules, routine))


def test_net_plugin_missing_a_library_it_links_to_is_a_broken_plugin_in_every_wording(rules):
    # plugin/plugin_open.cc: a dlerror() that does not name the plugin itself is printed as is, since
    # 2.28 after the plugin's name; before, NCCL only said the plugin could not be found.
    for line in (
        "NET/Plugin: libnccl-net.so: libfabric.so.1: cannot open shared object file: No such file or directory",
        "NET/Plugin: libfabric.so.1: cannot open shared object file: No such file or directory",
    ):
        logs = [f"slinky-1:13:13 [0] NCCL INFO {line}", *socket_node("slinky-1")]
        report = diagnose(rules, ib_node("slinky-0") + logs)
        plugin = found(report, "nccl-net-plugin")
        assert (plugin.severity, "libfabric.so.1" in plugin.detail) == ("error", True), line
        # Where the built-in IB transport carries the traffic, the job is fine: a warning.
        assert found(diagnose(rules, ib_node("slinky-0") + [logs[0]]), "nccl-net-plugin").severity == "warning"
    # The plugin itself absent, in NCCL 2.12's words, is the probe every job without a plugin prints.
    probe = (
        "slinky-0:12:12 [0] NCCL INFO NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open shared "
        "object file: No such file or directory."
    )
    assert "nccl-net-plugin" not in ids(diagnose(rules, ib_node("slinky-0") + [probe]))



def nccl_2_3(host: str, net: str, device_line: str) -> list[str]:
    """NCCL 2.3 (init.cu) names its network "Using internal Network <name>"; its HCA lines are per
    device ("NET/IB: [0] mlx5_0:1/IB"), with no "NET/IB : Using ... ; OOB" line to read."""
    return [f"{host}:4411:4411 [0] NCCL INFO {text}" for text in (device_line, f"Using internal Network {net}")]


def test_nccl_2_3_internal_network_lines_tell_which_node_fell_back(rules):
    ib = nccl_2_3("gpu07", "IB", "NET/IB: [0] mlx5_0:1/IB ")
    socket = nccl_2_3("gpu08", "Socket", "NET/Socket : Using [0]eth0:10.0.0.8<0>")
    tcp = found(diagnose(rules, ib + socket), "nccl-tcp-fallback")
    assert tcp.severity == "error" and tcp.hosts == ["gpu08"]


def test_a_verbs_device_left_out_of_every_container_while_ib_runs_is_a_warning(rules):
    # NCCL opens every verbs device before NCCL_IB_HCA filters them (net_ib init), so a device not
    # passed in (here a bond) is reported on nodes that then use their other HCAs normally.
    def left_out(host: str, pid: int) -> list[str]:
        return [
            f"{host}:{pid}:{pid} [0] misc/ibvwrap.cc:216 NCCL WARN Call to ibv_open_device failed",
            f"{host}:{pid}:{pid} [0] transport/net_ib.cc:592 NCCL WARN NET/IB : Unable to open device mlx5_bond_0",
        ]

    healthy = left_out("slinky-0", 12) + ib_node("slinky-0") + left_out("slinky-1", 13) + ib_node("slinky-1", 13)
    assert found(diagnose(rules, healthy), "ib-devices-not-mounted").severity == "warning"
    # A node left with fewer HCAs than the others is what hangs a collective: still the error.
    fewer = "slinky-1:13:13 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.10.0.13<0>"
    uneven = left_out("slinky-0", 12) + ib_node("slinky-0") + left_out("slinky-1", 13) + [fewer]
    assert found(diagnose(rules, uneven), "ib-devices-not-mounted").severity == "error"


def test_aws_ofi_nccl_on_libfabrics_tcp_provider_has_no_efa_device(rules):
    lines = [
        "6f2d8a82d208:1287:1328 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.12.1-aws",
        "6f2d8a82d208:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)",
    ]
    finding = found(diagnose(rules, lines), "ib-devices-not-mounted")
    assert "tcp provider" in finding.detail and finding.assumed
    # On EFA it is the run that works; on one node the provider carries no traffic between nodes.
    efa = [lines[0], "6f2d8a82d208:1287:1328 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)"]
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, efa))
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, one_node("6f2d8a82d208") + lines))


def test_libibverbs_missing_after_the_ofi_plugin_failed_is_its_consequence(rules):
    lines = [
        "ip-172-31-9-96:26565:26565 [0] get_ofi_provider:312 NCCL WARN NET/OFI Could not find any optimal provider",
        "ip-172-31-9-96:26565:26565 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "nccl-net-plugin"
    assert "ib-verbs-library-missing" not in ids(report)
    # Without the plugin's failure, the missing library is the finding.
    assert "ib-verbs-library-missing" in ids(diagnose(rules, lines[1:]))


def test_a_filter_naming_mlx5_0_that_matched_nothing_is_a_weaker_wrong_hca_claim(rules):
    def paste(value: str) -> list[str]:
        return [
            f"vm:491:491 [0] NCCL INFO NCCL_IB_HCA set to {value}",
            "vm:491:491 [0] NCCL INFO NET/IB : No device found.",
            "vm:491:491 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>",
        ]

    odd = found(diagnose(rules, paste("mlx5_9:1")), "nccl-ib-hca-wrong")
    usual = found(diagnose(rules, paste("mlx5_0:1,mlx5_1:1")), "nccl-ib-hca-wrong")
    # Every ConnectX node has an mlx5_0: matching nothing more likely means no HCA was visible at all.
    assert usual.confidence < odd.confidence and usual.assumed


def test_interface_names_other_programs_read_from_the_ifname_settings(rules):
    # Transformer Engine's userbuffers read NCCL_SOCKET_IFNAME too, and want a whole interface name.
    te = diagnose(rules, ["[rank1]: OSError: Invalid network interface: eth", "[rank7]: OSError: [Errno 19] No such device"])
    assert te.findings[0].id == "nccl-socket-ifname"
    # Gloo's full mesh failing to connect in a job that failed of it, under Ray's and vLLM's prefixes.
    gloo = ["(RayWorkerWrapper pid=1061) ERROR 02-12 02:14:01 worker_base.py:574] RuntimeError: Gloo connectFullMesh "
            "failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"]  # fmt: skip
    finding = found(diagnose(rules, gloo), "nccl-socket-ifname")
    assert "GLOO_SOCKET_IFNAME" in finding.detail and finding.assumed


def test_hostless_channel_lines_with_and_without_gdrdma_mean_gpudirect_works_for_some_gpus_only(rules):
    lines = [
        "[0] NCCL INFO Channel 00/0 : 9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA",
        "[1] NCCL INFO Channel 00/0 : 9[1a000] -> 2[6b000] [receive] via NET/IB/1",
    ]
    finding = found(diagnose(rules, lines), "gdr-disabled")
    assert "without /GDRDMA next to" in finding.detail and finding.assumed
    # Every channel with GDRDMA: nothing to say.
    assert "gdr-disabled" not in ids(diagnose(rules, [lines[0], lines[0].replace("[0]", "[1]")]))
    # The same lines pasted without any NCCL header: only NCCL prints "[send] via NET/...".
    bare = [line.split(" : ", 1)[1] for line in lines]
    assert "without /GDRDMA next to" in found(diagnose(rules, bare), "gdr-disabled").detail


def test_completion_errors_on_a_roce_link_local_gid_are_a_gid_index_problem_not_a_failing_link(rules):
    # fe80:: with the EUI-64 ff:fe in the middle is the GID a RoCE port makes from its MAC (index 0/1).
    roce = ("ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.2.8.2<55466> with error 12, opcode 0, "
            "len 0, vendor err 129 (Recv) localGid fe80::966d:aeff:fe5d:9950 remoteGid fe80::6e92:cfff:fe87:ca50")  # fmt: skip
    report = diagnose(rules, [roce])
    assert report.findings[0].id == "roce-gid-index"
    assert "fe80::966d:aeff:fe5d:9950" in report.findings[0].detail
    assert "ib-link-fault" not in ids(report)
    # InfiniBand GIDs start fe80:: too, but end in the port GUID: that is still a link that stopped answering.
    ib = roce.replace("fe80::966d:aeff:fe5d:9950", "fe80::ba59:9f03:29a:1b4e")
    assert diagnose(rules, [ib]).findings[0].id == "ib-link-fault"




# ---------------------------------------------- the same causes in other libraries' words (their sources)
def test_gloo_without_an_address_on_its_interface_names_gloo_socket_ifname(rules):
    traceback = [
        '[rank1]:     dist.init_process_group(backend="gloo")',
        "[rank1]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. "
        "Unable to find address for: eth0",
    ]
    finding = diagnose(rules, traceback).findings[0]
    assert finding.id == "nccl-socket-ifname" and finding.severity == "error"
    assert "GLOO_SOCKET_IFNAME=<if>" in finding.detail
    # The hostname form: it resolves to an address bind(2) refuses here.
    bind = (
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] bind_rv == 0. "
        "Unable to find address for node01; bind(2) for 10.1.2.3 failed with: Cannot assign requested address"
    )
    assert top(diagnose(rules, [bind])) == "nccl-socket-ifname"


def test_open_mpi_and_horovod_without_a_usable_interface_name_their_own_setting(rules):
    oob = ["None of the TCP networks specified to be included for out-of-band communications", "could be found:"]
    finding = found(diagnose(rules, oob), "nccl-socket-ifname")
    assert finding.severity == "error" and "oob_tcp_if_include" in finding.detail
    old = "None of the networks specified to be included for out-of-band communications"  # Open MPI 1.7
    assert "nccl-socket-ifname" in ids(diagnose(rules, [old]))
    prrte = "No usable network interfaces were found on this host, so no TCP"  # Open MPI 5's PRRTE
    assert "prte_if_include" in found(diagnose(rules, [prrte]), "nccl-socket-ifname").detail
    horovod = "Exception: Unable to find a set of common task-to-task communication interfaces: [(0, {'lo': []})]"
    assert "--network-interface" in found(diagnose(rules, [horovod]), "nccl-socket-ifname").detail


def test_settings_a_library_ignores_are_errors_only_in_a_job_that_failed(rules):
    tp = (
        "[W1203 10:11:12.000000 77 torch/csrc/distributed/rpc/tensorpipe_agent.cpp:173] Failed to look up the IP "
        "address for interface eth9 (no address found (this error originated at tensorpipe/transport/uv/utility.cc:97)), "
        "defaulting to 127.0.0.1"
    )
    alone = found(diagnose(rules, [tp]), "nccl-socket-ifname")
    assert alone.severity == "warning" and "TP_SOCKET_IFNAME=eth9" in alone.detail
    failed = diagnose(rules, [tp, "[rank0]: RuntimeError: RPCErr:1:RPC ran for more than set timeout (60000 ms)"])
    assert found(failed, "nccl-socket-ifname").severity == "error"
    ompi = "WARNING: An invalid value was given for btl_tcp_if_include.  This"
    assert "OMPI_MCA_btl_tcp_if_include" in found(diagnose(rules, [ompi]), "nccl-socket-ifname").detail
    # TensorPipe's hostname fallback alone is what a one-node RPC run prints: nothing.
    hostname = (
        "[W tensorpipe_agent.cpp:180] Failed to look up the IP address for the hostname (EAI_NONAME: unknown node "
        "or service (this error originated at tensorpipe/transport/uv/uv.h:207)), defaulting to 127.0.0.1"
    )
    assert "nccl-socket-ifname" not in ids(diagnose(rules, [hostname]))


def test_hca_names_open_mpi_and_ucx_cannot_find_are_hca_findings(rules):
    port = ucx("n2", "ERROR", "mlx5_0:2: failed to find port")
    assert "mlx5_0:2" in found(diagnose(rules, [port]), "nccl-ib-hca-wrong").detail
    openib = [
        "WARNING: One or more nonexistent OpenFabrics devices/ports were",
        "specified:",
        "  Host:                 n2",
        "  MCA parameter:        mca_btl_if_include",
        "  Nonexistent entities: mlx5_9:1",
    ]
    finding = found(diagnose(rules, openib), "nccl-ib-hca-wrong")
    assert finding.severity == "warning"  # Open MPI goes on with the devices it has
    assert "mlx5_9:1" in finding.detail and "btl_openib_if_include" in finding.detail
    nvshmem = "WARN: cound not find user specified HCA name: mlx5_9 port: 1, skipping"
    assert "NVSHMEM_HCA_LIST" in found(diagnose(rules, [nvshmem]), "nccl-ib-hca-wrong").detail


def test_mpich_and_intel_mpi_without_a_libfabric_provider_point_at_the_devices_and_the_provider(rules):
    lines = [
        "+ export FI_PROVIDER=verbs",
        "Abort(1091471) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
        "MPIDI_OFI_mpi_init_hook(986).: OFI addrinfo() failed (ofi_init.c:986:MPIDI_OFI_mpi_init_hook:No data available)",
        "srun: error: n1: task 0: Exited with exit code 15",
    ]
    finding = diagnose(rules, lines).findings[0]
    assert finding.id == "ib-devices-not-mounted" and finding.severity == "error"
    assert "FI_PROVIDER" in finding.detail and "verbs" in finding.detail
    assert top(diagnose(rules, ["RuntimeError: No ibverbs devices present"])) == "ib-devices-not-mounted"


def test_a_setting_named_only_as_a_fix_someone_tried_is_not_the_jobs_configuration(rules):
    prose = "Tried `export NCCL_IB_DISABLE=1` and `export NCCL_P2P_DISABLE=1`, both didnt work"
    assert "nccl-ib-disabled" not in ids(diagnose(rules, [prose]))
    assert "nccl-ib-disabled" in ids(diagnose(rules, ["export NCCL_IB_DISABLE=1", "srun python train.py"]))


def test_nccl_2_3_sockets_over_ipoib_say_the_nodes_have_infiniband(rules):
    lines = [
        "gpu2:46654:46654 [0] NCCL INFO NET : Using interface ib0:12.12.12.102<0>",
        "gpu2:46654:46654 [0] NCCL INFO NET/IB : Using interface ib0 for sideband communication",
        "gpu2:46654:46654 [0] NCCL INFO Using internal Network Socket",
    ]
    finding = found(diagnose(rules, lines), "nccl-tcp-fallback")
    assert "IB was expected" in finding.detail and "ib0" in finding.detail
    # The same NCCL 2.3 lines over an Ethernet interface assume nothing about InfiniBand.
    eth = [line.replace("ib0:", "eth0:") for line in lines if "sideband" not in line]
    assert "IB was expected" not in found(diagnose(rules, eth), "nccl-tcp-fallback").detail


def test_no_ib_device_in_a_pyxis_container_without_dev_infiniband_is_named_at_low_confidence(rules):
    nccl = [
        "node1:1:1 [0] NCCL INFO NET/IB : No device found.",
        "node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "node1:1:1 [0] NCCL INFO Using network Socket",
    ]
    nccl.append("[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited")
    srun = "+ srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 --container-mounts=/data:/data python train.py"
    finding = found(diagnose(rules, [srun, *nccl]), "ib-devices-not-mounted")
    assert "leave out /dev/infiniband" in finding.detail and finding.confidence < 0.5
    assert any("InfiniBand/RoCE that the job should use" in a for a in finding.assumed)
    # Mounted, or no container at all: nothing says the devices were kept out.
    mounted = srun.replace("/data:/data", "/data:/data,/dev/infiniband:/dev/infiniband")
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, [mounted, *nccl]))
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, nccl))
    # A run that went on in a container: an Ethernet cluster using its sockets, as it should.
    assert "ib-devices-not-mounted" not in ids(diagnose(rules, [srun, *nccl[:-1]]))


def test_no_ib_device_in_a_docker_container_started_without_the_devices_is_named(rules):
    nccl = [
        "node1:1:1 [0] NCCL INFO NET/IB : No device found.",
        "node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited",
    ]
    docker = "$ docker run --gpus all --net=host --shm-size=16g nvcr.io/nvidia/pytorch:23.10-py3 torchrun train.py"
    finding = found(diagnose(rules, [docker, *nccl]), "ib-devices-not-mounted")
    assert "Docker container started without --device=/dev/infiniband" in finding.detail
    for given in ("--device=/dev/infiniband", "--privileged"):
        assert "ib-devices-not-mounted" not in ids(diagnose(rules, [docker.replace("--gpus all", f"--gpus all {given}"), *nccl]))


def test_sigbus_in_a_launcher_summary_without_nccl_context_is_a_weak_shm_finding(rules):
    line = (
        "The worker fails with {0: ProcessFailure(local_rank=0, pid=54, exitcode=-7, error_file='<N/A>', "
        "error_file_data={'message': '<NONE>'}, message='Signal 7 (SIGBUS) received by PID 54', timestamp=1711419181)}"
    )
    finding = found(diagnose(rules, [line]), "shm-too-small")
    assert finding.confidence < 0.5 and any("memory-mapped file" in a for a in finding.assumed)
    # With NCCL 2.19+ known, NCCL reports a full /dev/shm itself: a SIGBUS is not read as one.
    newer = ["node1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", "node1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1 - Init START", line]
    assert "shm-too-small" not in ids(diagnose(rules, newer))


def test_a_net_plugin_that_loaded_and_found_no_device_is_not_blamed_when_nccl_chose_its_socket(rules):
    h = "05-06-76-200:7839:7911 [0] NCCL INFO "
    lines = [
        f"{h}NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.",
        f"{h}NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v5)",
        f"{h}Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        f"{h}P2P plugin IBext",
        f"{h}NET/IB : No device found.",
        f"{h}NET/Socket : Using [0]ens5f0np0:10.220.178.201<0>",
        f"{h}Using network Socket",
    ]
    report = diagnose(rules, lines)
    assert "nccl-net-plugin" not in ids(report) and top(report) == "nccl-tcp-fallback"
    carried = [line.replace("Using network Socket", "Using network IBext") for line in lines[:4] + lines[-1:]]
    assert "nccl-net-plugin" in ids(diagnose(rules, carried + ["RuntimeError: NCCL error: unhandled system error"]))


def test_local_protection_errors_alone_are_gpudirect_refused_not_a_link_fault(rules):
    warn = "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error {s}, opcode 5327, len 5327, vendor err 81 (Send)"
    failed = "RuntimeError: NCCL error: unhandled system error"
    report = diagnose(rules, [warn.format(s=4), failed])
    assert top(report) == "gdr-disabled" and "ib-link-fault" not in ids(report)
    assert "ACS" in found(report, "gdr-disabled").detail and found(report, "gdr-disabled").severity == "error"
    assert top(diagnose(rules, [warn.format(s=4), warn.format(s=12), failed])) == "ib-link-fault", "a retry error too"


def test_a_completion_error_with_its_middle_cut_out_of_the_paste_is_still_read_by_its_status(rules):
    failed = "RuntimeError: NCCL error: unhandled system error"
    elided = "n1:1:2 [0] NCCL WARN NET/IB : Got completion ... status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_RECV(128)"
    report = diagnose(rules, [elided, failed])
    assert top(report) == "gdr-disabled" and "nccl-socket-ifname" not in ids(report), "the WARN names the call"
    retry = diagnose(rules, ["n1:1:2 [0] NCCL WARN NET/IB : Got completion [...] with error 12, opcode 1", failed])
    assert top(retry) == "ib-link-fault"


def test_a_bare_unhandled_system_error_names_the_socket_then_shared_memory(rules):
    line = ("NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system error, "
            "NCCL version 21.0.3 ncclSystemError: System call (socket, malloc, munmap, etc) failed.")  # fmt: skip
    order = [f.id for f in diagnose(rules, [line]).findings]
    assert order[:2] == ["nccl-socket-ifname", "shm-too-small"]
    warned = diagnose(rules, ["n1:7:7 [0] misc/shmutils.cc:87 NCCL WARN Error while creating shared memory segment", line])
    assert top(warned) == "shm-too-small" and "nccl-socket-ifname" not in ids(warned), "the WARN names the call"


def system_error_trail(first: str) -> list[str]:
    """NCCL's return trail of a system error (innermost frame first) and the failure nccl-tests prints."""
    frames = [first, "transport/net.cc:687", "transport.cc:165", "init.cc:1263", "group.cc:64"]
    return [f"pod-a:11:12 [3] NCCL INFO {frame} -> 2" for frame in frames] + [
        "pod-a: Test NCCL failure common.cu:961 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '"
    ]


def test_the_return_trail_of_a_system_error_says_which_part_of_nccl_failed(rules):
    in_ib = system_error_trail("transport/net_ib.cc:282")
    report = diagnose(rules, in_ib)
    assert not {"nccl-socket-ifname", "shm-too-small"} & set(ids(report)), "the call was in the IB transport"
    in_shm = diagnose(rules, system_error_trail("misc/shmutils.cc:60"))
    assert top(in_shm) == "shm-too-small" and "nccl-socket-ifname" not in ids(in_shm)
    assert found(in_shm, "shm-too-small").confidence > found(diagnose(rules, in_ib[-1:]), "shm-too-small").confidence
    assert any("shmutils.cc:60 -> 2" in ev.text for ev in found(in_shm, "shm-too-small").evidence), "cites the trail"
    assert "return trail" in found(in_shm, "shm-too-small").detail
    in_socket = diagnose(rules, system_error_trail("misc/socket.cc:480"))
    assert top(in_socket) == "nccl-socket-ifname" and "shm-too-small" not in ids(in_socket)


def test_gid_settings_and_a_system_error_in_the_ib_transport_name_the_gid_choice(rules):
    given = [
        "pod-a:11:12 [3] NCCL INFO NCCL_IB_ADDR_FAMILY set by environment to AF_INET",
        "pod-a:11:12 [3] NCCL INFO NCCL_IB_ADDR_RANGE set by environment to 192.168.64.0/24",
    ]
    report = diagnose(rules, given + system_error_trail("transport/net_ib.cc:282"))
    assert top(report) == "roce-gid-index"
    assert "NCCL_IB_ADDR_RANGE=192.168.64.0/24" in found(report, "roce-gid-index").detail
    assert "roce-gid-index" not in ids(diagnose(rules, system_error_trail("transport/net_ib.cc:282"))), "no settings"
    assert "roce-gid-index" not in ids(diagnose(rules, given + system_error_trail("misc/socket.cc:480")))


def test_retry_exceeded_completions_name_the_gid_index_second_unless_the_ports_are_infiniband(rules):
    # Status 12 is the peer's NIC never answering: a failing link, or on RoCE a GID the peer cannot route to.
    cqe = "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129"
    report = diagnose(rules, [cqe])
    assert [f.id for f in report.findings][:2] == ["ib-link-fault", "roce-gid-index"]
    assert "RoCE or InfiniBand" in " ".join(found(report, "roce-gid-index").assumed)
    ib = ["gpu5:35917:35917 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.5<0>", cqe]
    assert "roce-gid-index" not in ids(diagnose(rules, ib))
    # A local-protection error (status 4) or a port event is the link's or the memory's, not an address's.
    other = cqe.replace("error 12", "error 4")
    assert "roce-gid-index" not in ids(diagnose(rules, [other]))


def test_ucx_and_open_mpi_connecting_to_a_bridge_address_name_the_interface_choice(rules):
    ucx = "[1695332443.361791] [histamine0:1224050:0]            sock.c:323  UCX  ERROR   connect(fd=42, dest_addr=172.17.0.1:54351) failed: Connection refused"
    finding = found(diagnose(rules, [ucx]), "nccl-socket-ifname")
    assert finding.detail.startswith("UCX could not connect to 172.17.0.1") and finding.hosts == ["histamine0"]
    ompi = ["  Local host: node1", "  Message:    connect() to 192.168.122.1:1040 failed", "  Error:      Operation now in progress (115)"]
    assert "Open MPI" in found(diagnose(rules, ompi), "nccl-socket-ifname").detail
    # A routable peer refusing is not, by itself, an interface choice.
    routable = ucx.replace("172.17.0.1", "10.20.0.7")
    assert "nccl-socket-ifname" not in ids(diagnose(rules, [routable]))


def test_a_qp_failure_beside_a_roce_port_striped_among_ib_ports_blames_the_port_list_first(rules):
    lines = [
        "b-7:7240:7240 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB [1]mlx5_0:1/IB [2]mlx5_2:1/RoCE [3]mlx5_4:1/IB ; OOB eth0:10.100.72.18<0>",
        "b-7:7240:7401 [0] NCCL INFO Ring 00 : 51[3d000] -> 56[1a000] [receive] via NET/IB/2",
        "b-7:7240:7401 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument",
    ]
    report = diagnose(rules, lines)
    assert [f.id for f in report.findings][:2] == ["nccl-ib-hca-wrong", "roce-gid-index"]
    assert "NCCL_IB_HCA=^mlx5_2" in report.findings[0].detail


def test_merging_a_nodes_ib_and_roce_ports_is_the_hca_filter_not_a_node_mismatch(rules):
    # NCCL's makeVDevice merges one node's own ports (NCCL_IB_MERGE_NICS): the odd RoCE port belongs out of NCCL_IB_HCA.
    line = (
        "node017:81234:81301 [0] transport/net_ib.cc:642 NCCL WARN NET/IB : Attempted to merge incompatible devices: "
        "[0]mlx5_0:1/IB and [4]mlx5_bond_0:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA"
    )
    report = diagnose(rules, [line])
    assert top(report) == "nccl-ib-hca-wrong" and "ib-hca-mismatch-nodes" not in ids(report)
    assert "NCCL_IB_HCA=^mlx5_bond_0" in found(report, "nccl-ib-hca-wrong").detail


def test_hcas_opened_and_socket_chosen_is_nccl_net_socket_though_not_echoed(rules):
    # NCCL initialises every network and picks one by NCCL_NET; NCCL_IB_DISABLE=1 would skip the HCAs.
    lines = [
        "node017:2231:2231 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:192.168.40.17<0>",
        "node017:2231:2231 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.40.17<0> [1]eth0:10.12.3.17<0>",
        "node017:2231:2231 [0] NCCL INFO Using network Socket",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-ib-disabled" and "NCCL_NET=Socket" in found(report, "nccl-ib-disabled").detail
    # HCAs opened and IB chosen: nothing forced.
    assert "nccl-ib-disabled" not in ids(diagnose(rules, ib_node("node017")))


def test_a_net_plugin_that_loaded_and_failed_to_initialize_is_the_plugin(rules):
    lines = [
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v9)",
        "node017:2231:2231 [0] NCCL INFO NET/OFI No eligible providers were found",
        "node017:2231:2231 [0] NCCL INFO Failed to initialize NET plugin Libfabric",
        "node017:2231:2231 [0] NCCL INFO Using network Socket",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-net-plugin" and "Libfabric loaded but failed" in found(report, "nccl-net-plugin").detail


def test_nccl_ib_hca_without_equals_is_a_prefix_that_also_takes_longer_names(rules):
    lines = [
        "node017:2231:2231 [0] NCCL INFO NCCL_IB_HCA set to mlx5_1",
        "node017:2231:2231 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_10:1/IB [2]mlx5_11:1/IB [RO]; OOB ib0:192.168.40.17<0>",
    ]
    finding = found(diagnose(rules, lines), "nccl-ib-hca-wrong")
    assert finding.severity == "warning" and "mlx5_10, mlx5_11" in finding.detail and "==mlx5_1" in finding.detail
    exact = [lines[0].replace("to mlx5_1", "to =mlx5_1"), lines[1]]
    listed = [lines[0].replace("to mlx5_1", "to mlx5_1,mlx5_10,mlx5_11"), lines[1]]
    for ok in (exact, listed):
        assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, ok))


def test_gpudirect_off_in_the_aws_plugins_and_open_mpis_words(rules):
    ofi = "ip-10-0-12-34:48211:48330 [0] platform_config_endpoint:478 NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge"
    assert "p4d.24xlarge" in found(diagnose(rules, [ofi]), "gdr-disabled").detail
    ompi = [
        "You requested to run with CUDA GPU Direct RDMA support but this OFED",
        "installation does not have that support.  Contact Mellanox to figure",
    ]
    assert "OFED" in found(diagnose(rules, ompi), "gdr-disabled").detail


def test_the_aws_plugin_over_libfabrics_tcp_provider_is_tcp_between_nodes(rules):
    lines = [
        "ip-10-0-12-34:48211:48211 [0] NCCL INFO NET/OFI Selected Provider is tcp (found 1 nics)",
        "ip-10-0-12-34:48211:48211 [0] NCCL INFO Using network AWS Libfabric",
    ]
    assert "tcp provider" in found(diagnose(rules, lines), "nccl-tcp-fallback").detail
    efa = [lines[0].replace("is tcp (found 1 nics)", "is efa (found 4 nics)"), lines[1]]
    assert "nccl-tcp-fallback" not in ids(diagnose(rules, efa))


def test_open_mpi_told_a_gid_index_past_the_table(rules):
    box = [
        "Open MPI tried to use a GID index that was too large for an",
        "OpenFabrics device (i.e., the GID index does not exist on this",
        "  Requested GID index:     5 (specified by the btl_openib_gid_index MCA param)",
    ]
    assert "GID index 5" in found(diagnose(rules, box), "roce-gid-index").detail


def test_nccl_2_28s_gin_completion_error_is_a_link_fault(rules):
    line = (
        "node017:2231:2290 [0] transport/net_ib.cc:3189 NCCL WARN NET/IB/GIN: Got completion from peer "
        "10.20.1.13<50432> with status=12 opcode=1 len=0 vendor err 129 (Send) hca mlx5_3"
    )
    assert "ib-link-fault" in ids(diagnose(rules, [line]))


def test_a_plugin_that_cannot_load_the_verbs_library_is_the_missing_verbs_library_not_a_missing_plugin(rules):
    lines = [
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libibverbs.so.1: cannot open shared "
        "object file: No such file or directory : when loading libnccl-net.so",
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Using internal network plugin.",
        "node017:2231:2231 [0] NCCL INFO Failed to open libibverbs.so[.1]",
        "node017:2231:2231 [0] NCCL INFO Using network Socket",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "ib-verbs-library-missing", ids(report)
    assert "nccl-net-plugin" not in ids(report)


def test_kubernetes_rdma_device_plugins_that_found_no_device(rules):
    for line in (
        "2026/12/05 09:14:02 Warning: no Rdma Devices were found for resource rdma_shared_device_a",
        "W1205 09:14:02.512311       1 pciNetDevice.go:74] RDMA resources for 0000:3b:00.2 not found. Are RDMA modules loaded?",
    ):
        assert "RDMA device plugin" in found(diagnose(rules, [line]), "ib-devices-not-mounted").detail


def test_other_words_for_a_dev_shm_that_is_missing_or_too_small(rules):
    stat = "node017:2231:2231 [0] init.cc:734 NCCL WARN Call to stat failed: No such file or directory"
    assert "no /dev/shm" in found(diagnose(rules, [stat]), "shm-too-small").detail
    ompi = (
        "It appears as if there is not enough space for /dev/shm/sm_segment.node017.1000.4f2e0001.0 (the "
        "shared-memory backing"
    )
    assert "/dev/shm/sm_segment" in found(diagnose(rules, [ompi]), "shm-too-small").detail
    banner = "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be"
    assert found(diagnose(rules, [banner]), "shm-too-small").severity == "warning"


def test_python_s_multiprocessing_helpers_meeting_a_full_dev_shm(rules):
    """A semaphore (multiprocessing's SemLock, joblib's probe for one) or pandarallel's chunk files in a full
    /dev/shm: ENOSPC with no path, told apart by the lines around it."""
    semlock = [
        '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__',
        "    sl = self._semlock = _multiprocessing.SemLock(",
        "OSError: [Errno 28] No space left on device",
    ]
    report = diagnose(rules, semlock)
    assert top(report) == "shm-too-small" and "SemLock" in found(report, "shm-too-small").detail
    joblib = (
        "/opt/conda/lib/python3.8/site-packages/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] No "
        "space left on device.  joblib will operate in serial mode"
    )
    report = diagnose(rules, [joblib])
    assert top(report) == "shm-too-small"
    assert found(report, "shm-too-small").severity == "warning"  # serial: slower, not failed
    pandarallel = [
        "INFO: Pandarallel will use Memory file system to transfer data between the main process and workers.",
        '  File "/opt/conda/lib/python3.9/site-packages/pandarallel/core.py", line 263, in closure',
        "    pickle.dump(chunk, filedescriptor)",
        "OSError: [Errno 28] No space left on device",
    ]
    report = diagnose(rules, pandarallel)
    assert top(report) == "shm-too-small" and "Memory file system" in found(report, "shm-too-small").detail
    # The same ENOSPC with nothing saying it was /dev/shm is not named shm.
    assert "shm-too-small" not in ids(diagnose(rules, [pandarallel[1], pandarallel[2], pandarallel[3]]))


def test_an_aws_ofi_warn_no_rule_knows_is_a_weak_plugin_suspect(rules):
    warn = "ip-10-1-2-3:51:51 [0] NCCL WARN NET/OFI Unexpected group size 0"
    report = diagnose(rules, [warn])
    finding = found(report, "nccl-net-plugin")
    assert top(report) == "nccl-net-plugin"
    assert finding.severity == "warning" and finding.assumed and "Unexpected group size 0" in finding.detail
    # A GDR warning of the same plugin is gdr-disabled's, not a plugin suspect.
    gdr = "ip-10-1-2-3:51:51 [0] NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge"
    assert "nccl-net-plugin" not in ids(diagnose(rules, [gdr]))


def test_the_ngc_banner_without_infiniband_is_a_warning_that_says_what_it_assumed(rules):
    finding = found(diagnose(rules, ["WARNING: No InfiniBand devices detected.", "step 10 loss 2.1"]), "ib-devices-not-mounted")
    assert finding.severity == "warning" and "/dev/infiniband:/dev/infiniband" in finding.detail
    assert finding.assumed


def test_perftest_pinned_to_a_port_that_is_down_is_the_wrong_hca_not_a_missing_mount(rules):
    lines = [
        "$ ib_write_bw -d mlx5_0 127.0.0.1 --report_gbits",
        " Port number 1 state is Down",
        " Couldn't set the link layer",
        " Couldn't get context for the device",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "nccl-ib-hca-wrong" and "port 1 is Down" in report.findings[0].detail
    assert "ib-devices-not-mounted" not in ids(report)
    # Without the port's state, a device perftest cannot open is still one the container may lack.
    assert "ib-devices-not-mounted" in ids(diagnose(rules, [lines[0], lines[3]]))


def test_a_connectx_verbs_provider_named_by_its_full_path_is_missing_from_the_image(rules):
    lib = "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav65.so"
    line = f"libibverbs: Warning: couldn't load driver '{lib}': {lib}: cannot open shared object file: No such file"
    assert "ib-verbs-library-missing" in ids(diagnose(rules, [line]))
    assert "No message slurmdiag knows" not in found(diagnose(rules, [line]), "ib-verbs-library-missing").detail
    # A provider for hardware these nodes lack is noise: no signature takes it (at most the cue word's weak guess).
    other = line.replace("libmlx5", "libvmw_pvrdma")
    weak = [f for f in diagnose(rules, [other]).findings if f.id == "ib-verbs-library-missing"]
    assert all("No message slurmdiag knows" in f.detail and f.severity == "warning" for f in weak)


def test_ucx_ud_endpoint_timeout_is_a_link_fault_with_the_roce_gid_as_second_suspect(rules):
    line = "[clx-orion-095:15382:0:15382]    ud_iface.c:781  Fatal: transport error: Endpoint timeout"
    report = diagnose(rules, [line])
    assert [f.id for f in report.findings[:2]] == ["ib-link-fault", "roce-gid-index"]
    assert "UCX_IB_GID_INDEX" in found(report, "roce-gid-index").detail
    on_ib = "n1:9:9 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>"
    assert "roce-gid-index" not in ids(diagnose(rules, [on_ib, line]))

# ----------------------------------------------------------------- net plugins' messages (session 15)
OFI = "ip-10-0-12-34:48211:48330 [3] process_err_completion:1486 NCCL WARN NET/OFI Request 0x7f2a1c0e4a80 completed with error."


def test_efa_peer_that_stopped_answering_is_a_link_fault_but_a_security_group_is_not(rules):
    unresponsive = [f"{OFI} RC: 103. Error: 13 (Unresponsive remote (was previously responsive)). Completed length: 0"]
    link = found(diagnose(rules, unresponsive), "ib-link-fault")
    assert "stopped answering" in link.detail and link.hosts == ["ip-10-0-12-34"]
    # libfabric's own abort, no NCCL prefix at all, says the same in EFA's words.
    abort = [
        "Libfabric EFA provider has encountered an internal error:",
        "Libfabric error: (-103) Software caused connection abort",
        "EFA internal error: (4124) Unresponsive receiver (connection previously established)",
    ]
    assert top(diagnose(rules, abort)) == "ib-link-fault"
    # aws-ofi-nccl's AWS platform names the security group for an unreachable peer: no link at fault.
    unreachable = [
        "ip-10-0-12-34:48211:48330 [3] virtual void PlatformAWS::log_cq_error(void*, fid_cq*, fi_cq_err_entry*, const "
        "char*):1047 NCCL WARN NET/OFI Request 0x7f2a1c0e4a80 ({ dev: 3, size: 0, state: PENDING, type: SEND }) completed "
        "with error: err: 113, flags: 0, prov_errno: 15, strerror: Unreachable remote - never received a response, len: 0",
        "**********************************************************************",
        "* This error indicates that the security group on either this instance or the peer instance",
        "* is not setup correctly.  For more information, please see the AWS documentation at",
    ]
    assert "ib-link-fault" not in ids(diagnose(rules, unreachable))


def test_a_plugin_that_finds_no_interface_is_the_interface_setting(rules):
    tcpx = ["a3-node-07:3310:3310 [0] tcpxResult_t tcpxInitConnectionSetup(void**):939 NCCL WARN NET/GPUDirectTCPX : no interface found"]
    socket = found(diagnose(rules, tcpx), "nccl-socket-ifname")
    assert "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME" in socket.detail and socket.hosts == ["a3-node-07"]
    fastsocket = ["gce-a2-0:5511:5511 [0] net_fastsocket.cc:528 NCCL WARN NET/FastSocket : no interface found"]
    assert "NCCL_SOCKET_IFNAME" in found(diagnose(rules, fastsocket), "nccl-socket-ifname").detail


def test_tcpx_without_its_receive_datapath_manager_is_the_plugin(rules):
    lines = [
        "a3-node-07:3310:3310 [0] tcpxResult_t tcpxInit(tcpxDebugLogger_t):676 NCCL WARN NET/GPUDirectTCPX register failed "
        "against receive_datapath_manager, UNAVAILABLE: failed to connect to all addresses"
    ]
    finding = top(diagnose(rules, lines))
    assert finding == "nccl-net-plugin"
    assert "RxDM" in found(diagnose(rules, lines), "nccl-net-plugin").detail


def test_a_plugin_named_by_nccl_net_plugin_and_missing_is_not_read_as_a_missing_dependency(rules):
    # 2.21: dlerror names the plugin itself, then "when loading <the NCCL_NET_PLUGIN value>".
    lines = [
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net-ofi.so: cannot open shared "
        "object file: No such file or directory : when loading ofi"
    ]
    assert "libnccl-net-ofi.so" in found(diagnose(rules, lines), "nccl-net-plugin").detail
    # The default probe of a job without a plugin says the same of libnccl-net.so: nothing.
    default = [
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared "
        "object file: No such file or directory : when loading libnccl-net.so",
        "node017:2231:2231 [0] NCCL INFO NET/Plugin: Using internal network plugin.",
    ]
    assert "nccl-net-plugin" not in ids(diagnose(rules, default + ib_node("node017")))


def test_sockets_after_an_efa_plugin_failed_are_not_read_as_an_ethernet_cluster(rules):
    lines = [
        "p5-a:954:3133 [6] nccl_net_ofi_create_plugin:1067 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
        "p5-a:954:3133 [6] NCCL INFO NET/IB : No device found.",
        *socket_node("p5-a", 954),
    ]
    fallback = found(diagnose(rules, lines), "nccl-tcp-fallback")
    assert "Ethernet-only" not in fallback.detail and "aws-ofi-nccl" in fallback.detail


# ------------------------------------------------------------------ session 17: upstream forms
def test_verbs_library_missing_leads_when_nccl_net_asks_for_ib(rules):
    """NCCL_NET=IB: without libibverbs NCCL does not fall back, it stops at init (2.27+ "Failed to initialize
    any NET plugin", 2.19-2.26 "Error: network IB not found."): the library is the step that failed."""
    head = "n3:41:41 [0] NCCL INFO Failed to open libibverbs.so[.1]"
    for tail in (
        ["n3:41:41 [0] NCCL INFO Failed to initialize NET plugin IB",
         "n3:41:41 [0] plugin/net.cc:379 NCCL WARN Failed to initialize any NET plugin"],
        ["n3:41:41 [0] net.cc:579 NCCL WARN Error: network IB not found."],
    ):  # fmt: skip
        report = diagnose(rules, [head, *tail])
        assert top(report) == "ib-verbs-library-missing"
        assert found(report, "ib-verbs-library-missing").severity == "error"
        assert "NCCL_NET" in found(report, "ib-verbs-library-missing").detail
    # The same missing library with no NCCL_NET: an excerpt that shows no failure stays a warning.
    assert found(diagnose(rules, [head]), "ib-verbs-library-missing").severity == "warning"


def test_named_hca_port_left_unused_is_a_warning(rules):
    """NCCL skips a named HCA it does not find, or whose port is not active, without a word."""
    lines = [
        "n3:41:41 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0:1,mlx5_1:1",
        "n3:41:41 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [RO]; OOB ib0:10.10.0.3<0>",
    ]
    hca = found(diagnose(rules, lines), "nccl-ib-hca-wrong")
    assert hca.severity == "warning" and "mlx5_0:1" in hca.detail
    # A prefix that matches every HCA, or an exclusion, leaves nothing unused.
    for value in ("mlx5", "^mlx5_bond_0", "=mlx5_0:1,mlx5_1:1"):
        ok = [f"n3:41:41 [0] NCCL INFO NCCL_IB_HCA set to {value}",
              "n3:41:41 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.10.0.3<0>"]  # fmt: skip
        assert "nccl-ib-hca-wrong" not in ids(diagnose(rules, ok))


def test_bootstrap_on_a_bridge_is_named_on_an_excerpt_and_loopback_is_not(rules):
    docker = diagnose(rules, ["n3:41:41 [0] NCCL INFO Bootstrap: Using docker0:172.17.0.1<0>"])
    finding = found(docker, "nccl-socket-ifname")
    assert finding.severity == "warning" and "docker0" in finding.detail
    assert "nccl-socket-ifname" not in ids(diagnose(rules, ["n3:41:41 [0] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>"]))


def test_gdr_forms_of_nccl_229_and_23(rules):
    line = "n3:41:41 [2] NCCL INFO GPU Direct RDMA Disabled for GPU/0-110592 (rank 2) - NET/0-1 (distance 5 > 4)"
    assert "distance 5 > 4" in found(diagnose(rules, [line]), "gdr-disabled").detail
    for var in ("NCCL_IB_CUDA_SUPPORT", "NCCL_IB_GDR_LEVEL"):
        report = diagnose(rules, [f"n3:41:41 [0] NCCL INFO {var} set by environment to 0."])
        assert f"{var}=0" in found(report, "gdr-disabled").detail
    enabled = "n3:41:41 [2] NCCL INFO GPU Direct RDMA Enabled for GPU/0-110592 (rank 2) - NET/0-1 (distance 3 <= 4, read 1, mode Default)"
    assert "gdr-disabled" not in ids(diagnose(rules, [enabled]))


def test_ucx_rdma_cm_device_missing(rules):
    line = "[1733390412.517204] [n3:41:0]     rdmacm_cm.c:953  UCX  DIAG  rdma_create_event_channel failed: No such file or directory"
    assert top(diagnose(rules, [line])) == "ib-devices-not-mounted"


def test_connect_retries_exhausted_without_an_address_still_name_the_route(rules):
    """NCCL 2.24-2.26 say only the error when connect retries run out: no route is the interface's doing."""
    line = "n4:55:58 [0] misc/socket.cc:544 NCCL WARN socketPollConnect: connect returned No route to host, exceeded error retry count (35)"
    finding = found(diagnose(rules, [line]), "nccl-socket-ifname")
    assert "No route to host" in finding.detail and finding.severity == "warning"


# ------------------------------------------------- retry exceeded: timing and scope (session 17, upstream forms)
def test_retry_exceeded_on_every_connection_before_any_work_puts_the_gid_index_first(rules):
    # Two nodes, each failing its first transfer with status 12 (a RoCE GID or traffic class the peer cannot
    # route), and nothing measured or trained before: the addressing leads, the link is the second reading.
    start = [
        "gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129",
        "gpu4:35902:35977 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129",
    ]
    report = diagnose(rules, start)
    assert [f.id for f in report.findings][:2] == ["roce-gid-index", "ib-link-fault"]
    gid = found(report, "roce-gid-index")
    assert "before any work was done" in gid.detail and "RoCE or InfiniBand" in " ".join(gid.assumed)
    assert any("rather than an address" in a for a in found(report, "ib-link-fault").assumed)
    # The same errors after the job logged training iterations: the addressing had worked; a link failed.
    trained = [
        " [2024-12-05 10:12:01] iteration     1200/   20000 | consumed samples:       614400 | elapsed time per iteration (ms): 2951.3 |",
        *start,
    ]
    report = diagnose(rules, trained)
    assert top(report) == "ib-link-fault" and "roce-gid-index" not in ids(report)
    assert "failed mid-run" in found(report, "ib-link-fault").detail


def test_completion_lines_of_nccl_218_and_later_without_gids_come_from_infiniband_ports(rules):
    # 2.18+ print localGid/remoteGid only where the link layer is Ethernet: without them the port is InfiniBand.
    def cqe(host: str, peer: str, gids: str = "") -> str:
        return (
            f"{host}:2231:2290 [0] transport/net_ib.cc:2113 NCCL WARN NET/IB: Got completion from peer {peer} with "
            f"status=12 opcode=0 len=0 vendor err 129 (Send){gids} hca mlx5_0"
        )

    report = diagnose(rules, [cqe("node017", "192.168.40.18<50432>"), cqe("node018", "192.168.40.17<41177>")])
    assert top(report) == "ib-link-fault" and "roce-gid-index" not in ids(report)
    gids = " localGid ::ffff:10.20.1.12 remoteGids::ffff:10.20.1.13"
    assert "roce-gid-index" in ids(diagnose(rules, [cqe("node017", "10.20.1.13<50432>", gids)]))


def test_gid_entries_and_address_ranges_that_cannot_be_used_are_gid_index_findings(rules):
    # UCX's empty GID table entry (uct_ib_device_query_gid) fails the job's transport: an error naming the index.
    ucx = "[1733390412.517204] [node017:2231 :0]       ib_device.c:1433 UCX  ERROR invalid gid[3] on mlx5_0:1"
    empty = found(diagnose(rules, [ucx]), "roce-gid-index")
    assert empty.severity == "error" and "GID index 3 on mlx5_0:1: the GID table entry there is empty" in empty.detail
    # NCCL ignores an NCCL_IB_ADDR_RANGE it cannot parse and picks the GID without it: a warning while the run goes on.
    env = "node017:2231:2231 [0] NCCL INFO NCCL_IB_ADDR_RANGE set by environment to 10.20.0.0/33"
    mask = "node017:2231:2231 [0] transport/net_ib.cc:154 NCCL WARN NET/IB: Ip address mask '33' is invalid for family AF_INET, ignoring mask"
    ignored = found(diagnose(rules, [env, mask]), "roce-gid-index")
    assert ignored.severity == "warning" and "NCCL_IB_ADDR_RANGE=10.20.0.0/33" in ignored.detail


def test_completion_errors_of_old_binaries_and_vendor_plugin_names_are_link_faults(rules):
    # NCCL 2.1/2.2 (net_ib.cu, "WARN" without "NCCL"), quoted with "len0"; a vendor IB plugin naming itself NET/IBP.
    old = "smc-gpu-03:29880:30398 [0] transport/net_ib.cu:781 WARN NET/IB : Got completion with error 12, opcode 1, len0, vendor err 129"
    ibp = "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)"
    assert top(diagnose(rules, [old])) == "ib-link-fault"
    assert top(diagnose(rules, [ibp])) == "ib-link-fault"


def test_dataloader_bus_error_cut_after_its_first_sentence_is_still_shm(rules):
    # torch/csrc/DataLoader.cpp's worker message, pasted without "This might be caused by insufficient shared memory".
    cut = ["train_iteration:   0%|          | 0/5799232 [00:00<?, ?it/s]", "ERROR: Unexpected bus error encountered in worker."]
    assert top(diagnose(rules, cut)) == "shm-too-small"


def test_libsharp_errors_alone_name_sharp_as_the_plugin_that_failed(rules):
    lines = [
        "[C25L19:1:28576 unique id 1201360626793454896] ERROR collect_ports_data: device mlx5_0 port 1 is not valid (port is used by SM)",
        "[C25L19:1:28576 unique id 1201360626793454896] ERROR collect_ports_data: failed to find valid ports",
    ]
    plugin = found(diagnose(rules, lines), "nccl-net-plugin")
    assert "SHARP" in plugin.detail and "port is used by SM" in plugin.detail
    # libsharp's INFO lines and NCCL's "Sharp rank ... initialized" are a working SHARP.
    ok = [
        "[C25L18:0:24972 - context.c:702] INFO job (ID: 1201360188720575732) resource request quota: ( osts:0 max_qps:1)",
        "C25L18:24972:25066 [3] NCCL INFO Sharp rank 0/2 initialized on mlx5_5:1",
    ]
    assert "nccl-net-plugin" not in ids(diagnose(rules, ok))


def test_gpu_memory_the_hca_cannot_register_is_gpudirect_rdma_missing(rules):
    lines = [
        "ibv_reg_mr(pd 0x23f8ec0, buf 0x7f88c7200000, size = 100, access_flags = 0x00000007)",
        "Couldn't register GPU MR",
        "deallocating RX GPU buffer",
    ]
    gdr = found(diagnose(rules, lines), "gdr-disabled")
    assert "refused to register GPU memory" in gdr.detail


def test_a_veth_in_nccls_socket_list_outranks_the_no_verbs_line_of_an_ethernet_container(rules):
    # LiBai#415: NCCL listed a docker veth (link-local IPv6) beside bond0; NCCL_SOCKET_IFNAME=bond0 fixed it.
    host = "m5-autorl-test01:47324:48509 [0] NCCL INFO "
    lines = [
        host + "Bootstrap : Using bond0:172.27.231.79<0>",
        host + "Failed to open libibverbs.so[.1]",
        host + "NET/Socket : Using [0]bond0:172.27.231.79<0> [1]veth8739016:fe80::5804:edff:fe5b:6570%veth8739016<0>",
        host + "Using network Socket",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-socket-ifname"
    assert "veth8739016" in found(report, "nccl-socket-ifname").detail


def test_python_semaphores_and_pandarallel_out_of_room_in_dev_shm(rules):
    # joblib's import-time probe warns and goes serial: a warning unless the job failed.
    joblib = "/opt/conda/lib/python3.8/site-packages/joblib/_multiprocessing_helpers.py:46: UserWarning: [Errno 28] No space left on device.  joblib will operate in serial mode"
    warned = found(diagnose(rules, [joblib]), "shm-too-small")
    assert warned.severity == "warning" and "semaphore in /dev/shm" in warned.detail
    enospc = "OSError: [Errno 28] No space left on device"
    semlock = [
        '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__',
        "    sl = self._semlock = _multiprocessing.SemLock(",
        enospc,
    ]
    assert top(diagnose(rules, semlock)) == "shm-too-small"
    memfs = ["INFO: Pandarallel will use Memory file system to transfer data between the main process and workers.", enospc]
    assert "pandarallel" in found(diagnose(rules, memfs), "shm-too-small").detail
    # A bare ENOSPC with nothing saying it was /dev/shm (a checkpoint on a full disk) is not this.
    assert "shm-too-small" not in ids(diagnose(rules, ['  File "/x/torch/serialization.py", line 652, in save', enospc]))


# --------------------------------------------------------------- Open MPI's and MPICH's words (session 23)
def test_open_mpi_tcp_connect_to_an_unreachable_peer_names_its_interface_setting(rules):
    for line in [
        "btl_tcp_endpoint.c:572:mca_btl_tcp_endpoint_complete_connect: connect() failed with errno=113",
        "[n1][[5,1],0][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] connect() to 192.168.1.2 failed: "
        "No route to host (113)",
    ]:
        report = diagnose(rules, [line])
        assert top(report) == "nccl-socket-ifname", line
        assert "btl_tcp_if_include" in report.findings[0].detail
    refused = "[n1][[5,1],0][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] connect() to 10.0.0.2 failed: Connection refused (111)"
    assert "nccl-socket-ifname" not in ids(diagnose(rules, [refused])), "a peer that answered is reachable"


def test_a_hydra_rank_dead_of_sigbus_is_read_as_a_bus_error(rules):
    box = [
        "=====================================================================================",
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   EXIT CODE: 135",
        "=   CLEANING UP REMAINING PROCESSES",
    ]
    assert top(diagnose(rules, box)) == "shm-too-small"
    segv = [line.replace("135", "139") for line in box]
    assert "shm-too-small" not in ids(diagnose(rules, segv))


def test_shared_memory_running_out_as_pytorch_open_mpi_and_launchers_cut_it(rules):
    for lines in [
        ["RuntimeError: unable to write to file </torch_1394_2747491098>"],  # the paste ends at the file's name
        ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 2 (pid: 3767) of "
         "binary: /usr/bin/python3"],
        ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "],
    ]:  # fmt: skip
        assert top(diagnose(rules, lines)) == "shm-too-small", lines
    mmap = diagnose(rules, [
        "shmem: mmap: an error occurred while determining whether or not /tmp/ompi.yv.1001/jf.0/3074883584/"
        "sm_segment.yv.1001.b7470000.0 could be created"
    ])  # fmt: skip
    assert top(mmap) == "shm-too-small" and "Open MPI" in found(mmap, "shm-too-small").detail
    assert "node-local-path" not in ids(mmap)


def test_mpichs_netmask_that_matches_no_peer_address_names_its_setting(rules):
    report = diagnose(rules, [
        '[ch3:sock] rank 13 unable to connect to rank 12 using business card <port=55228 description="10.35.1.13 '
        'KESHIKI13 " shm_host=KESHIKI13 shm_queue=5680:1252 >',
        "unable to connect to 10.35.1.13 KESHIKI13  on port 55228, no endpoint matches the netmask 10.37.0.0/255.255.0.0",
    ])  # fmt: skip
    assert top(report) == "nccl-socket-ifname" and "MPICH_NETMASK" in found(report, "nccl-socket-ifname").detail


def test_ucx_dialling_a_bridge_address_is_the_interface_not_a_port_mismatch(rules):
    report = diagnose(rules, [
        "[1695332443.361791] [histamine0:1224050:0]            sock.c:323  UCX  ERROR   connect(fd=42, "
        "dest_addr=172.17.0.1:54351) failed: Connection refused",
        "[histamine0:1224050] pml_ucx.c:424  Error: ucp_ep_create(proc=1) failed: Destination is unreachable",
        "[histamine0:1224050] pml_ucx.c:477  Error: Failed to resolve UCX endpoint for rank 1",
    ])  # fmt: skip
    assert top(report) == "nccl-socket-ifname" and "ib-hca-mismatch-nodes" not in ids(report)


def test_old_ucx_naming_a_device_it_lacks_is_the_device_setting(rules):
    line = (
        "Sun May 27 12:24:33 2018[1,61]<stdout>:[1527413073.646167] [hpc-arm-hwi02:6875 :0]    ucp_context.c:586  "
        "UCX  WARN  device 'mlx5_3:1' is not available"
    )
    report = diagnose(rules, [line])
    assert top(report) == "nccl-ib-hca-wrong" and "mlx5_3:1" in found(report, "nccl-ib-hca-wrong").detail


def test_system_v_shared_memory_refused_names_the_kernels_segment_limits(rules):
    for line in [
        "[1693920302.521306]          sys.c:915  UCX  ERROR   shmget(size=134221824 flags=0x7b0) for mm_recv_desc "
        "failed: No space left on device, please check shared memory limits by 'ipcs -l'",
        "1261: [LOG_CAT_BASESMUMA] Failed to shmget with IPC_PRIVATE, size 20971520, IPC_CREAT; errno 28:No space left "
        "on device",
    ]:
        report = diagnose(rules, [line])
        assert top(report) == "shm-too-small" and "kernel.shmmni" in found(report, "shm-too-small").detail, line


def test_a_roce_port_beside_ib_ports_is_no_error_when_the_bootstrap_failed_first(rules):
    mixed = "[0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/RoCE [4]mlx5_4:1/IB ; OOB ib0:192.168.184.61<0>"
    lines = [
        f"cgpu08:57123:57123 [0] NCCL INFO NET/IB : Using {mixed}",
        "cgpu08:57123:57123 [0] NCCL INFO Bootstrap : Using ib0:192.168.184.61<0>",
        "cgpu14:53622:53700 [0] misc/socket.cc:484 NCCL WARN Net : Connect to 192.168.184.61<42427> failed : No route to host",
        "cgpu14:53622:53700 [0] NCCL INFO bootstrap.cc:68 -> 6",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-socket-ifname"
    assert found(report, "nccl-ib-hca-wrong").severity == "warning"


def test_ib_disable_with_an_external_plugin_that_found_no_device_is_ib_switched_off(rules):
    # HPC-X's IBext loaded, then NET/IB found no device: the variable did switch RDMA off here, so the
    # plugin "ignoring" it is not what happened (NVIDIA/nccl#846's shape).
    lines = [
        "w1:140685:141168 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        "w1:140685:141168 [0] NCCL INFO P2P plugin IBext",
        "w1:140685:141168 [0] NCCL INFO NET/IB : No device found.",
        "w1:140685:141168 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-ib-disabled"
    assert "nccl-net-plugin" not in ids(report)


def test_a_verbs_provider_built_for_a_newer_glibc_is_the_verbs_library_missing(rules):
    line = (
        "ibv_devinfo: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
        "/usr/lib/x86_64-linux-gnu/libibverbs/libbnxt_re-rdmav34.so)"
    )
    assert top(diagnose(rules, [line])) == "ib-verbs-library-missing"
    # The same loader error for a library that has nothing to do with verbs is not about IB.
    other = "python: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by /opt/conda/lib/libstdc++.so.6)"
    assert "ib-verbs-library-missing" not in ids(diagnose(rules, [other]))


def test_a_container_on_dockers_default_bridge_is_an_interface_other_nodes_cannot_reach(rules):
    # LlamaFactory#5018's shape: the host name is the container id, the bootstrap address Docker's bridge.
    lines = [
        "c39f5cf046aa:4773:4773 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.3<0>",
        "c39f5cf046aa:4773:4907 [0] NCCL INFO Failed to open libibverbs.so[.1]",
        "c39f5cf046aa:4773:4907 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.3<0>",
        "c39f5cf046aa:4773:4907 [0] NCCL INFO Using network Socket",
        "c39f5cf046aa:4774:4835 [1] NCCL INFO misc/socket.cc:568 -> 2",
    ]
    report = diagnose(rules, lines)
    assert top(report) == "nccl-socket-ifname"
    assert "--network=host" in found(report, "nccl-socket-ifname").detail
    # A site's own 172.17 network on named hosts is not Docker's bridge.
    site = [line.replace("c39f5cf046aa", "gpu-a01") for line in lines]
    assert "Docker" not in " ".join(f.detail for f in diagnose(rules, site).findings)
