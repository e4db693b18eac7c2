"""The analyzers: correlation a rule's YAML cannot express, in one explicit table.

A rule names one with ``condition.analyzer``; it receives the rule and the diagnosis
:class:`~diag.diagnosis.context.Context` and returns its findings (usually zero or one).
Analyzers are grouped by cause family, the headings of :mod:`diag.catalog.causes`; to add one,
write the function in its family's module and add a line here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from diag.catalog.model import Rule, RuleError
from diag.diagnosis.analyzers import gpu, nodes
from diag.diagnosis.analyzers.collectives import busbw, timeout, verbose
from diag.diagnosis.analyzers.job import node_failure, oom, preempted, time_limit, unexplained
from diag.diagnosis.analyzers.launch import pmix, rendezvous, world_size
from diag.diagnosis.analyzers.storage import containers, nodelocal, shared
from diag.diagnosis.analyzers.transport import devices, fallback, gdr, hca, plugin, roce, shm, sockets
from diag.diagnosis.context import Context
from diag.report import Finding

Analyzer = Callable[[Rule, Context], list[Finding]]

ANALYZERS: dict[str, Analyzer] = {
    # transport/
    "tcp_fallback": fallback.tcp_fallback,  # nccl-tcp-fallback
    "ib_disabled": fallback.ib_disabled,  # nccl-ib-disabled
    "verbs_missing": devices.verbs_missing,  # ib-verbs-library-missing
    "ib_expected": devices.ib_expected,  # (site rules written before verbs_missing)
    "ib_not_mounted": devices.ib_not_mounted,  # ib-devices-not-mounted
    "ib_hca_wrong": hca.ib_hca_wrong,  # nccl-ib-hca-wrong
    "socket_ifname": sockets.socket_ifname,  # nccl-socket-ifname
    "net_plugin": plugin.net_plugin,  # nccl-net-plugin
    "roce_gid": roce.roce_gid,  # roce-gid-index
    "gdr_disabled": gdr.gdr_disabled,  # gdr-disabled
    "shm_too_small_forms": shm.shm_too_small_forms,  # shm-too-small
    "shm_too_small": shm.shm_too_small,  # (site rules written before shm_too_small_forms: NCCL's forms only)
    # nodes.py
    "hca_mismatch": nodes.hca_mismatch,  # ib-hca-mismatch-nodes
    "link_fault": nodes.link_fault,  # ib-link-fault
    "duplicate_gpu": nodes.duplicate_gpu,  # nccl-duplicate-gpu
    "version_mismatch": nodes.version_mismatch,  # nccl-version-mismatch
    # collectives/
    "busbw_low": busbw.busbw_low,  # busbw-low
    "debug_verbose": verbose.debug_verbose,  # nccl-debug-verbose
    "nccl_timeout": timeout.nccl_timeout,  # nccl-timeout
    # launch/
    "pmix_not_used": pmix.pmix_not_used,  # pmix-not-used
    "pmix_runtime": pmix.pmix_runtime,  # pmix-runtime-error
    "port_in_use": rendezvous.port_in_use,  # port-in-use
    "rendezvous": rendezvous.rendezvous,  # rendezvous-failure
    "world_size": world_size.world_size,  # world-size-mismatch
    # storage/
    "container_import": containers.container_import,  # container-import-failure
    "container_runtime": containers.container_runtime,  # container-runtime-error
    "node_local_path": nodelocal.node_local_path,  # node-local-path
    "shared_storage": shared.shared_storage,  # shared-storage-missing
    # job/
    "job_oom": oom.job_oom,  # job-oom
    "job_time_limit": time_limit.job_time_limit,  # job-time-limit
    "node_failure": node_failure.node_failure,  # node-failure
    "preempted": preempted.preempted,  # preempted
    "job_cancelled": preempted.job_cancelled,  # job-cancelled
    "unexplained_failure": unexplained.unexplained_failure,  # unexplained-failure
    # gpu.py
    "cuda_oom": gpu.cuda_oom,  # cuda-oom
    "gpu_xid": gpu.gpu_xid,  # gpu-xid
}


def check(rules: Iterable[Rule]) -> None:
    """Every ``condition.analyzer`` names an analyzer of the table: a :class:`RuleError` naming the file otherwise."""
    for rule in rules:
        name = rule.condition.analyzer
        if name is not None and name not in ANALYZERS:
            raise RuleError(
                rule.path, rule.id, "condition.analyzer", f"unknown analyzer {name!r}; known: {', '.join(ANALYZERS)}"
            )
