"""Every lint check by name: the one table a rule's ``lint: check:`` refers to."""

from __future__ import annotations

from collections.abc import Callable

from diag.lint import container, fabric, job, launch, storage
from diag.lint.context import Hit, LintContext

Check = Callable[[LintContext], "list[Hit]"]

CHECKS: dict[str, Check] = {
    # fabric
    "container_ib_mounts": fabric.container_ib_mounts,
    "socket_ifname": fabric.socket_ifname,
    "ib_disabled": fabric.ib_disabled,
    "ib_hca": fabric.ib_hca,
    # launch
    "pmix_wiring": launch.pmix_wiring,
    "mpi_plugin": launch.mpi_plugin,
    "master_addr": launch.master_addr,
    "master_port": launch.master_port,
    "world_size": launch.world_size,
    # containers and storage
    "image_cut_at_hash": container.image_cut_at_hash,
    "node_local_paths": storage.node_local_paths,
    # job
    "time_limit_hook": job.time_limit_hook,
    "nccl_debug_volume": job.nccl_debug_volume,
}


def check_names(rules) -> list[str]:
    """Problems with the rules' ``lint:`` blocks: checks that do not exist (one line each)."""
    return [f"{r.path}: rule '{r.id}': field 'lint.check': no lint check named {r.lint.check!r}"
            for r in rules if r.lint is not None and r.lint.check not in CHECKS]  # fmt: skip
