"""Launch analyzers (diag/diagnosis/analyzers/launch/): PMIx wiring and run-time errors, rendezvous,
the master port, and a layout that does not fit the allocation."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, leads, top

TASK_FAILED = "srun: error: slinky-0: task 0: Exited with exit code 1"


# ----------------------------------------------------------------------------------- pmix_not_used
def test_open_mpi_direct_launched_without_pmi_names_its_nodes(rules):
    lines = [
        "0: [n0:08369] OPAL ERROR: Unreachable in file ext3x_client.c at line 112",
        "2: [n1:08375] OPAL ERROR: Unreachable in file ext3x_client.c at line 112",
        '0: The application appears to have been direct launched using "srun",',
        "srun: error: n0: task 0: Exited with exit code 1",
    ]
    finding = found(diagnose(rules, lines), "pmix-not-used")
    assert (finding.severity, finding.hosts) == ("error", ["n0", "n1"])


def singleton(host: str) -> str:
    return f"{host}:77:77 [0] NCCL INFO comm 0x5a rank 0 nranks 1 cudaDev 0 busId 1000 - Init COMPLETE"


def test_every_node_running_rank_0_of_1_means_no_wiring_but_one_node_is_fine(rules):
    finding = found(diagnose(rules, [singleton("slinky-0"), singleton("slinky-1")]), "pmix-not-used")
    assert finding.hosts == ["slinky-0", "slinky-1"]
    assert "pmix-not-used" not in ids(diagnose(rules, [singleton("slinky-0")]))


# ------------------------------------------------------------------------------------ pmix_runtime
PRE = "slurmstepd: error:  mpi/pmix_v4: "
# Slurm's ring dump after a PMIx fence timed out: each node lists the nodes it still waits for.
RING = [
    f"{PRE}pmixp_coll_ring_reset_if_to: slinky-{n} [{n}]: pmixp_coll_ring.c:742: 0x15{n}: collective timeout seq=0"
    for n in range(3)
] + [
    f"{PRE}pmixp_coll_ring_log: slinky-{n} [{n}]: pmixp_coll_ring.c:827: \t\t wait contrib: {waits}"
    for n, waits in enumerate(["slinky-[1-3]", "slinky-[2-3]", "slinky-3"])
]


def test_pmix_fence_timeout_names_the_node_every_other_node_waited_for(rules):
    finding = found(diagnose(rules, RING + [TASK_FAILED]), "pmix-runtime-error")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-3"])


def test_pmix_errors_in_a_job_that_went_on_and_did_not_fail_are_only_info(rules):
    went_on = RING + ["step 100 loss 2.31", "training finished"]
    assert found(diagnose(rules, went_on), "pmix-runtime-error").severity == "info"


OMPI5_INIT_BOX = [
    "PMIx_Init failed for the following reason:",
    "",
    "  {reason}",
    "",
    "Open MPI requires access to a local PMIx server to execute. Please ensure",
]


def test_pmix_init_refused_for_its_credential_is_a_run_time_error_not_a_launch_without_pmix(rules):
    refused = diagnose(rules, [line.format(reason="PMIX_ERR_INVALID_CRED") for line in OMPI5_INIT_BOX])
    finding = top(refused, "pmix-runtime-error")
    assert "credential" in finding.detail and "PMIX_MCA_psec=native" in finding.detail
    assert "pmix-not-used" not in ids(refused)
    unreachable = diagnose(rules, [line.format(reason="PMIX_ERR_UNREACH") for line in OMPI5_INIT_BOX])
    assert top(unreachable, "pmix-not-used")


def test_a_client_under_another_uid_than_registered_is_refused_by_pmix(rules):
    lines = ["The user ID of the client process does not match the ID registered", "by the host runtime:", TASK_FAILED]
    assert "another user ID" in top(diagnose(rules, lines), "pmix-runtime-error").detail


# Open MPI 5's run-time init box (ompi_rte.c): the step it names says whether PMIx's server or the node failed it.
OMPI5_RTE_BOX = [
    "It looks like MPI runtime init failed for some reason; your parallel process is",
    "likely to abort.  There are many reasons that a parallel process can",
    "fail during RTE init; some of which are due to configuration or environment",
    "  {step}",
    '  --> Returned "{returned}" (-13) instead of "Success" (0)',
]


def test_open_mpi_5_runtime_init_without_the_job_data_of_its_pmix_server_is_a_pmix_mismatch(rules):
    box = [line.format(step="node rank", returned="Not found") for line in OMPI5_RTE_BOX]
    finding = top(diagnose(rules, box + [TASK_FAILED]), "pmix-runtime-error")
    assert finding.severity == "error" and '(returned "Not found")' in finding.detail
    assert "--mpi=pmix_vN" in finding.detail
    assert top(diagnose(rules, box), "pmix-runtime-error").severity == "warning"


def test_open_mpi_5_runtime_init_naming_a_session_directory_is_not_pmix(rules):
    box = [line.format(step="top session directory", returned="Error") for line in OMPI5_RTE_BOX]
    assert "pmix-runtime-error" not in ids(diagnose(rules, box + [TASK_FAILED]))


MPI_ABORT_BOX = [
    "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD",
    "with errorcode 1.",
    "",
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
    "You may or may not see output from other processes, depending on",
]
SERVER_UNREACH = "[cn007:24154] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2147"


def test_pmix_server_unreachable_after_the_program_called_mpi_abort_is_the_abort_not_pmix(rules):
    report = diagnose(rules, MPI_ABORT_BOX + [SERVER_UNREACH] * 3)
    assert "MPI_ABORT" in top(report, "unexplained-failure").detail
    assert "pmix-runtime-error" not in ids(report)
    # An excerpt that starts at the box's NOTE line says the same.
    assert "pmix-runtime-error" not in ids(diagnose(rules, MPI_ABORT_BOX[3:] + [SERVER_UNREACH]))


def test_pmix_unreachable_from_the_client_transport_is_still_pmix_failing(rules):
    lines = [
        "[node12:04711] PMIX ERROR: UNREACHABLE in file ptl_tcp.c at line 688",
        "[node12:04711] OPAL ERROR: Unreachable in file pmix3x_client.c at line 112",
        "*** An error occurred in MPI_Init",
    ]
    assert top(diagnose(rules, lines), "pmix-runtime-error")


def test_mpirun_daemons_whose_ssh_sshd_dropped_before_its_banner_are_the_ssh_failure(rules):
    for refused in (
        "ssh_exchange_identification: Connection closed by remote host",
        "kex_exchange_identification: read: Connection reset by peer",
    ):
        lines = [
            refused,
            "ORTE has lost communication with a remote daemon.",
            "  HNP daemon   : [[5120,0],0] on node gpu001",
            "  Remote daemon: [[5120,0],9] on node gpu010",
        ]
        report = diagnose(rules, lines)
        assert "MaxStartups" in top(report, "unexplained-failure").detail
        assert "pmix-runtime-error" not in ids(report)
        assert found(report, "node-failure").severity == "warning"


def test_intel_mpi_s_pmi2_client_without_its_job_id_was_launched_without_matching_pmi(rules):
    lines = [
        "Abort(1091087) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
        "MPIR_Init_thread(136):",
        "MPID_Init(939).......:",
        "MPIR_pmi_init(168)...: PMI2_Job_GetId returned 14",
    ]
    report = diagnose(rules, lines)
    finding = top(report, "pmix-not-used")
    assert "I_MPI_PMI_LIBRARY" in finding.detail and "pmix-runtime-error" not in ids(report)


def test_a_grpc_server_that_cannot_bind_its_port_is_a_port_in_use(rules):
    line = "E0727 11:38:35.762428930   22857 tcp_server_posix.c:284]     bind addr=[::]:2223: Address already in use"
    assert "Port 2223 was already in use" in top(diagnose(rules, [line]), "port-in-use").detail


CRAY_BIND = "{t}: Fri Jul 23 10:59:54 2021: [PE_{t}]:inet_listen_socket_setup:inet_setup_listen_socket: bind failed port 1371 listen_sock = 3 Address already in use"
CRAY_INIT = "{t}: Fri Jul 23 10:59:54 2021: [PE_{t}]:_pmi_init:_pmi_inet_listen_socket_setup (full) returned -1"


def test_cray_pmi_that_cannot_bind_its_port_is_pmi_failing_not_the_rendezvous_port(rules):
    lines = [line.format(t=t) for t in (0, 1) for line in (CRAY_BIND, CRAY_INIT)]
    report = diagnose(rules, lines)
    finding = top(report, "pmix-runtime-error")
    assert "port-in-use" not in ids(report)
    assert "PE 0, 1" in finding.detail and "one after another" in finding.detail


def test_cray_pmi_that_cannot_reach_the_control_network_says_so(rules):
    line = " 736: Thu Jul 16 12:27:22 2020: [PE_736]:inet_connect:inet_connect: connect failed after 301 attempts"
    finding = found(diagnose(rules, [line, TASK_FAILED]), "pmix-runtime-error")
    assert "PE 736" in finding.detail and "control network" in finding.detail


def test_cray_pmi_error_before_a_rank_knows_its_pe_is_pmi_failing_not_a_missing_pmi(rules):
    report = diagnose(rules, ["[unset]:_pmi_set_af_in_use:PMI ERROR"])
    finding = top(report, "pmix-runtime-error")
    assert "_pmi_set_af_in_use" in finding.detail and "pmix-not-used" not in ids(report)


def test_a_singleton_warning_ends_the_log_even_with_a_paste_s_closing_fence_after_it(rules):
    line = "MPI startup(): PMI server not found. Please set I_MPI_PMI_LIBRARY variable if it is not a singleton case."
    for tail in ([], ["```"], ["", "[user@login01 ~]$ ", "```"]):
        top(diagnose(rules, ["```", line, *tail]), "pmix-not-used")
    assert "pmix-not-used" not in ids(diagnose(rules, [line, "step 1 loss 2.3"])), "the run went on"


# -------------------------------------------------------------------------------------- rendezvous
def test_connection_refused_by_the_store_is_a_rendezvous_failure_of_that_rank(rules):
    line = (
        "[rank9]:[W1202 10:49:31.172000000 socket.cpp:752] [c10d] The client socket has failed to connect to "
        "[slinky-0]:29500 (errno: 111 - Connection refused)."
    )
    # Alone it is c10d's warning before a retry (rank 0's store may come up); in a job that failed, the failure.
    alone = found(diagnose(rules, [line]), "rendezvous-failure")
    assert (alone.severity, alone.ranks) == ("warning", [9])
    failed = found(diagnose(rules, [line, "srun: error: n1: task 9: Exited with exit code 1"]), "rendezvous-failure")
    assert (failed.severity, failed.ranks) == ("error", [9])


def test_connection_refused_while_rank_0_started_then_passed_is_no_failure(rules):
    refused = (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [slinky-0]:29500 "
        "(errno: 111 - Connection refused)."
    )
    complete = "slinky-1:2345:2400 [0] NCCL INFO comm 0x55d0 rank 8 nranks 16 cudaDev 0 busId 1a000 - Init COMPLETE"
    barrier = "INFO:torch.distributed.distributed_c10d:Rank 8: Completed store-based barrier for key:store_based_barrier_key:1 with 16 nodes."
    steps = ["{'loss': 2.31, 'epoch': 0.01}", "{'loss': 2.12, 'epoch': 0.02}"]
    for passed in (complete, barrier):
        assert "rendezvous-failure" not in ids(diagnose(rules, [refused] * 3 + [passed] + steps))
    # The same retries in a run that then failed stay the rendezvous failure.
    failed = "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to (slinky-0, 29500)."
    assert top(diagnose(rules, [refused] * 3 + [failed]), "rendezvous-failure").severity == "error"


def test_an_excerpt_cut_inside_the_rendezvous_store_calls_is_a_weak_rendezvous_failure(rules):
    actor = "(CommandActor pid=552, ip=10.130.6.168) "
    lines = [
        actor + '  File "/opt/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 408, in sync',
        actor + "    get_response = self._backend.get_state()",
        actor + '  File "/opt/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 115, in _call_store',
        actor + "    return getattr(self._store, store_op)(*args, **kwargs)",
    ]
    finding = found(diagnose(rules, lines), "rendezvous-failure")
    assert finding.severity == "warning" and finding.confidence < 0.4 and finding.assumed
    # The same frames followed by more of the run are no failure of the rendezvous.
    assert "rendezvous-failure" not in ids(diagnose(rules, lines + ["epoch 1 loss 0.9"] * 5))


def test_rank_0_still_waiting_in_the_store_barrier_is_a_hang_until_the_barrier_completes(rules):
    wait = (
        "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
        "rank: 0, key: store_based_barrier_key:1 (world_size=8, worker_count=4, timeout=0:30:00)"
    )
    finding = found(diagnose(rules, [wait] * 3), "rendezvous-failure")
    assert finding.severity == "warning" and "only 4 of 8 processes" in finding.detail and finding.assumed
    done = "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 8 nodes."
    assert "rendezvous-failure" not in ids(diagnose(rules, [wait] * 3 + [done]))


def test_jax_tasks_that_never_all_connected_are_a_rendezvous_failure(rules):
    lines = [
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names:",
        "/job:jax_worker/replica:0/task:1",
    ]
    assert "coordination service" in top(diagnose(rules, lines), "rendezvous-failure").detail


def test_unresolvable_master_addr_names_the_node_that_could_not_resolve_it(rules):
    line = (
        "slinky-1: [W1202 10:50:17.124980676 socket.cpp:764] [c10d] The IPv6 network addresses of "
        "(no-such-host.invalid, 29510) cannot be retrieved (gai error: -3 - Temporary failure in name resolution)."
    )
    assert found(diagnose(rules, [line]), "rendezvous-failure").hosts == ["slinky-1"]


STORE_GET = (
    "[rank3]: torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId "
    "from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms. This "
    "may indicate a possible application crash on rank 0 or a network set up issue."
)


def test_store_timeout_after_rank_0_crashed_is_not_a_rendezvous_failure(rules):
    assert "rendezvous-failure" in ids(diagnose(rules, [STORE_GET]))
    oom = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    report = diagnose(rules, [oom, STORE_GET])
    assert "rendezvous-failure" not in ids(report)
    assert report.findings[0].id == "cuda-oom"


def test_tcpstore_retries_while_rank_0_starts_are_no_failure(rules):
    retry = (
        "[W0110 10:00:00.11000000 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
        "slinky-0:29500 - retrying (try=0, timeout=600000ms, delay=1000ms): Connection refused"
    )
    assert "rendezvous-failure" not in ids(diagnose(rules, [retry]))


STORE_CLOSED = (
    "[rank3]: torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. "
    "Did the remote server shutdown or crash?"
)
STORE_SOCKET = (
    "[W522 11:47:45.949247853 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=77, "
    "addr=[node018]:39732, remote=[node017]:29500): failed to recv, got 0 bytes"
)
SHOULD_DUMP = (
    '[rank8]:[W1209 02:30:39.927671113 ProcessGroupNCCL.cpp:1259] [PG ID 0 PG GUID 0(default_pg) Rank 8] Failed '
    'to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: '
    "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?"
)
AGENT_LOST = (
    "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'node018_2231_0' has failed to "
    "send a keep-alive heartbeat to the rendezvous '4812733' due to an error of type RendezvousConnectionError."
)
AGENT_DONE = (
    "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 "
    "seconds for other agents to finish"
)


def test_a_store_that_closed_under_the_ranks_names_its_host_and_yields_to_rank_0s_own_failure(rules):
    finding = top(diagnose(rules, [STORE_SOCKET, STORE_CLOSED]), "rendezvous-failure")
    assert "node017:29500 closed the connection" in finding.detail and finding.confidence < 0.6
    oom = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert ids(diagnose(rules, [oom, STORE_SOCKET, STORE_CLOSED])) == {"cuda-oom"}


def test_the_store_lost_at_a_teardown_or_after_the_workers_succeeded_is_no_failure(rules):
    # ProcessGroupNCCL's and TCPStore's own warnings when rank 0's store exits first, and an agent whose
    # workers succeeded losing the endpoint's store: the ends of working runs.
    for lines in ([SHOULD_DUMP, STORE_SOCKET], [AGENT_DONE, AGENT_LOST]):
        assert "rendezvous-failure" not in ids(diagnose(rules, lines)), lines
    alone = found(diagnose(rules, [AGENT_LOST]), "rendezvous-failure")
    assert alone.severity == "warning" and "node018_2231_0 lost the rendezvous store" in alone.detail


def test_jax_and_horovod_launchers_that_never_met_are_rendezvous_failures(rules):
    jax = (
        "I0513 10:14:07.512345  2231 client.cc:134] Failed to connect to distributed JAX controller: "
        "DEADLINE_EXCEEDED: Deadline Exceeded"
    )
    assert "coordinator" in found(diagnose(rules, [jax]), "rendezvous-failure").detail
    horovod = (
        "horovod.runner.common.util.network.NoValidAddressesFound: Horovod was unable to connect to horovod driver "
        "service on any of the following addresses: {'ib0': [('10.1.1.17', 41235)]}."
    )
    assert "--network-interface" in top(diagnose(rules, [horovod]), "rendezvous-failure").detail


def test_jax_cluster_registration_that_timed_out_names_how_many_tasks_came(rules):
    lines = [
        "E0612 03:14:07.512345  2231 coordination_service.cc:1204] Stopping coordination service as cluster "
        "registration failed. This may be due to 1) some tasks crashed earlier before connecting, 2) some tasks were "
        "never scheduled, or 3) scheduling delays.",
        "",
        "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This "
        "usually happens because a task triggered the barrier too early or too slowly.",
        "# of tasks that reached the barrier: 30/32.",
    ]
    assert "30 of 32 tasks" in top(diagnose(rules, lines), "rendezvous-failure").detail
    # A barrier of the program's own (multihost_utils.sync_global_devices) is no start-up rendezvous.
    runtime = [
        "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
        "multihost_broadcast_sync0. Timed out task names:",
        "/job:jax_worker/replica:0/task:3",
    ]
    assert "rendezvous-failure" not in ids(diagnose(rules, runtime))


GCS_CONNECT = (
    "[2025-02-16 16:05:55,537 E 350061 350061] gcs_rpc_client.h:179: Failed to connect to GCS at address "
    "{addr}:6379 within 5 seconds."
)
GCS_CLUSTER_ID = (
    "[2025-02-16 16:06:26,552 W 350061 350061] gcs_client.cc:178: Failed to get cluster ID from GCS server: "
    "TimedOut: Timed out while waiting for GCS to become available."
)


def test_ray_node_that_cannot_reach_its_heads_gcs_is_a_rendezvous_failure_unless_it_joined_later(rules):
    lines = [GCS_CONNECT.format(addr="172.23.15.13"), GCS_CLUSTER_ID]
    # The retries alone: a worker started before its head logs them too, so a warning that says so.
    alone = top(diagnose(rules, lines), "rendezvous-failure")
    assert alone.severity == "warning" and "172.23.15.13:6379" in alone.detail
    assert top(diagnose(rules, [*lines, TASK_FAILED]), "rendezvous-failure").severity == "error"
    joined = [*lines, "--------------------", "Ray runtime started.", "--------------------"]
    assert "rendezvous-failure" not in ids(diagnose(rules, joined))


def test_ray_head_address_with_no_host_says_the_variable_was_empty(rules):
    lines = ["+ ray start --address=:6379 --num-gpus 8 --block", GCS_CONNECT.format(addr=""), GCS_CLUSTER_ID]
    finding = top(diagnose(rules, lines), "rendezvous-failure")
    assert finding.severity == "error" and "empty" in finding.detail


def test_ray_start_unable_to_connect_to_gcs_is_a_rendezvous_failure(rules):
    line = (
        "2022-03-30 17:22:35,502 WARNING node.py:1465 -- Unable to connect to GCS at 10.0.0.4:6379. Check that (1) Ray "
        "GCS with matching version started successfully at the specified address, and (2) there is no firewall "
        "setting preventing access."
    )
    assert "10.0.0.4:6379" in top(diagnose(rules, [line]), "rendezvous-failure").detail


def test_ray_driver_that_found_no_cluster_is_a_rendezvous_failure_that_says_what_it_assumed(rules):
    line = (
        "ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting "
        "`--address` flag or `RAY_ADDRESS` environment variable."
    )
    finding = top(diagnose(rules, [line, TASK_FAILED]), "rendezvous-failure")
    assert "ray start" in finding.detail and finding.assumed


def test_grpc_peers_that_could_not_be_connected_are_a_weaker_rendezvous_failure(rules):
    tf = (
        "ERROR:tensorflow:Remote function on worker /job:worker/replica:0/task:1 failed with "
        "UnavailableError():failed to connect to all addresses"
    )
    finding = top(diagnose(rules, [tf]), "rendezvous-failure")
    assert finding.confidence < 0.85 and finding.assumed
    retry = [
        'I0320 05:57:29.309552659    3803 subchannel.cc:677]          Connect failed: {"created":"@1521525449.30944",'
        '"description":"Failed to connect to remote host: OS Error","errno":111,"file":"tcp_client_posix.cc"}',
        "I0320 05:57:29.309786369    3803 subchannel.cc:484]          Retry in 998 milliseconds",
    ]
    assert top(diagnose(rules, retry), "rendezvous-failure").severity == "warning"


def test_pytorch_1x_tcpstore_raising_a_bare_errno_is_a_rendezvous_failure_only_under_its_frame(rules):
    lines = [
        '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/rendezvous.py", line 143, in '
        "_env_rendezvous_handler",
        "    store = TCPStore(master_addr, master_port, world_size, start_daemon)",
        "RuntimeError: No route to host",
    ]
    assert "No route to host" in top(diagnose(rules, lines), "rendezvous-failure").detail
    elsewhere = [
        '  File "/workspace/train.py", line 88, in fetch_shard',
        "    sock.connect((host, 9000))",
        "RuntimeError: Connection timed out",
    ]
    assert "rendezvous-failure" not in ids(diagnose(rules, elsewhere))


# ------------------------------------------------------------------------------------- port_in_use
EADDRINUSE = (
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "port: 29512, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
)


def test_port_in_use_names_the_node_that_printed_it(rules):
    finding = found(diagnose(rules, [f"slinky-0: {EADDRINUSE}"]), "port-in-use")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-0"])


def test_nccl_and_launchers_that_found_their_ports_taken_are_port_in_use(rules):
    nccl = "node017:2231:2231 [0] misc/socket.cc:379 NCCL WARN Call to bind failed : Address already in use"
    finding = found(diagnose(rules, [nccl, nccl.replace("2231:2231 [0]", "2232:2232 [1]")]), "port-in-use")
    assert finding.hosts == ["node017"] and "every communicator" in finding.detail and "torchrun" not in finding.detail
    ompi = (
        "[node017][[40113,1],0][btl_tcp_component.c:1128:mca_btl_tcp_create_listen] bind() failed: no port "
        "available in the range [1024..65535]"
    )
    assert "1024..65535" in top(diagnose(rules, [ompi]), "port-in-use").detail


def test_store_listening_is_no_port_conflict(rules):
    listening = "[I socket.cpp:480] [c10d] The server socket has started to listen on [::]:29500."
    assert "port-in-use" not in ids(diagnose(rules, [listening]))


# -------------------------------------------------------------------------------------- world_size
def test_step_larger_than_the_allocation_is_an_error_and_an_adjusted_one_a_warning(rules):
    assert (
        found(diagnose(rules, ["srun: error: Only allocated 2 nodes asked for 4"]), "world-size-mismatch").severity
        == "error"
    )
    adjusted = "srun: Warning: can't run 2 processes on 4 nodes, setting nnodes to 2"
    assert found(diagnose(rules, [adjusted]), "world-size-mismatch").severity == "warning"


def test_rank_checked_in_twice_names_the_rank(rules):
    line = (
        "slinky-0:20412:20501 [0] bootstrap.cc:270 NCCL WARN Bootstrap Root : rank 0 of 32 ranks has already checked in"
    )
    finding = found(diagnose(rules, [line]), "world-size-mismatch")
    assert (finding.ranks, finding.hosts) == ([0], ["slinky-0"])


def test_step_that_waited_for_busy_nodes_and_started_is_no_mismatch(rules):
    lines = [
        "srun: Job 12023 step creation temporarily disabled, retrying (Requested nodes are busy)",
        "srun: Step created for job 12023",
    ]
    assert "world-size-mismatch" not in ids(diagnose(rules, lines))


def test_several_processes_each_rank_0_of_1_are_singletons(rules):
    finding = found(diagnose(rules, ["Hello from proc 0 of 1"] * 4), "pmix-not-used")
    assert "4 processes" in finding.detail
    # One process saying so is a one-process run.
    assert "pmix-not-used" not in ids(diagnose(rules, ["Hello from proc 0 of 1"]))


def test_pmix_help_box_naming_a_component_it_cannot_open(rules):
    box = [
        "A requested component was not found, or was unable to be opened.  This",
        "means that this component is either not installed or is unable to be",
        "Host:      node01",
        "Framework: psec",
        "Component: munge",
    ]
    failed = ["srun: error: node01: task 0: Exited with exit code 1"]
    finding = found(diagnose(rules, box + failed), "pmix-runtime-error")
    assert "PMIX_MCA_psec=native" in finding.detail and finding.severity == "error"
    # The box alone: PMIx may have gone on with another component, so it cannot be called the failure.
    alone = found(diagnose(rules, box), "pmix-runtime-error")
    assert alone.severity == "warning" and alone.assumed
    # Open MPI's own frameworks in the same box are not PMIx's.
    assert "pmix-runtime-error" not in ids(diagnose(rules, box[:3] + ["Framework: pml", "Component: ucx"]))


def test_launchers_and_layouts_that_disagree_on_the_world_size(rules):
    mpi = found(
        diagnose(rules, ["AssertionError: MPI world size 16 does not match torch world size 8"]), "world-size-mismatch"
    )
    assert "16" in mpi.detail and "8" in mpi.detail
    layout = (
        "ValueError: ('The number of process requires to run all replicas (8)', 'must be equal to the world size (4).')"
    )
    assert "needs 8 processes, but 4" in found(diagnose(rules, [layout]), "world-size-mismatch").detail


def test_framework_and_launcher_words_for_a_layout_the_started_processes_do_not_fit(rules):
    for line, says in (
        ("[rank3]: RuntimeError: world_size (12) is not divisible by tensor_model_parallel_size (8) x "
         "pipeline_model_parallel_size (1)", "12 processes"),
        ("ValueError: You set `devices=4` in Lightning, but the number of tasks per node configured in SLURM "
         "`--ntasks-per-node=1` does not match. HINT: Set `devices=1`.", "--ntasks-per-node=1"),
        ("There are not enough slots available in the system to satisfy the 32", "32"),
        ("node3:771:771 [2] NCCL WARN Invalid rank requested : 16/16", "rank 16"),
    ):
        report = diagnose(rules, [line, "srun: error: node3: task 2: Exited with exit code 1"])
        assert report.findings[0].id == "world-size-mismatch", (line, [f.id for f in report.findings])
        assert says in report.findings[0].detail


def test_upstream_layout_checks_name_what_does_not_fit(rules):
    """Each framework's or launcher's own check of its layout against the processes started (session 15):
    the finding leads and its detail says what does not fit, in the message's numbers."""
    for line, says in (
        # Megatron 23.04 prints no world size of its own.
        ("AssertionError: world size is not divisible by tensor parallel size (24) times pipeline parallel size (8)",
         "number of processes started is not divisible"),
        ("[rank0]: AssertionError: Invalid parallel dims: dp(2) * tp(8) * pp(1) != WORLD_SIZE(12)",
         "dp(2) * tp(8) * pp(1) do not multiply to the 12 processes"),
        ("RuntimeError: data_parallel_rank should be smaller than data size, but 12 >= 8", "rank 12 of 8"),
        ("AssertionError: LOCAL_RANK (0) != OMPI_COMM_WORLD_LOCAL_RANK (3), not sure how to proceed as we're "
         "seeing conflicting local rank info.", "two launchers"),
        ("deepspeed.elasticity.config.ElasticityIncompatibleWorldSize: World size (12) is not valid with the current "
         "list of valid GPU counts: [8, 16, 32]", "[8, 16, 32], not the 12"),
        ("There are not enough nodes in your allocation to satisfy your request to launch", "Open MPI"),
        ("horovod.runner.common.util.timeout.TimeoutException: Timed out waiting for minimum number of slots to become "
         "available. Please check that you have enough resources to run at least 16 Horovod processes. Timeout after "
         "600 seconds.", "16 processes"),
        # A count srun cannot use at all is not "more than the job holds".
        ("srun: error: Unable to create step for job 4812733: Task count specification invalid", "could not lay out"),
        # TensorRT-LLM's WorldConfig: before 0.9 it printed the expression, later the sizes (and CP).
        ("RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/opt/optimum-nvidia/third-party/"
         "tensorrt-llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:89)", "mpiSize == tp * pp"),
        ("[TensorRT-LLM][ERROR] Assertion failed: MPI size 4 != TP size 8 * PP size 1 * CP Size 1 (/src/tensorrt_llm/"
         "cpp/tensorrt_llm/runtime/worldConfig.cpp:120)", "MPI size 4 != TP size 8"),
    ):
        report = diagnose(rules, [line, "srun: error: node3: task 2: Exited with exit code 1"])
        assert report.findings[0].id == "world-size-mismatch", (line, [f.id for f in report.findings])
        assert (report.findings[0].severity, says in report.findings[0].detail) == ("error", True), (
            line,
            report.findings[0].detail,
        )


