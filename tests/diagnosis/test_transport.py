"""Transport analyzers (diag/diagnosis/analyzers/transport.py): why NCCL runs over TCP, and which setting did it."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, one_node


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
