"""The cause-id catalogue: a public contract (JSON ``id``). Ids never change meaning once released."""

from __future__ import annotations

SEVERITIES = ("info", "warning", "error", "critical")
# How every output marks a severity (terminal, Markdown, chat); "ok" for a report with no finding.
SEVERITY_MARK = {"critical": "‼", "error": "✖", "warning": "▲", "info": "ℹ", "ok": "✔"}
ROLES = ("root", "symptom", "advice")

CAUSE_IDS: frozenset[str] = frozenset(
    {
        # fabric and NCCL transport
        "nccl-tcp-fallback", "ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong",
        "ib-hca-mismatch-nodes", "nccl-ib-disabled", "nccl-socket-ifname", "nccl-net-plugin", "roce-gid-index",
        "ib-link-fault", "gdr-disabled", "shm-too-small", "nccl-version-mismatch", "nccl-duplicate-gpu",
        "nccl-timeout", "busbw-low", "nccl-debug-verbose",
        # launch, PMIx, rendezvous
        "pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error", "rendezvous-failure", "port-in-use",
        "world-size-mismatch",
        # containers and storage
        "node-local-path", "shared-storage-missing", "container-import-failure", "container-runtime-error",
        # job and node
        "job-time-limit", "job-oom", "node-failure", "preempted", "gpu-xid", "cuda-oom", "unexplained-failure",
    }
)  # fmt: skip

# Ids of rules a user or site writes must not collide with the catalogue: they carry this prefix.
CUSTOM_ID_PREFIX = "x-"


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