def test_layout_warnings_that_do_not_stop_the_job_alone_stay_warnings(rules):
    # Lightning warns that srun was not used; Ray Train's start timeout names resources among other causes.
    for line in (
        "PossibleUserWarning: The `srun` command is available on your system but is not used. HINT: If your "
        "intention is to run Lightning on SLURM, prepend your python command with `srun` like so: srun python t ...",
        "ray.train.v2._internal.exceptions.WorkerGroupStartupTimeoutError: The worker group startup timed out after "
        "30.0 seconds waiting for 32 workers. Potential causes include: (1) temporary insufficient cluster resources",
    ):
        assert found(diagnose(rules, [line]), "world-size-mismatch").severity == "warning", line


def test_a_batch_that_is_not_divisible_is_not_about_the_world_size(rules):
    line = "ValueError: global batch 12 is not divisible by 5 micro-batches"
    assert "world-size-mismatch" not in ids(diagnose(rules, [line]))


def test_pytorch_1x_store_barrier_and_connect_timeouts_are_rendezvous_failures(rules):
    barrier = (
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 5, for key: "
        "store_based_barrier_key:1 (world_size=16, worker_count=8, timeout=0:30:00)"
    )
    finding = found(diagnose(rules, [barrier]), "rendezvous-failure")
    assert "only 8 of 16" in finding.detail
    crowded = barrier.replace("worker_count=8", "worker_count=32")
    assert "another job" in found(diagnose(rules, [crowded]), "rendezvous-failure").detail
    old = "RuntimeError: connect() timed out. Original timeout was 1800000 ms."
    assert diagnose(rules, [old]).findings[0].id == "rendezvous-failure"


