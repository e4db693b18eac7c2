"""The cause-id catalogue: a public contract (JSON ``id``). Ids never change meaning once released."""

from __future__ import annotations

SEVERITIES = ("info", "warning", "error", "critical")
# How every output marks a severity (terminal, Markdown, chat); "ok" for a report with no finding.
SEVERITY_MARK = {"critical": "‼", "error": "✖", "warning": "▲", "info": "ℹ", "ok": "✔"}
ROLES = ("root", "symptom", "advice")

# Each heading names the module of diag/diagnosis/analyzers/ where the ids' analyzers live.
CAUSE_IDS: frozenset[str] = frozenset(
    {
        # transport/ (a module per cause): fabric and NCCL transport
        "nccl-tcp-fallback", "ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong",
        "nccl-ib-disabled", "nccl-socket-ifname", "nccl-net-plugin", "roce-gid-index", "gdr-disabled",
        "shm-too-small",
        # nodes.py: differences and faults between nodes
        "ib-hca-mismatch-nodes", "ib-link-fault", "nccl-version-mismatch", "nccl-duplicate-gpu",
        # collectives/ (a module per cause: timeout, with ras and waits; busbw; verbose)
        "nccl-timeout", "busbw-low", "nccl-debug-verbose",
        # launch/ (a module per sub-family: pmix, rendezvous, world_size): PMIx, rendezvous, world size
        "pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error", "rendezvous-failure", "port-in-use",
        "world-size-mismatch",
        # storage/ (a module per cause): containers and storage
        "node-local-path", "shared-storage-missing", "container-import-failure", "container-runtime-error",
        # job/ (a module per sub-family: time_limit, oom, node_failure, preempted, unexplained): the job's fate
        # (job-cancelled is this project's addition: a plain scancel, no failure)
        "job-time-limit", "job-oom", "node-failure", "preempted", "job-cancelled", "unexplained-failure",
        # gpu.py
        "gpu-xid", "cuda-oom",
    }
)  # fmt: skip

# The families of the catalogue for follow mode (fabric: transport, nodes, collectives; launch; container:
# storage and containers; job: the job's fate and GPUs). ``slurmdiag follow`` alerts while a job runs on
# the root causes of the families whose failures show early and do not heal (a rule's ``follow:``
# overrides); the job's fate (time limit, OOM, node failure) is judged when it has ended.
FAMILIES: dict[str, tuple[str, ...]] = {
    "fabric": (
        "nccl-tcp-fallback", "ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong",
        "ib-hca-mismatch-nodes", "nccl-ib-disabled", "nccl-socket-ifname", "nccl-net-plugin", "roce-gid-index",
        "ib-link-fault", "gdr-disabled", "shm-too-small", "nccl-version-mismatch", "nccl-duplicate-gpu",
        "nccl-timeout", "busbw-low", "nccl-debug-verbose",
    ),
    "launch": (
        "pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error", "rendezvous-failure", "port-in-use",
        "world-size-mismatch",
    ),
    "container": ("node-local-path", "shared-storage-missing", "container-import-failure", "container-runtime-error"),
    "job": (
        "job-time-limit", "job-oom", "node-failure", "preempted", "job-cancelled", "gpu-xid", "cuda-oom",
        "unexplained-failure",
    ),
}  # fmt: skip
FAMILY_OF: dict[str, str] = {cid: fam for fam, ids in FAMILIES.items() for cid in ids}
EARLY_FAMILIES = ("fabric", "launch", "container")
assert set(FAMILY_OF) == CAUSE_IDS

# Ids of rules a user or site writes must not collide with the catalogue: they carry this prefix.
CUSTOM_ID_PREFIX = "x-"


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


def alerts_while_running(rule_id: str, role: str, follow: bool | None) -> bool:
    """Whether ``slurmdiag follow`` may alert on this rule before the job ends: the rule's own
    ``follow:`` when it says, else the roots of the early families."""
    if follow is not None:
        return follow
    return role == "root" and FAMILY_OF.get(rule_id) in EARLY_FAMILIES
