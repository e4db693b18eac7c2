"""The cause-id catalogue: a public contract (JSON ``id``). Ids never change meaning once released."""

from __future__ import annotations

SEVERITIES = ("info", "warning", "error", "critical")
# How every output marks a severity (terminal, Markdown, chat); "ok" for a report with no finding.
SEVERITY_MARK = {"critical": "‼", "error": "✖", "warning": "▲", "info": "ℹ", "ok": "✔"}
ROLES = ("root", "symptom", "advice")

# Each heading names the module of diag/diagnosis/analyzers/ where the ids' analyzers live.
CAUSE_IDS: frozenset[str] = frozenset(
    {
        # transport.py: fabric and NCCL transport
        "nccl-tcp-fallback", "ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong",
        "nccl-ib-disabled", "nccl-socket-ifname", "nccl-net-plugin", "roce-gid-index", "gdr-disabled",
        "shm-too-small",
        # nodes.py: differences and faults between nodes
        "ib-hca-mismatch-nodes", "ib-link-fault", "nccl-version-mismatch", "nccl-duplicate-gpu",
        # collectives.py
        "nccl-timeout", "busbw-low", "nccl-debug-verbose",
        # launch.py: PMIx, rendezvous
        "pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error", "rendezvous-failure", "port-in-use",
        "world-size-mismatch",
        # storage.py: containers and storage
        "node-local-path", "shared-storage-missing", "container-import-failure", "container-runtime-error",
        # job.py: the job's fate (job-cancelled is this project's addition: a plain scancel, no failure)
        "job-time-limit", "job-oom", "node-failure", "preempted", "job-cancelled", "unexplained-failure",
        # gpu.py
        "gpu-xid", "cuda-oom",
    }
)  # fmt: skip

# Ids of rules a user or site writes must not collide with the catalogue: they carry this prefix.
CUSTOM_ID_PREFIX = "x-"


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