def test_mpi_libraries_started_without_a_pmi_server_in_their_own_words(rules):
    for line in (
        "MPI startup(): PMI server not found. Please set I_MPI_PMI_LIBRARY variable if it is not a singleton case.",
        "[unset]: write_line error; fd=-1 buf=:cmd=init pmi_version=1 pmi_subversion=1",
        # MPICH 4.x's pmi_wire.c says the same through PMIU_write.
        "[unset]: PMIU_write error; fd=-1 buf=:cmd=init pmi_version=1 pmi_subversion=1",
    ):
        report = diagnose(rules, ["0: " + line, "1: " + line])
        assert report.findings[0].id == "pmix-not-used", (line, [f.id for f in report.findings])


def test_mpirun_losing_a_daemon_is_a_launch_runtime_failure_even_in_a_bare_excerpt(rules):
    box = [
        "--------------------------------------------------------------------------",
        "ORTE has lost communication with a remote daemon.",
        "",
        "  HNP daemon   : [[40321,0],0] on node gpu01",
        "  Remote daemon: [[40321,0],3] on node gpu04",
    ]
    finding = found(diagnose(rules, box), "pmix-runtime-error")
    assert finding.severity == "error" and "daemon" in finding.detail


def test_pytorchs_ipv6_lookups_failing_are_no_rendezvous_failure(rules):
    benign = [
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (gpu-node-1, 29500) cannot be retrieved (gai error: "
        "-9 - Address family for hostname not supported).",
        "[W socket.cpp:663] [c10d] The client socket cannot be initialized to connect to [gpu-node-1]:29500 (errno: "
        "97 - Address family not supported by protocol).",
        # PyTorch 2.0-2.2 word the same IPv6 attempt as a failed connect (socket.cpp recordError).
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 97 - Address "
        "family not supported by protocol).",
        "Epoch 3 done",
    ]
    assert "rendezvous-failure" not in ids(diagnose(rules, benign))
    refused = "[c10d] The client socket has failed to connect to [gpu-node-1]:29500 (errno: 111 - Connection refused)."
    assert "rendezvous-failure" in ids(diagnose(rules, [refused, "srun: error: n1: task 1: Exited with exit code 1"]))
    unresolvable = "[c10d] The network addresses of (gpu-nod-1, 29500) cannot be retrieved (gai error: -2 - Name or service not known)."
    assert "rendezvous-failure" in ids(diagnose(rules, [unresolvable]))


def test_master_addr_set_to_an_unexpanded_slurm_host_list_is_named_with_its_fix(rules):
    # MASTER_ADDR=$SLURM_JOB_NODELIST: c10d retries the lookup with warnings until the job is cancelled.
    lookup = (
        "{}: [W socket.cpp:653] [c10d] The IPv6 network addresses of (nodeai[01,05], 53394) cannot be retrieved "
        "(gai error: -2 - Name or service not known)."
    )
    cancel = "slurmstepd: error: *** JOB 272162 ON nodeai01 CANCELLED AT 2024-07-10T15:46:57 ***"
    finding = top(diagnose(rules, [lookup.format(0), lookup.format(1), lookup.format(0), cancel]), "rendezvous-failure")
    assert finding.severity == "error" and "scontrol show hostnames" in finding.detail
    # A plain name that does not resolve yet, in a run that goes on, stays the weak reading.
    pending = lookup.replace("nodeai[01,05]", "nodeai05").format(0)
    assert found(diagnose(rules, [pending, "Epoch 3 done"]), "rendezvous-failure").severity == "warning"


def test_pytorchs_ipv6_loopback_attempt_with_errno_99_is_no_rendezvous_failure(rules):
    # connect() to localhost's ::1 where the loopback has no IPv6 address: EADDRNOTAVAIL, then IPv4 works.
    warning = (
        "[W socket.cpp:558] [c10d] The client socket has failed to connect to [localhost]:29500 "
        "(errno: 99 - Cannot assign requested address)."
    )
    assert "rendezvous-failure" not in ids(diagnose(rules, [warning, warning, "Epoch: [0]  [   0/5005]  loss: 6.9312"]))
    # ... but the same warning before the client gives up is the store not answering.
    timeout = "torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to (localhost, 29500)."
    top(diagnose(rules, [warning, timeout]), "rendezvous-failure")
    # The server's bind keeps its meaning: MASTER_ADDR is not this host's address.
    bind = "[W socket.cpp:436] [c10d] The server socket has failed to bind to 10.1.2.3:29500 (errno: 99 - Cannot assign requested address)."
    assert "rendezvous-failure" in ids(diagnose(rules, [bind, "srun: error: n1: task 0: Exited with exit code 1"]))


def test_a_store_told_to_listen_on_another_hosts_address_is_a_rendezvous_failure(rules):
    line = (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: 0, code: -99, name: EADDRNOTAVAIL, message: cannot assign requested address"
    )
    report = diagnose(rules, [line])
    assert report.findings[0].id == "rendezvous-failure"
    assert "port-in-use" not in ids(report)


def test_one_process_run_alone_without_a_pmi_server_is_no_finding(rules):
    line = "MPI startup(): PMI server not found. Please set I_MPI_PMI_LIBRARY variable if it is not a singleton case."
    assert "pmix-not-used" not in ids(diagnose(rules, [line, "SCF converged in 12 iterations"]))


def test_a_no_pmi_server_line_that_ends_the_log_is_a_warning_that_says_what_it_assumed(rules):
    # Pasted alone (or the last thing a job printed), it is usually all the user has of ranks
    # that never found each other; a singleton on purpose would have gone on printing.
    for line in (
        "MPI startup(): PMI server not found. Please set I_MPI_PMI_LIBRARY variable if it is not a singleton case.",
        "[unset]: write_line error; fd=-1 buf=:cmd=init pmi_version=1 pmi_subversion=1",
    ):
        finding = found(diagnose(rules, ["Loading modules", line]), "pmix-not-used")
        assert finding.severity == "warning" and "singleton" in finding.assumed[0]


def test_a_pmix_component_box_before_ranks_that_all_ran_is_only_noise(rules):
    box = [
        "A requested component was not found, or was unable to be opened.  This",
        "Host:      cn07",
        "Framework: psec",
        "Component: munge",
    ]
    ran = [f"Hello world from processor cn0{7 + r // 2}, rank {r} out of 4 processors" for r in range(4)]
    assert found(diagnose(rules, box + ran), "pmix-runtime-error").severity == "info"
    assert found(diagnose(rules, box), "pmix-runtime-error").severity == "warning"


def test_the_quoted_line_of_open_mpis_no_pmi_box_is_pmix_not_used(rules):
    line = "srun -N 4 helloworld fails with: OMPI was not built with SLURM's PMI support and therefore cannot execute"
    assert diagnose(rules, [line]).findings[0].id == "pmix-not-used"


def test_the_same_lightning_ranks_announced_twice_mean_two_nodes_started_as_node_0(rules):
    lines = [f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8" for r in range(4) for _ in range(2)]
    finding = found(diagnose(rules, lines + ["Traceback (most recent call last):"]), "world-size-mismatch")
    assert "4 of 8 ranks" in finding.detail
    whole = [f"initializing ddp: GLOBAL_RANK: {r}, MEMBER: {r + 1}/8" for r in range(8)]
    assert "world-size-mismatch" not in ids(diagnose(rules, whole))


def test_every_node_running_ranks_0_to_k_of_its_own_world_is_a_separate_job_per_node(rules):
    def comm(host: str, rank: int, nranks: int) -> str:
        return f"{host}:2832:2832 [{rank}] NCCL INFO comm 0x55c6f1c6{rank:04x} rank {rank} nranks {nranks} cudaDev {rank} busId 3000 - Init COMPLETE"

    separate = [comm(h, r, 2) for h in ("testgpu1", "testgpu2") for r in range(2)]
    finding = found(diagnose(rules, separate), "world-size-mismatch")
    assert "testgpu1, testgpu2" in finding.detail and "MPI=1" in finding.detail
    # The same per-node groups beside a communicator that spans both nodes: tensor-parallel pairs, one job.
    world = [comm(h, 2 * i + r, 4) for i, h in enumerate(("testgpu1", "testgpu2")) for r in range(2)]
    assert "world-size-mismatch" not in ids(diagnose(rules, separate + world))


def test_a_sampler_given_a_rank_beyond_its_world_is_a_layout_mismatch_not_an_unexplained_crash(rules):
    # torch.utils.data.DistributedSampler checks rank < num_replicas: RANK came from SLURM_PROCID of
    # a 16-task step while WORLD_SIZE said 8. Every rank >= 8 stops; ranks 0-7 wait for them.
    lines = [
        "[rank8]: Traceback (most recent call last):",
        '[rank8]:   File "/opt/train.py", line 40, in <module>',
        "[rank8]:     sampler = DistributedSampler(dataset)",
        "[rank8]: ValueError: Invalid rank 8, rank should be in the interval [0, 7]",
        "[rank9]: ValueError: Invalid rank 9, rank should be in the interval [0, 7]",
        "srun: error: slinky-1: tasks 8-15: Exited with exit code 1",
    ]
    leads(rules, lines, "world-size-mismatch", says="world of 8", not_also="unexplained-failure")


def test_a_store_key_of_a_formed_group_that_never_arrived_is_a_late_rank_unless_rank_0_crashed_first(rules):
    # TCPStore::doWait (2.2+) on the ranks that waited for rank 0 to publish the group's NCCL unique id: the
    # store answered the wait, so the processes had met; rendezvous-failure stays only as the second answer.
    wait = "[rank5]: torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0"
    alone = diagnose(rules, [wait, "srun: error: slinky-1: task 5: Exited with exit code 1"])
    assert "30 min" in top(alone, "nccl-timeout").detail
    assert found(alone, "rendezvous-failure").severity == "warning"
    crashed = [
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        wait,
        "srun: error: slinky-0: task 0: Exited with exit code 1",
    ]
    report = diagnose(rules, crashed)
    assert top(report, "cuda-oom") and "rendezvous-failure" not in ids(report)


def test_a_store_wait_on_keys_of_no_group_or_with_ranks_missing_stays_a_rendezvous_failure(rules):
    # Keys outside any process group (a rendezvous' own, a program's): nothing shows the processes had met.
    other = "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /torchelastic/agent/terminal_state"
    top(diagnose(rules, [other, "srun: error: slinky-1: task 5: Exited with exit code 1"]), "rendezvous-failure")
    # Rank 0's own store counting who came: the group never formed, whatever the others waited for.
    joined = "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 6/8 clients joined."
    wait = "[rank5]: torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0"
    top(diagnose(rules, [joined, wait]), "rendezvous-failure")
    # The unique id's read failing on a closed connection: the store went away, no late rank shown.
    reset = STORE_GET.replace("wait timeout after 600000ms", "Connection reset by peer")
    top(diagnose(rules, [reset]), "rendezvous-failure")


def test_a_plugin_the_nodes_slurmd_lacks_or_none_loading_is_a_missing_mpi_plugin(rules):
    # src/interfaces/mpi.c: the step's plugin id that slurmd cannot resolve (srun had the plugin, the
    # node's slurmd was not built with it), and srun loading none of the plugins it was asked for.
    for line in (
        "slurmstepd: error: mpi_g_slurmstepd_init: unable to resolve MPI plugin offset from plugin_id=106. This "
        "error usually results from a job being submitted against an MPI plugin which was not compiled into slurmd "
        "but was for job submission command.",
        "srun: error: MPI: Unable to load any plugin",
    ):
        top(diagnose(rules, [line, TASK_FAILED]), "pmix-plugin-missing")


def test_pmixs_shared_memory_data_store_lock_error_names_the_hash_store(rules):
    # NCCL's troubleshooting guide (PMIx data store selection) quotes it without its line number.
    for line in (
        "PMIX ERROR: ERROR in file gds_ds12_lock_pthread.c",
        "[n1:4412] PMIX ERROR: ERROR in file gds_ds21_lock_pthread.c at line 99",
    ):
        assert top(diagnose(rules, [line]), "pmix-runtime-error").severity == "warning"
        failed = top(diagnose(rules, [line, TASK_FAILED]), "pmix-runtime-error")
        assert failed.severity == "error" and "PMIX_MCA_gds=hash" in failed.detail


def test_pmixs_shared_memory_data_store_that_cannot_attach_or_make_its_directory_names_the_hash_store(rules):
    attach = [
        "The gds/shmem2 component attempted to attach to a shared-memory segment at a",
        "particular base address, but was given a different one. Your job will now likely",
        "abort.",
    ]
    finding = top(diagnose(rules, attach), "pmix-runtime-error")
    assert "PMIX_MCA_gds=hash" in finding.detail
    session = (
        '[node017:48213] session init: can not create session directory '
        '"/var/spool/slurmd/pmix.4812733.0/pmix_dstor_ds21_48213": Permission denied'
    )
    finding = top(diagnose(rules, [session, TASK_FAILED]), "pmix-runtime-error")
    assert "/var/spool/slurmd/pmix.4812733.0" in finding.detail and "Permission denied" in finding.detail


def test_deepspeeds_launcher_refusing_its_hostfile_or_ranks_is_a_layout_mismatch(rules):
    for line, says in (
        ("ValueError: Hostname 'node021' not found in hostfile", "node021"),
        ("ValueError: Num nodes is >1 but no extra nodes available via hostfile", "no extra nodes"),
        ("ValueError: MPICH requires same number of devices per node", "same number of GPUs"),
        ("AssertionError: MPI rank 0 does not match torch rank 9", "rank 9"),
    ):
        finding = top(diagnose(rules, [line]), "world-size-mismatch")
        assert says in finding.detail, (line, finding.detail)
    assert "world-size-mismatch" not in ids(diagnose(rules, ["Reading hostfile /job/hostfile: node017 slots=8"]))


def test_forms_a_paste_keeps_of_the_store_and_of_lightnings_layout_check(rules):
    resolve = diagnose(rules, ["    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)",
                               "ValueError: host not found: Name or service not known"])  # fmt: skip
    assert "could not be resolved" in top(resolve, "rendezvous-failure").detail
    # Lightning's check wrapped by hand after its first line: the layout mismatch all the same.
    wrapped = ["ValueError: You set `devices=4` in Lightning, but the number of tasks per node ",
               "configured in SLURM `--ntasks-per-node=1` does not match. HINT: Set `devices=1`."]  # fmt: skip
    assert "devices=4" in top(diagnose(rules, wrapped), "world-size-mismatch").detail


def test_a_store_that_only_rank_0_joined_means_the_other_ranks_were_never_started(rules):
    wrapped = ["torch.distributed.DistStoreError: Timed out after 3601 seconds waiting for clients. ", "1/16 clients joined."]
    report = diagnose(rules, wrapped)
    assert "other 15 were never started" in top(report, "world-size-mismatch").detail
    assert "rendezvous-failure" in ids(report)  # the store timeout stays listed, as the second answer
    # Another process heard failing to reach the store was started: then the rendezvous is the cause.
    peer = "RuntimeError: The client socket has timed out after 1800s while trying to connect to (gpu-a01, 29500)."
    report = diagnose(rules, [*wrapped, peer])
    assert top(report, "rendezvous-failure") and "world-size-mismatch" not in ids(report)
    # Some joined, some not: those crashed or could not reach the store.
    some = ["torch.distributed.DistStoreError: Timed out after 3601 seconds waiting for clients. 9/16 clients joined."]
    assert "9 of 16" in top(diagnose(rules, some), "rendezvous-failure").detail


def test_lightning_members_that_never_joined_before_the_log_ends_are_a_layout_warning(rules):
    line = "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4"
    finding = found(diagnose(rules, [line]), "world-size-mismatch")
    assert finding.severity == "warning" and "1 of 4 members" in finding.detail and "srun" in finding.detail
    # All members announced, or the run going on after the line: nothing to say.
    every = [f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4" for r in range(4)]
    assert "world-size-mismatch" not in ids(diagnose(rules, every))
    assert "world-size-mismatch" not in ids(diagnose(rules, [line, "Epoch 0: 10%"]))


def test_a_store_timeout_fetching_ncclUniqueId_says_rank_0_was_late_even_with_the_start_of_the_line_cut(rules):
    line = (
        "setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', "
        "but store->get('0') got error: Socket Timeout"
    )
    report = diagnose(rules, [line])
    assert "NCCL unique id rank 0 publishes" in top(report, "nccl-timeout").detail
    assert "rank 0 had not published it in time" in found(report, "rendezvous-failure").detail


STOPPED_IN_INIT = [
    "Traceback (most recent call last):",
    '  File "/env/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 436, in init_process_group',
    "    store, rank, world_size = next(rendezvous_iterator)",
    "KeyboardInterrupt",
]


def test_processes_stopped_inside_the_rendezvous_never_met(rules):
    finding = top(diagnose(rules, STOPPED_IN_INIT), "rendezvous-failure")
    assert "same MASTER_ADDR and MASTER_PORT" in finding.detail and finding.assumed
    # Cut there without the stop: no hang shown, only where an exception the excerpt left out was raised.
    cut = [f for f in diagnose(rules, STOPPED_IN_INIT[:3]).findings if f.id == "rendezvous-failure"]
    assert all(f.severity == "warning" and "same MASTER_ADDR" not in f.detail for f in cut)


def test_a_store_client_retrying_an_address_where_nothing_listens_is_the_rendezvous(rules):
    retry = "I1127 21:3{n}:05.015228 3935673 tcp_utils.cc:107] Retry to connect to 0.1.68.146:63314 while the server is not yet listening."
    lines = [retry.format(n=n) for n in range(3)]
    finding = top(diagnose(rules, lines), "rendezvous-failure")
    assert "0.1.68.146:63314" in finding.detail and finding.severity == "warning"
    failed = lines + ["RuntimeError: connect to 0.1.68.146:63314 failed"]
    assert top(diagnose(rules, failed), "rendezvous-failure").severity == "error"


# -------------------------------------------------------------------------- nccl-tests worlds apart
def _tests_device(rank: int, host: str, pid: int) -> str:
    return f"#  Rank {rank:2d} Group  0 Pid {pid} on {host:>10} device  {rank} [0000:0f:00] NVIDIA H20"


def test_nccl_tests_with_a_rank_0_on_every_host_ran_as_separate_jobs(rules):
    first = [_tests_device(r, "node3", 1528921) for r in range(2)]
    second = [_tests_device(r, "node2", 2171626) for r in range(2)]
    finding = top(diagnose(rules, first + second), "world-size-mismatch")
    assert finding.hosts == ["node2", "node3"] and "MPI=1" in finding.detail
    assert [ev.line for ev in finding.evidence] == [1, 3]
    # One run across two hosts lists rank 0 once: nothing to say.
    joined = [_tests_device(0, "node3", 11), _tests_device(1, "node3", 11), _tests_device(2, "node2", 12)]
    assert not diagnose(rules, joined).findings


def test_nccl_tests_device_list_pasted_without_its_hash_marks_still_shows_the_separate_worlds(rules):
    # A markdown paste turns "#  Rank ..." into a heading and drops the '#'.
    lines = [_tests_device(0, "node3", 1528921).lstrip("# "), _tests_device(0, "node2", 2171626).lstrip("# ")]
    assert top(diagnose(rules, lines), "world-size-mismatch").hosts == ["node2", "node3"]


def test_processes_each_rank_0_of_one_on_several_hosts_explain_the_bandwidth_they_measured(rules):
    """nccl-tests under MPI without PMI wiring: each process a world of its own, so its busbw says
    nothing about the fabric; the missing wiring comes first, the bandwidth under it."""
    lines = []
    for host, pid in (("gdr114", 71918), ("gdr116", 45875)):
        lines += [
            f"{host}:{pid}:{pid} [0] NCCL INFO comm 0x55d1 rank 0 nRanks 1 nNodes 1 localRanks 1 localRank 0 MNNVL 0",
            f"{host}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x55d1 rank 0 nranks 1 cudaDev 0 nvmlDev 0 "
            "busId 1a000 commId 0x1 - Init COMPLETE",
        ]
    lines += [
        "#  Rank  0 Group  0 Pid  71918 on     gdr114 device  0 [0000:1a:00] NVIDIA H100 80GB HBM3",
        "  1073741824     268435456     float     sum      -1   6766.1  158.69    0.00      0     0.14  7713662.53    0.00      0",
    ]
    report = diagnose(rules, lines)
    top(report, "pmix-not-used")
    assert found(report, "busbw-low").explained_by == "pmix-not-used"


def test_lightning_asking_for_gpus_the_task_cannot_see_is_a_layout_mismatch(rules):
    line = "MisconfigurationException('You requested gpu: [0, 1, 2, 3, 4, 5, 6, 7]\\n But your machine only has: [0]"
    finding = top(diagnose(rules, [line]), "world-size-mismatch")
    assert "--gpus-per-task=1" in finding.detail
    # Lightning 1.x said it with a capital.
    old = "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0, 1, 2, 3]"
    top(diagnose(rules, [old]), "world-size-mismatch")


def test_every_task_from_k_up_failing_nccl_with_invalid_argument_is_a_world_too_small(rules):
    lines = [
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/../c10d/NCCLUtils.hpp:82, invalid argument, NCCL version 2.4.8",
        "srun: error: compute-0-0: tasks 2-7: Exited with exit code 1",
        "srun: error: compute-0-1: tasks 8-13,15: Exited with exit code 1",
        "srun: error: compute-0-1: task 14: Exited with exit code 1",
    ]
    finding = top(diagnose(rules, lines), "world-size-mismatch")
    assert "world of 2 processes" in finding.detail and "srun started 16" in finding.detail
    # Task 0 failing too is any failure of every task, not a world too small.
    with_zero = lines + ["srun: error: compute-0-0: tasks 0-1: Exited with exit code 1"]
    assert "world-size-mismatch" not in ids(diagnose(rules, with_zero))


def test_accelerates_own_port_check_is_a_port_in_use(rules):
    line = (
        "ConnectionError: Tried to launch distributed communication on port `29500`, but another process is "
        "utilizing it. Please specify a different port (such as using the `--main_process_port` flag)"
    )
    assert "Port 29500" in top(diagnose(rules, [line]), "port-in-use").detail


def test_horovod_and_jax_layouts_that_do_not_fit_are_a_world_size_mismatch(rules):
    for line, words in (
        ("ValueError: Requested more processes (16) than there are available slots (8)", "16 processes"),
        (
            "ValueError: process_id and num_processes must be nonnegative, with process_id < num_processes. "
            "Got process_id=9, num_processes=8.",
            "process 9 of 8",
        ),
    ):
        assert words in top(diagnose(rules, [line]), "world-size-mismatch").detail, line


PMIXP_TIMEOUT = (
    "slurmstepd: error:  mpi/pmix_v4: pmixp_coll_ring_reset_if_to: node017 [0]: pmixp_coll_ring.c:736: "
    "0x14f3c8028f80: collective timeout seq=0"
)


def test_slurms_pmix_errors_that_end_the_log_are_no_noise(rules):
    # A paste that stops at the plugin's collective timeout: the wire-up hung there.
    assert top(diagnose(rules, [PMIXP_TIMEOUT]), "pmix-runtime-error").severity == "warning"
    # The same line with the run going on after it, and no failure: noise.
    went_on = diagnose(rules, [PMIXP_TIMEOUT, "step 100 loss 2.31", "training finished"])
    assert top(went_on, "pmix-runtime-error").severity == "info"
    # The PMIx library's own error lines are printed by runs that finish too.
    lib = diagnose(rules, ["[node018:09897] PMIX ERROR: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER in file base/gds_base_fns.c at line 133"])
    assert top(lib, "pmix-runtime-error").severity == "info"


def test_an_exported_node_count_that_is_not_the_allocations_is_a_layout_mismatch(rules):
    line = "srun: error: SLURM_JOB_NUM_NODES environment variable conflicts with allocated node count (4 != 2)."
    assert "SLURM_JOB_NUM_NODES says 4 nodes" in top(diagnose(rules, [line]), "world-size-mismatch").detail


def test_a_ray_cluster_with_fewer_gpus_than_the_layout_is_a_world_size_mismatch(rules):
    verl = "ValueError: Total available GPUs 16.0 is less than total desired GPUs 32"
    assert "offers 16.0 GPUs where it asks for 32" in top(diagnose(rules, [verl]), "world-size-mismatch").detail
    nemo = "Maximum number of retries reached (6). Cluster resources may be insufficient..."
    top(diagnose(rules, [nemo]), "world-size-mismatch")


def test_mindsporess_invalid_device_ordinal_is_a_local_rank_beyond_the_gpus(rules):
    line = (
        "[ERROR] DEVICE [mindspore/ccsrc/runtime/device/gpu/cuda_driver.cc:245] SetDevice] SetDevice for id:7 failed, "
        "ret[101], invalid device ordinal."
    )
    assert "invalid device ordinal" in top(diagnose(rules, [line]), "world-size-mismatch").detail


def test_an_nccl_comm_id_nccl_cannot_parse_is_the_rendezvous_address(rules):
    lines = [
        "node017:2231:2231 [0] NCCL INFO NCCL_COMM_ID set by environment to node001-29500",
        "node017:2231:2231 [0] misc/socket.cc:287 NCCL WARN Net : No valid <IPv4_or_hostname>:<port> pair found",
    ]
    assert "NCCL_COMM_ID=node001-29500" in top(diagnose(rules, lines), "rendezvous-failure").detail


def test_a_cluster_that_cannot_hold_the_workers_is_a_world_size_mismatch_not_a_preemption(rules):
    pending = (
        "  Warning  FailedScheduling  2m (x5 over 7m)  default-scheduler  0/16 nodes are available: 16 Insufficient "
        "nvidia.com/gpu. preemption: 0/16 nodes are available: 16 No preemption victims found for incoming pod."
    )
    report = diagnose(rules, [pending])
    assert "nvidia.com/gpu" in top(report, "world-size-mismatch").detail and "preempted" not in ids(report)
    ray = "(autoscaler +1m12s) Error: No available node types can fulfill resource request {'GPU': 8.0, 'CPU': 16.0}."
    top(diagnose(rules, [ray]), "world-size-mismatch")


def test_mpi_hello_worlds_each_rank_0_of_1_are_singletons(rules):
    for greeting in ("Hello world from processor n{n}, rank 0 out of 1 processors", "Hello from 0 (comm size: 1)"):
        lines = [greeting.format(n=n) for n in range(4)]
        top(diagnose(rules, lines), "pmix-not-used")


def test_a_pmix_client_that_could_not_reach_its_server_is_a_runtime_error_not_a_launch_without_pmi(rules):
    lines = [
        "[nia1907.scinet.local:174781] PMIX ERROR: PMIX TEMPORARILY UNAVAILABLE in file ptl_tcp.c at line 688",
        "[nia1907.scinet.local:174781] OPAL ERROR: Unreachable in file pmix2x_client.c at line 112",
        "*** An error occurred in MPI_Init_thread",
        "*** on a NULL communicator",
    ]
    finding = top(diagnose(rules, lines), "pmix-runtime-error")
    assert finding.severity == "error"
    assert "pmix-not-used" not in ids(diagnose(rules, lines))
    # Without the client's transport error, the same "Unreachable" is a launch without PMI.
    assert top(diagnose(rules, lines[1:]), "pmix-not-used")


def test_mpich_error_stacks_name_their_cause_on_the_last_line(rules):
    def stack(last: str) -> list[str]:
        return [
            "Abort(1091471): Fatal error in internal_Init: Other MPI error, error stack:",
            "internal_Init(48306).: MPI_Init(argc=0x7ffc1b2e5a1c, argv=0x7ffc1b2e5a10) failed",
            "MPII_Init_thread(203): ",
            last,
        ]

    kind = stack("pmix_init(80)........: PMIx_Init failed (launcher not compatible with PMIx client)")
    assert top(diagnose(rules, kind), "pmix-not-used")
    pmi1 = ["[unset]: launcher not compatible with PMI1 client", *stack("pmi1_init(18)........: PMI_Init returned -1")]
    assert top(diagnose(rules, pmi1), "pmix-not-used")
    fence = stack("pmix_barrier_local(333)..: PMIx_Fence returned -24")
    assert top(diagnose(rules, fence), "pmix-runtime-error").severity == "error"
    getinfo = stack("MPIDI_OFI_find_provider(176): OFI call getinfo failed")
    assert top(diagnose(rules, getinfo), "ib-devices-not-mounted")
    mvapich = ["[node017:mpi_rank_0][rdma_open_hca] No HCAs found on the system.", "Fatal error in MPI_Init: Other MPI error, error stack:"]
    assert "MVAPICH2" in top(diagnose(rules, mvapich), "ib-devices-not-mounted").detail
    abort = "Abort(1) on node 7 (rank 7 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 7"
    assert top(diagnose(rules, [abort]), "unexplained-failure").severity == "error"


def test_hydras_error_printer_lines_are_failures(rules):
    for line in (
        "[proxy:0:1@node018] HYDU_create_process (lib/utils/launch.c:73): execvp error on file python3 (No such file or directory)",
        "[mpiexec@node017] HYDT_bscd_pbs_query_node_list (lib/tools/bootstrap/external/pbs_query_node_list.c:22): No PBS nodefile found",
    ):
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line
    assert not diagnose(rules, ["[mpiexec@node017] Launch arguments: /usr/bin/hydra_bstrap_proxy --upstream-host node017"]).findings


def test_mvapich2_and_pals_words_for_a_rank_that_failed(rules):
    for line in (
        "[node018:mpispawn_1][child_handler] MPI process (rank: 12, pid: 48213) exited with status 1",
        "x4502c0s1b0n0: rank 3 exited with code 1",
    ):
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line


def test_cray_mpichs_abort_header_is_a_failure(rules):
    line = (
        "MPICH ERROR [Rank 0] [job id 410301.1] [Thu Feb 13 12:42:18 2025] [nid005414] - Abort(-1) (rank 0 in comm 0): "
        "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL library is not linked"
    )
    finding = top(diagnose(rules, [line]), "unexplained-failure")
    assert finding.severity == "error" and "GTL library" in finding.detail


def test_an_mpich_rank_holding_a_dead_pmi_fd_was_not_started_by_a_pmi_launcher(rules):
    # An MPI program run directly from inside another MPI job inherits PMI_FD but not the connection.
    lines = [
        "[cli_1]: write_line error; fd=16 buf=:cmd=init pmi_version=1 pmi_subversion=1",
        ":",
        "system msg for write_line failure : Bad file descriptor",
        "Fatal error in MPI_Init: Other MPI error, error stack:",
        "MPID_Init(2144)......: PMI_Init returned -1",
    ]
    top(diagnose(rules, lines), "pmix-not-used")
    assert "pmix-runtime-error" not in ids(diagnose(rules, lines))
    # The same write failing on a live connection (the server went away) is no launch without PMI.
    broken_pipe = [lines[0], ":", "system msg for write_line failure : Broken pipe", *lines[3:]]
    top(diagnose(rules, broken_pipe), "pmix-runtime-error")


def test_open_mpis_pmix_client_error_with_its_source_path_is_read_like_the_bare_file_name(rules):
    path = "../../../../../openmpi-4.0.1/opal/mca/pmix/pmix3x/pmix3x_client.c"
    lines = [f"[n0:11554] OPAL ERROR: Unreachable in file {path} at line 112", "*** An error occurred in MPI_Init"]
    top(diagnose(rules, lines), "pmix-not-used")
    # After PMIx_Init ran out of resources (its data store) the client had a server: a run-time error.
    client = "/opt/openmpi-4.0.3/opal/mca/pmix/pmix3x/pmix/src/client/pmix_client.c"
    resource = [f"[n0:41004] PMIX ERROR: OUT-OF-RESOURCE in file {client} at line 231", lines[0].replace("Unreachable", "Error")]
    top(diagnose(rules, resource), "pmix-runtime-error")


def test_open_mpis_pmix_component_linked_against_another_libpmix(rules):
    lines = ["openmpi/mca_pmix_pmix3x.so: undefined symbol: pmix_value_load"]
    finding = top(diagnose(rules, lines), "pmix-runtime-error")
    assert "two MPI or PMIx installations" in finding.detail and finding.severity == "error"
    ignored = [
        "[n01:1] mca_base_component_repository_open: unable to open mca_pmix_ext3x: /opt/ompi/lib/openmpi/"
        "mca_pmix_ext3x.so: undefined symbol: pmix_value_xfer (ignored)",
        "Hello from rank 1 out of 4 processors",
    ]
    assert found(diagnose(rules, ignored), "pmix-runtime-error").severity == "warning"


def test_nccl_tests_and_nvshmem_words_for_a_layout_larger_than_the_node(rules):
    tests = top(diagnose(rules, ["Invalid number of GPUs: 16 requested but only 8 were found."]), "world-size-mismatch")
    assert "asked for 16 GPUs per process where the task sees 8" in tests.detail
    nvshmem = "src/modules/bootstrap/uid/bootstrap_uid.cpp:bootstrap_root:234: mismatch in rank count from procs 16 : 8"
    assert "different world sizes (16 and 8)" in top(diagnose(rules, [nvshmem]), "world-size-mismatch").detail


def test_deepspeed_mii_placing_fewer_replicas_than_asked_is_a_layout_that_does_not_fit(rules):
    line = "ValueError: Only able to place 0 replicas, but 2 replicas were requested."
    assert "only 0 of the 2 model replicas" in top(diagnose(rules, [line]), "world-size-mismatch").detail


# ------------------------------------------------------------ session 16: PMIx forms from upstream source
def test_pmix_init_box_with_a_status_other_than_unreachable_had_a_server_and_says_what_to_change(rules):
    init = diagnose(rules, [line.format(reason="PMIX_ERR_INIT") for line in OMPI5_INIT_BOX])
    finding = top(init, "pmix-runtime-error")
    assert "PMIX_MCA_psec=native" in finding.detail and "pmix-not-used" not in ids(init)
    mismatch = top(diagnose(rules, [line.format(reason="PMIX_ERR_NOT_SUPPORTED") for line in OMPI5_INIT_BOX]), "pmix-runtime-error")
    assert "--mpi=pmix_vN" in mismatch.detail


def test_open_mpi_5s_advice_alone_below_the_box_head_is_a_launch_without_pmix(rules):
    advice = [
        "Open MPI requires access to a local PMIx server to execute. Please ensure",
        'that either you are operating in a PMIx-enabled environment, or use "mpirun"',
    ]
    report = diagnose(rules, advice)
    assert "--mpi=pmix" in top(report, "pmix-not-used").action
    # With its head and a status other than "no server", the box is still read by its status.
    boxed = [line.format(reason="PMIX_ERR_INIT") for line in OMPI5_INIT_BOX] + advice[1:]
    assert top(diagnose(rules, boxed), "pmix-runtime-error")


def test_pmix_s_own_init_box_is_a_failed_client_even_without_a_failure_line(rules):
    # OpenPMIx 3-6 (help-pmix-runtime.txt): the client could not start, so the process aborts.
    box = [
        "It looks like pmix_init failed for some reason; your parallel process is",
        "likely to abort.  There are many reasons that a parallel process can",
        "here's some additional information (which may only be relevant to an",
        "PMIX developer):",
        "  pmix_psec_base_open failed",
        "  --> Returned value -46 instead of PMIX_SUCCESS",
        "[pgp0202:12255] PMIX ERROR: NOT-FOUND in file server/pmix_server.c at line 229",
    ]
    finding = top(diagnose(rules, box), "pmix-runtime-error")
    assert finding.severity == "error" and "pmix_psec_base_open" in finding.detail
    assert "PMIX_MCA_psec=native" in finding.detail
    gds = top(diagnose(rules, [box[0], "  pmix_gds_base_select failed"]), "pmix-runtime-error")
    assert gds.severity == "error" and "PMIX_MCA_gds=hash" in gds.detail


def test_srun_s_invalid_mpi_plugin_name_is_a_missing_plugin(rules):
    line = "srun: error: Task launch for StepId=812345.0 failed on node gpu-node03: Invalid MPI plugin name"
    assert top(diagnose(rules, [line]), "pmix-plugin-missing").severity == "error"
    assert top(diagnose(rules, ["srun: error: Application launch failed: Invalid MPI plugin name"]), "pmix-plugin-missing")


def test_open_mpi_s_failed_pmix_fence_in_mpi_init_is_a_run_time_error_naming_what_it_returned(rules):
    box = [
        "It looks like MPI_INIT failed for some reason; your parallel process is",
        "  opal_pmix.fence() failed",
        '  --> Returned "Timeout" (-15) instead of "Success" (0)',
        TASK_FAILED,
    ]
    finding = top(diagnose(rules, box), "pmix-runtime-error")
    assert "opal_pmix.fence()" in finding.detail and '"Timeout"' in finding.detail and "PMIxTimeout" in finding.detail


def test_mpich_s_pmix_client_finding_no_server_is_a_launch_without_pmix_but_a_refused_one_is_not(rules):
    stack = [
        "Abort(1091471) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:",
        "MPIR_Init_thread(136):",
        "MPIR_pmi_init(152)...: PMIX_Init returned {code}",
    ]
    unreach = diagnose(rules, [line.format(code="-25") for line in stack])
    assert "--mpi=pmix" in top(unreach, "pmix-not-used").detail and "pmix-runtime-error" not in ids(unreach)
    refused = diagnose(rules, [line.format(code="-12") for line in stack])
    assert top(refused, "pmix-runtime-error") and "pmix-not-used" not in ids(refused)


def test_srun_s_pmi1_server_hearing_twice_from_one_task_means_more_processes_than_tasks(rules):
    report = diagnose(rules, ["srun: error: PMK_KVS_Barrier duplicate request from task 3", TASK_FAILED])
    assert "task 3" in top(report, "pmix-not-used").detail


def test_pmix_helpers_that_name_their_setting_a_usock_directive_a_stale_rendezvous_and_two_pmix_installs(rules):
    usock = ['PMIx no longer supports the "usock" transport for client-server', TASK_FAILED]
    assert "PMIX_MCA_ptl" in top(diagnose(rules, usock), "pmix-runtime-error").detail
    stale = ["The PMIx server was unable to setup a rendezvous point. This is", TASK_FAILED]
    assert "stale" in top(diagnose(rules, stale), "pmix-runtime-error").detail
    versions = ["An unexpected version of PMIx was loaded:", "  Detected:  4.2.9", TASK_FAILED]
    assert "library path" in top(diagnose(rules, versions), "pmix-runtime-error").detail
    hosts = ["Unfortunately, the connection was refused due to a failure to", TASK_FAILED]
    assert "security domains" in top(diagnose(rules, hosts), "pmix-runtime-error").detail


def test_slurms_ring_fence_falling_back_to_the_tree_is_no_pmix_failure(rules):
    notice = (
        "slurmstepd: error:  mpi/pmix_v4: pmixp_info_srv_fence_coll_type: node017 [0]: pmixp_info.c:113: Ring "
        "collective algorithm cannot be used with Slurm RPC's communication subsystem. Tree-based collective will "
        "be used instead."
    )
    assert "pmix-runtime-error" not in ids(diagnose(rules, [notice, "step 100 loss 2.31"]))


def test_open_mpi_s_orte_init_box_naming_pmix_init_is_a_run_time_error_but_another_step_is_not(rules):
    box = [
        "It looks like orte_init failed for some reason; your parallel process is",
        "  {step} failed",
        "  --> Returned value Not initialized (-44) instead of ORTE_SUCCESS",
        "  ompi_mpi_init: ompi_rte_init failed",
        TASK_FAILED,
    ]
    pmix = top(diagnose(rules, [line.format(step="pmix init") for line in box]), "pmix-runtime-error")
    assert '"Not initialized"' in pmix.detail and "--mpi=pmix_vN" in pmix.detail
    other = diagnose(rules, [line.format(step="orte_session_dir") for line in box])
    assert "pmix-runtime-error" not in ids(other)


def test_slurm_s_pmi2_plugin_hearing_another_pmi_version_means_the_mpi_s_pmi_library_does_not_match(rules):
    line = "slurmstepd: error: mpi/pmi2: inconsistent client PMI version: 2.0(req) <> 1.1(orig)"
    report = diagnose(rules, [line, TASK_FAILED])
    assert "I_MPI_PMI_LIBRARY" in top(report, "pmix-not-used").detail and "pmix-runtime-error" not in ids(report)


def test_nvshmem_s_pmix_bootstrap_without_a_server_and_cray_pmi_s_node_barrier(rules):
    unreach = "src/modules/bootstrap/pmix/bootstrap_pmix.c:259: non-zero status: -25 PMIx_Init failed"
    assert "--mpi=pmix" in top(diagnose(rules, [unreach, TASK_FAILED]), "pmix-not-used").detail
    barrier = (
        "Tue Jul 17 18:04:24 2018: [PE_3025]:_pmi_mmap_tmp: Warning bootstrap barrier failed: num_syncd=3, "
        "pes_this_node=68, timeout=180 secs"
    )
    assert "3 of the node's 68" in top(diagnose(rules, [barrier, TASK_FAILED]), "pmix-runtime-error").detail


def test_deepspeed_processes_each_discovering_a_world_of_one_are_singletons(rules):
    lines = [
        f"[2025-03-02 10:14:12,311] [INFO] [comm.py:728:mpi_discovery] Discovered MPI settings of world_rank=0, "
        f"local_rank=0, world_size=1, master_addr=10.12.0.{n}, master_port=29500"
        for n in (17, 18)
    ]
    assert top(diagnose(rules, lines), "pmix-not-used")


def test_slurm_s_pmix_plugin_failing_its_ucx_direct_connections_names_the_setting_that_turns_them_off(rules):
    line = (
        "slurmstepd: error:  mpi/pmix_v4: pmixp_dconn_ucx_prepare: node017 [0]: pmixp_dconn_ucx.c:247: "
        "Fail to init UCX: Input/output error"
    )
    finding = top(diagnose(rules, [line, TASK_FAILED]), "pmix-runtime-error")
    assert "PMIxDirectConnUCX=false" in finding.detail and "Fail to init UCX" in finding.detail


def test_a_ray_bundle_index_past_the_placement_group_is_a_layout_bigger_than_what_was_reserved(rules):
    for line in (
        "ValueError: placement group bundle index 6 is invalid. Valid placement group indexes: 0-4",
        "(TaskRunner pid=8812) ValueError: placement group bundle index 8 is invalid. Valid placement group indexes: 0 to 7.",
    ):
        assert "bundle" in top(diagnose(rules, [line]), "world-size-mismatch").detail


def test_an_index_error_picking_the_device_by_local_rank_is_more_tasks_than_devices_on_the_node(rules):
    lines = [
        '  File "/opt/conda/lib/python3.9/site-packages/pytorch_lightning/strategies/ddp.py", line 118, in root_device',
        "    return self.parallel_devices[self.local_rank]",
        "IndexError: list index out of range",
        "srun: error: gpu-node-3: tasks 6-7: Exited with exit code 1",
    ]
    assert "local rank is past the end of the device list" in top(diagnose(rules, lines), "world-size-mismatch").detail


def test_an_index_error_of_the_program_s_own_data_is_no_layout(rules):
    lines = [
        '  File "/data/loader.py", line 77, in __getitem__',
        "    return self.samples[idx]",
        "IndexError: list index out of range",
        "srun: error: gpu-node-3: task 2: Exited with exit code 1",
    ]
    report = diagnose(rules, lines)
    top(report, "unexplained-failure")
    assert "world-size-mismatch" not in ids(report)


def test_invalid_device_ordinal_with_peers_hidden_from_nvml_is_per_task_binding_not_a_count(rules):
    lines = [
        "my-node: Test CUDA failure common.cu:1030 'invalid device ordinal'",
        "my-node:7039:7435 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found",
        "my-node: Test NCCL failure common.cu:1126 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '",
    ]
    report = diagnose(rules, lines)
    assert "each process sees only its own GPU" in top(report, "unexplained-failure").detail
    assert "world-size-mismatch" not in ids(report)


def test_mpirun_daemons_that_ssh_could_not_log_in_for_are_ssh_not_pmix(rules):
    lines = [
        "root@worker-1's password: ",
        "Permission denied, please try again.",
        "ORTE was unable to reliably start one or more daemons.",
    ]
    report = diagnose(rules, lines)
    assert "passwordless key" in top(report, "unexplained-failure").detail
    assert "pmix-runtime-error" not in ids(report)


def test_open_mpi_s_session_socket_that_cannot_bind_is_not_the_rendezvous_port(rules):
    lines = [
        "[qnode4047:29020] [[2752,0],1] bind() failed on error Address already in use (98)",
        "[qnode4047:29020] [[2752,0],1] ORTE_ERROR_LOG: Error in file oob_usock_component.c at line 247",
    ]
    report = diagnose(rules, lines)
    assert "TMPDIR" in top(report, "unexplained-failure").detail
    assert "port-in-use" not in ids(report)


# ------------------------------------------------------- PMIx that is not Slurm's, or no server at all
def test_a_stale_usock_server_address_is_a_launch_without_pmi_not_a_pmix_failure(rules):
    # ptl_usock.c logs NOT-FOUND when the rendezvous socket PMIX_SERVER_URI names is gone: a second MPI
    # program in the same srun task inherited the first one's PMIx identity.
    lines = [
        "[node001:94018] PMIX ERROR: NOT-FOUND in file ptl_usock.c at line 175",
        "[node001:94018] OPAL ERROR: Unreachable in file pmix3x_client.c at line 112",
        'The application appears to have been direct launched using "srun",',
        "but OMPI was not built with SLURM's PMI support and therefore cannot",
    ]
    top(diagnose(rules, lines), "pmix-not-used")


def test_imb_skipping_pingpong_in_every_task_means_worlds_of_one(rules):
    lines = ["# !! Benchmark PingPong invalid for 1 processes !! "] * 2
    top(diagnose(rules, lines), "pmix-not-used")
    assert "pmix-not-used" not in ids(diagnose(rules, ["# !! Benchmark PingPong invalid for 3 processes !! "] * 2))


def test_pmix_unpacking_its_own_runtime_s_message_at_set_up_is_outside_the_catalogue(rules):
    lines = ["[zorg:04087] PMIX ERROR: UNPACK-PAST-END in file client/pmix_client.c at line 113"]
    finding = found(diagnose(rules, lines), "unexplained-failure")
    assert finding.severity == "warning" and "release" in finding.detail
    # Under srun the same status sits beside Slurm's plugin: its PMIx and the MPI's may differ.
    slurm = [*lines, "slurmstepd: error: mpi/pmix_v2: pmixp_p2p_send: n1 [0]: pmixp_utils.c:467: send failed, rc=2, exceeded the retry limit"]
    top(diagnose(rules, slurm), "pmix-runtime-error")
    # A lookup that fails to unpack in a run that goes on stays PMIx's noise.
    noise = ["[n18:97] PMIX ERROR: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER in file base/gds_base_fns.c at line 133"]
    assert "unexplained-failure" not in ids(diagnose(rules, noise))


def test_a_daemon_that_never_called_back_is_not_pmix_nor_a_node_lost_mid_run(rules):
    lines = [
        "PRTE has lost communication with a remote daemon.",
        "  Remote daemon: [prte-n01-55533@0,1] on node n02",
        "An PRTE daemon has unexpectedly failed after launch and before",
        "communicating back to mpirun. This could be caused by a number",
    ]
    top(diagnose(rules, lines), "unexplained-failure")
    assert "pmix-runtime-error" not in ids(diagnose(rules, lines))


# ------------------------------------------------------------------ world_size: GPUs and launchers
def test_a_vllm_layout_larger_than_one_node_names_the_executor(rules):
    lines = [
        "(APIServer pid=1) pydantic_core._pydantic_core.ValidationError: 1 validation error for ParallelConfig",
        "  Value error, World size (16) is larger than the number of available GPUs (8) in this node. If this is "
        "intentional and you are using:",
    ]
    finding = top(diagnose(rules, lines), "world-size-mismatch")
    assert "16" in finding.detail and "--distributed-executor-backend ray" in finding.detail


def test_vllm_short_of_ray_gpus_is_a_warning_while_it_still_waits(rules):
    warned = [
        "WARNING 03-11 10:02:18 ray_utils.py:290] The number of required GPUs exceeds the total number of "
        "available GPUs in the placement group.",
        "INFO:     Application startup complete.",
    ]
    assert found(diagnose(rules, warned), "world-size-mismatch").severity == "warning"
    failed = ["ValueError: The number of required GPUs exceeds the total number of available GPUs in the cluster."]
    assert "local Ray instance" in top(diagnose(rules, failed), "world-size-mismatch").detail


def test_a_device_index_beyond_the_visible_gpus_but_not_a_cuda_that_failed_to_start(rules):
    beyond = [
        '[rank3]: RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "/pytorch/aten/src/ATen/'
        'cuda/CUDAContext.cpp":52, please report a bug to PyTorch. device=3, num_gpus=1'
    ]
    assert "GPU 3 where it sees 1" in top(diagnose(rules, beyond), "world-size-mismatch").detail
    # No values: CUDA could not count its devices at all (a driver or MIG problem), no layout to blame.
    broken = [beyond[0].replace("device=3, num_gpus=1", "device=, num_gpus=")]
    assert "world-size-mismatch" not in ids(diagnose(rules, broken))


def test_more_processes_in_the_store_barrier_than_the_world_is_extra_launches(rules):
    lines = [
        "INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for "
        "rank: 3, key: store_based_barrier_key:1 (world_size=8, worker_count=16, timeout=0:30:00)",
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 3, for key: "
        "store_based_barrier_key:1 (world_size=8, worker_count=16, timeout=0:30:00)",
    ]
    report = diagnose(rules, lines)
    assert "16 processes joined" in top(report, "world-size-mismatch").detail
    assert "rendezvous-failure" in ids(report)  # the second answer
    fewer = [line.replace("worker_count=16", "worker_count=4") for line in lines]
    top(diagnose(rules, fewer), "rendezvous-failure")  # ranks missing: late, lost or never started


def elastic_result(host: str, world: int) -> list[str]:
    fields = ["restart_count=0", f"master_addr={host}", "group_rank=0", f"group_world_size={world}"]
    return [f"{host}: [default] Rendezvous complete for workers. Result:"] + [f"{host}:   {f}" for f in fields]


def test_torchrun_agents_each_alone_on_their_node_ran_separate_jobs(rules):
    lines = elastic_result("slinky-0", 1) + elastic_result("slinky-1", 1)
    finding = found(diagnose(rules, lines), "world-size-mismatch")
    assert finding.hosts == ["slinky-0", "slinky-1"] and finding.severity == "warning"
    # One node's agent alone is an ordinary single-node run; two agents that met are one job.
    assert "world-size-mismatch" not in ids(diagnose(rules, elastic_result("slinky-0", 1)))
    assert "world-size-mismatch" not in ids(diagnose(rules, elastic_result("slinky-0", 2) + elastic_result("slinky-1", 2)))


# ------------------------------------------------------------------ addresses a launcher cannot use
def test_a_ray_request_pinned_to_the_drivers_address_is_a_wrong_node_address_not_too_few_gpus(rules):
    # vLLM pins its placement group's first bundle to "node:<driver IP>"; no Ray node registered with that IP.
    leads(
        rules,
        [
            "INFO 08-23 10:15:58 ray_utils.py:174] Waiting for creating a placement group of specs for 10 seconds. "
            "specs=[{'node:10.20.0.4': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` to see if you have "
            "enough resources.",
            "(autoscaler +7s) Error: No available node types can fulfill resource request {'node:10.20.0.4': 0.001, "
            "'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue.",
        ],
        "rendezvous-failure",
        "VLLM_HOST_IP",
        "world-size-mismatch",
    )


def test_a_ray_request_for_gpus_no_node_has_stays_a_layout_mismatch(rules):
    report = diagnose(
        rules,
        [
            "(autoscaler +1m12s) Error: No available node types can fulfill resource request {'GPU': 8.0, 'CPU': 16.0}. "
            "Add suitable node types to this cluster to resolve this issue."
        ],
    )
    assert "rendezvous-failure" not in ids(report)
    found(report, "world-size-mismatch")


def test_ray_status_listing_the_pinned_bundle_as_pending_is_a_warning(rules):
    report = diagnose(
        rules,
        [
            "Demands:",
            " {'node:10.0.0.9': 0.001, 'GPU': 1.0} * 1, {'GPU': 1.0} * 15 (PACK): 1+ pending placement groups",
        ],
    )
    assert found(report, "rendezvous-failure").severity == "warning"


def test_an_mpijob_launcher_that_cannot_resolve_its_workers_service_is_no_pmix_failure(rules):
    leads(
        rules,
        [
            "ssh: Could not resolve hostname all-reduce-worker-1.all-reduce.default.svc: Name or service not known",
            "--------------------------------------------------------------------------",
            "ORTE was unable to reliably start one or more daemons.",
            "ORTE does not know how to route a message to the specified daemon",
        ],
        "rendezvous-failure",
        "dnsPolicy: ClusterFirst",
        "pmix-runtime-error",
    )


def test_a_hostfile_name_ssh_cannot_resolve_stays_unexplained_with_its_hint(rules):
    leads(
        rules,
        [
            "ssh: Could not resolve hostname gpu07: Name or service not known",
            "--------------------------------------------------------------------------",
            "ORTE was unable to reliably start one or more daemons.",
        ],
        "unexplained-failure",
        "could not resolve a host name",
        "pmix-runtime-error",
    )


def test_pmi2_wiring_missing_in_open_mpis_and_slurms_words(rules):
    for lines in [
        ['"PMI2 initialized but returned bad values for size and rank.',
         'This is symptomatic of either a failure to use the'],
        ["julia> using Trixi", "slurmstepd: error: mpi/pmi2: invalid pmi1 command received: 'init'"],
    ]:  # fmt: skip
        top(diagnose(rules, lines), "pmix-not-used")


def test_a_kubeflow_worker_that_cannot_resolve_its_master_is_a_rendezvous_failure(rules):
    report = diagnose(rules, [
        "nslookup: can't resolve '(null)': Name does not resolve",
        "nslookup: can't resolve 'dlc1dwuhvtro4c27-master-0': Name does not resolve",
        "waiting for master",
    ])  # fmt: skip
    assert "dlc1dwuhvtro4c27-master-0" in top(report, "rendezvous-failure").detail


def test_a_master_port_below_1024_is_a_rendezvous_failure_that_names_the_port(rules):
    report = diagnose(rules, [
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
        "server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to "
        "bind to 0.0.0.0:98 (errno: 13 - Permission denied)."
    ])  # fmt: skip
    assert "MASTER_PORT" in top(report, "rendezvous-failure").detail


def test_a_step_srun_aborted_at_launch_is_no_users_cancel(rules):
    report = diagnose(rules, [
        "srun: error: timeout waiting for task launch, started 96 of 108 tasks",
        "srun: StepId=6229110.0 aborted before step completely launched.",
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "slurmstepd: error: *** STEP 6229110.0 ON x3 CANCELLED AT 2024-07-11T05:22:07 ***",
    ])  # fmt: skip
    assert "job-cancelled" not in ids(report) and top(report, "unexplained-failure").severity == "error"


# ----------------------------------------------------------------------- JAX and Ray coordination
def test_jax_task_that_never_registered_with_the_coordinator_is_a_rendezvous_failure(rules):
    finding = top(diagnose(rules, ["DEADLINE_EXCEEDED: Deadline Exceeded", "RPC: /tensorflow.CoordinationService/RegisterTask"]),
                  "rendezvous-failure")  # fmt: skip
    assert "coordinator_address" in finding.detail
    grpc = ("Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
            "/tensorflow.CoordinationService/RegisterTask:")  # fmt: skip
    top(diagnose(rules, [grpc]), "rendezvous-failure")
    # A heartbeat RPC of a task that had registered is no rendezvous fault.
    assert "rendezvous-failure" not in ids(diagnose(rules, ["RPC: /tensorflow.CoordinationService/Heartbeat"]))


def test_ray_start_that_warned_about_the_gcs_and_then_started_raises_nothing(rules):
    unable = ("2022-07-13 15:19:40,592\tWARNING utils.py:1242 -- Unable to connect to GCS at 10.249.16.183:6379. Check that "
              "(1) Ray GCS with matching version started successfully at the specified address, and (2) there is no "
              "firewall setting preventing access.")  # fmt: skip
    started = "2022-07-13 15:19:43,891\tSUCC scripts.py:758 -- Ray runtime started."
    assert "rendezvous-failure" not in ids(diagnose(rules, [unable, started]))
    assert top(diagnose(rules, [unable]), "rendezvous-failure").severity == "error"


def test_pmix_component_box_before_a_long_run_is_noise_beside_what_ended_it(rules):
    box = [
        "A requested component was not found, or was unable to be opened.  This",
        "means that this component is either not installed or is unable to be",
        "used on your system (e.g., sometimes this means that shared libraries",
        "that the component requires are unable to be found/loaded).  Note that",
        "PMIx stopped checking at the first component that it did not find.",
        "",
        "Host:      gilbreth-h014.rcac.purdue.edu",
        "Framework: psec",
        "Component: munge",
    ]
    steps = [f"| step       | {n}     |" for n in range(60)]
    limit = "slurmstepd: error: *** JOB 10377083 ON gilbreth-h014 CANCELLED AT 2026-03-05T20:24:06 DUE TO TIME LIMIT ***"
    report = diagnose(rules, box + steps + [limit])
    top(report, "job-time-limit")
    assert found(report, "pmix-runtime-error").severity == "info"
    # The box with the job's end right after it: PMIx may be what stopped the tasks.
    assert found(diagnose(rules, box + [limit]), "pmix-runtime-error").severity != "info"


def test_a_store_lost_after_a_process_raised_is_that_failures_consequence(rules):
    raised = [
        "Traceback (most recent call last):",
        '  File "train.py", line 88, in <module>',
        'wandb.errors.errors.CommError: Error uploading run: returned error 401: {"errors":[{"message":"user is not logged in"}]}',
    ]
    report = diagnose(rules, raised + [SHOULD_DUMP, STORE_SOCKET])
    assert "rendezvous-failure" not in ids(report)
    assert "CommError" in top(report, "unexplained-failure").detail
    # The same store lost with nothing failing before it stays the rendezvous finding.
    assert "rendezvous-failure" in ids(diagnose(rules, [STORE_SOCKET, STORE_CLOSED] + raised))


def test_lightnings_srun_hint_is_noise_when_every_member_it_started_joined(rules):
    hint = ("PossibleUserWarning: The `srun` command is available on your system but is not used. HINT: If your "
            "intention is to run Lightning on SLURM, prepend your python command with `srun` like so: srun python train.py")  # fmt: skip
    members = [f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/4" for r in range(4)]
    assert "world-size-mismatch" not in ids(diagnose(rules, [hint] + members))
    assert found(diagnose(rules, [hint] + members[:1]), "world-size-mismatch").severity == "warning"


def test_other_agents_losing_the_store_after_hydra_rejected_an_override_follow_that_failure(rules):
    hydra = [
        "Ambiguous value for argument 'model.data.splits_string=980,10,10'",
        "1. To use it as a list, use key=[value1,value2]",
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
    ]
    lost = [
        "W0207 17:32:12.743000 140005768510336 torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1218] The node "
        "'nid002964-hsn0_1900317_0' has failed to shutdown the rendezvous 'gpt_350m' due to an error of type "
        "RendezvousConnectionError.",
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. "
        "See inner exception for details.",
    ]
    report = diagnose(rules, hydra + lost)
    assert "rendezvous-failure" not in ids(report) and report.findings[0].id == "unexplained-failure"
    # The store lost with nothing failing before it stays the rendezvous finding.
    assert diagnose(rules, lost + hydra).findings[0].id == "rendezvous-failure"


def test_rank_0s_store_timing_out_in_pytorch_2_2s_words_is_the_same_launch_layout(rules):
    # PyTorch 2.2 renamed the store's "clients" to "workers" (pytorch#111805).
    for who in ("clients", "workers"):
        line = f"torch.distributed.DistStoreError: Timed out after 6 seconds waiting for {who}. 1/2 {who} joined."
        finding = diagnose(rules, [line]).findings[0]
        assert finding.id == "world-size-mismatch" and "only rank 0 reached its store" in finding.detail


def test_an_engine_built_for_another_world_than_mpirun_started_is_a_layout_mismatch(rules):
    for line in (
        "AssertionError: Engine world size (2 * 1) != Runtime world size (1)",
        "[TensorRT-LLM][ERROR] Assertion failed: With communicationMode kLEADER, MPI worldSize is expected to be equal "
        "to tp*pp when participantIds are not specified",
    ):
        finding = diagnose(rules, [line]).findings[0]
        assert finding.id == "world-size-mismatch" and finding.confidence > 0.5, line


def test_paddle_given_a_gpu_beyond_the_ones_it_sees_is_more_processes_than_gpus(rules):
    line = "E0808 11:06:01.541851 1538946 pybind.cc:1584] Invalid CUDAPlace(2), must inside [0, 2), because GPU number on your machine is 2"
    finding = diagnose(rules, [line]).findings[0]
    assert finding.id == "world-size-mismatch" and "GPU 2 where it sees 2 GPUs" in finding.detail


def test_a_peer_whose_pml_arrives_empty_is_pmix_losing_the_modex_data(rules):
    # ompi#12475: PMIx 5.0.2's shared-memory store handed Open MPI an empty string for the peer's choice.
    line = "[cn10:89501] [[4419,0],1] selected pml ob1, but peer [[4419,0],0] on cn09 selected pml "
    finding = found(diagnose(rules, [line]), "pmix-runtime-error")
    assert "PMIX_MCA_gds=hash" in finding.detail and "cn09" in finding.detail
    # Two builds that chose different transports say which: that is no PMIx fault.
    mismatch = "[cn10:89501] [[4419,0],1] selected pml ob1, but peer [[4419,0],0] on cn09 selected pml ucx"
    assert "pmix-runtime-error" not in ids(diagnose(rules, [mismatch]))


def test_lightning_stuck_at_its_first_member_until_cancelled_is_a_layout_that_never_started_the_rest(rules):
    # torchmetrics#2300's shape: --ntasks-per-node=96 on a 6-GPU node; the job hung at init and was cancelled.
    lines = [
        "[rank: 0] Global seed set to 42",
        "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/96",
        "slurmstepd: error: *** JOB 168885 ON scn67-10g CANCELLED AT 2023-08-31T18:04:42 ***",
        "Running on 1 nodes.",
    ]
    finding = top(diagnose(rules, lines), "world-size-mismatch")
    assert "1 of 96 members" in finding.detail and "cancelled" in finding.detail
    # A run that trained on after the announcement and was then cancelled is only a cancel.
    trained = lines[:2] + ["Epoch 3: 100%|##########| 500/500 [01:02<00:00, loss=0.21]"] + lines[2:]
    assert "world-size-mismatch" not in ids(diagnose(rules, trained))
