"""Ranking a root and its cascade (diag/diagnosis/evaluate.py rank, analyzers/common.py): real jobs print
the root on one host and the cascade on all the others, in whatever order their output was merged. The
root comes first on every order; the timeout is the answer only where nothing else failed."""

from __future__ import annotations

from itertools import permutations
from types import SimpleNamespace

import pytest

from diag.catalog.model import Rule
from diag.diagnosis.evaluate import rank
from diag.evidence import Evidence
from diag.report import Finding
from tests.diagnosis.logs import diagnose, found, ids, top

# What the surviving ranks and the launchers print once a peer is gone (PyTorch 2.5, Slurm, Open MPI).
PEER_GONE = [
    "[rank3]:[E1130 03:14:09.118000000 2703 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
    "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a "
    "network error, NCCL version 2.21.5",
    "[rank4]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:311, "
    "remote process exited or there was a network error, NCCL version 2.21.5",
    "node019:5512:5601 [1] misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from 10.12.0.18<38211> "
    "failed : Connection reset by peer",
]
LAUNCHERS = [
    "srun: error: node017: tasks 0-7: Killed",
    "srun: launch/slurm: _step_signal: Terminating StepId=4812733.0",
    "slurmstepd: error: *** STEP 4812733.0 ON node019 CANCELLED AT 2026-11-30T03:14:12 ***",
]
WATCHDOGS = [
    f"[rank{r}]:[E1130 03:44:09.118000000 270{r} ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=2083, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
    "600031 milliseconds before timing out."
    for r in (0, 1, 8)
]
# The others wait in the rendezvous for a node that never started its ranks.
WAITING = [
    "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to "
    "(node017, 29500).",
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
]


def orders(*blocks: list[str]):
    """Every order of the blocks: one host's output may land anywhere in a merged log."""
    for order in permutations(blocks):
        yield [line for block in order for line in block]


XID = [
    "Nov 30 03:14:05 node018 kernel: NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
]
PORT = [
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use"
]
CONTAINER = ["slurmstepd: error: pyxis: couldn't join user namespace: Operation not permitted"]


@pytest.mark.parametrize(
    ("cause", "root", "cascade"),
    [("gpu-xid", XID, PEER_GONE), ("port-in-use", PORT, WAITING), ("container-runtime-error", CONTAINER, WAITING)],
)
def test_the_root_leads_its_cascade_on_any_line_order(rules, cause, root, cascade):
    for lines in orders(root, cascade, LAUNCHERS):
        report = diagnose(rules, lines)
        top(report, cause)
        assert "unexplained-failure" not in ids(report), lines


def test_a_rendezvous_the_others_waited_in_is_folded_under_the_node_that_never_came(rules):
    for lines in orders(CONTAINER, WAITING):
        report = diagnose(rules, lines)
        waited = found(report, "rendezvous-failure")
        assert waited.explained_by == "container-runtime-error"
        assert top(report, "container-runtime-error").explains == ["rendezvous-failure"]


def test_a_timeout_with_only_aborted_ranks_and_launcher_lines_is_the_answer(rules):
    mpirun = [
        "--------------------------------------------------------------------------",
        "mpirun noticed that process rank 0 with PID 0 on node node017 exited on signal 6 (Aborted).",
        "--------------------------------------------------------------------------",
    ]
    for lines in orders(WATCHDOGS, ["srun: error: node017: tasks 0-7: Aborted"], mpirun):
        report = diagnose(rules, lines)
        assert top(report, "nccl-timeout").severity == "error"
        assert "unexplained-failure" not in ids(report)


def test_a_task_that_died_of_another_signal_is_no_cascade_of_the_timeout(rules):
    # SIGBUS is no watchdog's abort nor a launcher's kill: something else failed, and the timeout
    # stays beneath that failure.
    report = diagnose(rules, WATCHDOGS + ["srun: error: node017: task 3: Bus error"])
    assert report.findings[0].id != "nccl-timeout"
    assert found(report, "nccl-timeout").explained_by == report.findings[0].id


# ------------------------------------------------------------------------------------------ rank()
def _finding(fid: str, role: str, line: int, severity: str = "error") -> Finding:
    ev = Evidence(path="job.err", line=line, text="x", order=(0, line), timestamp=None)
    return Finding(fid, fid, severity, role, 0.8, "d", "r", evidence=[ev])


def _rule(*explains: str) -> Rule:
    return SimpleNamespace(explains=explains)  # type: ignore[return-value]  # rank() reads only .explains


def test_rank_folds_a_root_under_the_root_that_names_it_and_keeps_every_finding():
    a, b, c = _finding("a", "root", 30), _finding("b", "root", 10), _finding("c", "symptom", 20)
    rules = {"a": _rule("b", "c"), "b": _rule("c")}
    ordered = rank([b, c, a], rules)
    assert [f.id for f in ordered] == ["a", "b", "c"]
    assert (b.explained_by, c.explained_by, a.explains) == ("a", "a", ["b", "c"])


def test_rank_never_chains_roots_and_never_loops():
    # a explains b, b explains a: the first in order takes the other; a finding is folded at most once.
    a, b, c = _finding("a", "root", 10), _finding("b", "root", 20), _finding("c", "root", 30)
    rules = {"a": _rule("b"), "b": _rule("a", "c")}
    ordered = rank([c, b, a], rules)
    assert len(ordered) == 3
    assert sum(f.explained_by is None for f in ordered) >= 1
    for f in ordered:
        parent = next((p for p in ordered if p.id == f.explained_by), None)
        assert parent is None or parent.explained_by is None


# The store's process aborted on its own watchdog: the others then lose the store (PyTorch 2.5's TCPStore).
STORE_GONE = [
    "[W1130 03:44:13.949247853 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=77, addr=[node018]:39732, "
    "remote=[node017]:29500): failed to recv, got 0 bytes",
    "srun: error: node017: tasks 0-7: Aborted",
]


def test_store_lost_after_the_watchdog_timeout_is_the_timeout_s_consequence(rules):
    report = diagnose(rules, WATCHDOGS + STORE_GONE)
    top(report, "nccl-timeout")
    lost = found(report, "rendezvous-failure")
    assert lost.severity == "warning" and "followed a collective timeout" in lost.detail


def test_store_lost_alone_still_names_the_rendezvous(rules):
    top(diagnose(rules, STORE_GONE), "rendezvous-failure")


def test_communicator_init_timeout_is_a_collective_timeout(rules):
    lines = ["torch.distributed.DistBackendError: NCCL timeout in communicator initialization."] * 2
    report = diagnose(rules, lines + ["srun: error: node017: task 0: Exited with exit code 1"])
    assert "initialization timed out" in top(report, "nccl-timeout").detail
