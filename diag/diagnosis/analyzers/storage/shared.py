"""A shared file system missing or broken on some nodes: shared-storage-missing."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import NODE_LOCAL_PREFIXES, node_local
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding

# Names that only a shared file system carries; /home, /data, /mnt, /scratch may be either.
SHARED_FS_PREFIXES = (
    "/lustre",
    "/gpfs",
    "/nfs",
    "/fsx",
    "/weka",
    "/pfs",
    "/sfs",
    "/shared",
    "/beegfs",
    "/cephfs",
    "/vast",
    "/efs",
    "/net/",
)
# Where shared storage usually lives: those names, and ones that may be shared or a node's own disk.
SHARED_PREFIXES = SHARED_FS_PREFIXES + (
    "/home/", "/scratch", "/projects", "/project/", "/work/", "/data/", "/datasets", "/mnt/", "/groups",
)


# Messages that mean the mount itself is broken (not a path that is missing).
_BROKEN_WORDS = (
    "Stale file handle",
    "Stale NFS file handle",  # glibc before 2.16
    "Transport endpoint is not connected",
    "Input/output error",
    "Cannot send after transport endpoint shutdown",
    "nfs: server",
    "LustreError",
    "Lustre:",
)
_FS_CLIENT_WORDS = ("LustreError", "Lustre:")

_PATH_RE = re.compile(r"""(/[^\s'"`:,;()]+)""")


def _shared_path(text: str) -> str | None:
    for path in _PATH_RE.findall(text):
        if path.startswith(SHARED_PREFIXES) and not path.startswith(NODE_LOCAL_PREFIXES):
            return path
    return None


def shared_storage(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = [n for n, _ in ctx.stats(rule)]
    if not chosen:
        return []
    broken, absent = [], []  # (evidence, path)
    for ev, g in ctx.samples(rule, chosen):
        path = g.get("path") if g.get("path", "").startswith(SHARED_PREFIXES) else _shared_path(ev.text)
        if path is None and g.get("why"):
            export = g.get("server") or g.get("export")
            path = f"the network file system {export}" if export else "a network file system"
        if path is None and g.get("server"):
            path = f"the NFS export of {g['server']}"
        elif path is None and any(word in ev.text for word in _FS_CLIENT_WORDS):
            path = "the Lustre file system"  # the client's own message names a target, not a path
        if path is None or node_local(path):
            continue  # a per-node cache under /home is node-local-path's
        text = ev.text
        if g.get("why") or any(word in text for word in _BROKEN_WORDS):  # "why": the mount itself failed
            broken.append((ev, path))
        else:
            absent.append((ev, path))
    facts = ctx.facts
    known = set(facts.hosts) | facts.slurm_task_hosts
    failing = {h for ev, _ in absent if (h := ctx.host_for(ev))}
    # Missing or refused on some nodes while the job has others: a mount problem, not a wrong path.
    partial = bool(failing) and facts.multi_node() and len(failing) < max(facts.node_count(), len(known))
    chosen_pairs = broken + (absent if partial else [])
    assumed: list[str] = []
    if not chosen_pairs:
        chosen_pairs, assumed = _missing_in_an_excerpt(ctx, absent)
    if not chosen_pairs:
        return []
    hosts = sorted({h for ev, _ in chosen_pairs if (h := ctx.host_for(ev))}, key=natural_key)
    paths = list(dict.fromkeys(p for _, p in chosen_pairs))
    kinds = []
    if broken:
        texts = " ".join(ev.text for ev, _ in broken)
        for needle, meaning in (
            ("file handle", "a stale NFS handle (the export or server was restarted)"),
            ("Transport endpoint is not connected", "a dead FUSE mount (the client process is gone)"),
            ("Input/output error", "I/O errors (client evicted or a storage target down)"),
            ("Cannot send after transport endpoint shutdown", "the Lustre client was evicted (errno 108)"),
            ("not responding", "the NFS server stopped answering"),
            ("evicted", "the Lustre client was evicted by its servers"),
            ("was lost", "the connection to a Lustre server was lost"),
        ):
            if needle in texts:
                kinds.append(meaning)
    if whys := ctx.captures(rule, "why", ["mount_failed", "mount_refused", "kubelet_mount"]):
        kinds.append(f"the node could not mount it ({whys[0][:120]})")
    if partial and absent:
        others = sorted(known - failing, key=natural_key) if known - failing else []
        seen = f", while {hosts_text(others)} read it" if others else ""
        kinds.append(f"missing or refused on {hosts_text(sorted(failing, key=natural_key))} only{seen}")
    if assumed:
        kinds.append("missing where this excerpt's process ran, on a file system every node should mount")
    # Only the client's own complaint (NFS not responding, a Lustre eviction), no call that failed:
    # often transient, so less certain than a path the job could not use.
    client_only = all(not p.startswith("/") for _, p in chosen_pairs) and not whys  # a failed mount is no passing complaint
    detail = f"{', '.join(paths[:3])}: {'; '.join(kinds)}"
    evidence = pick_evidence(ev for ev, _ in chosen_pairs)
    return [
        ctx.make_finding(
            rule,
            chosen,
            detail=detail + ".",
            hosts=hosts,
            evidence=evidence,
            values={"path": paths[0]},
            confidence=0.4 if assumed else (0.6 if client_only else None),
            severity="warning" if client_only and not ctx.job_failed() else None,
            assumed=assumed,
        )
    ]


def _missing_in_an_excerpt(ctx: Context, absent: list) -> tuple[list, list[str]]:
    """A path on a named shared file system missing for one process of a failed job whose node count
    the logs do not give: the mount may be missing on that node. Only a known node count (one node,
    or every node missing it: a wrong path) says otherwise."""
    if ctx.facts.nodes_known() is not None or not ctx.job_failed():
        return [], []
    pairs = [
        (ev, p)
        for ev, p in absent
        if p.startswith(SHARED_FS_PREFIXES) and ("No such file or directory" in ev.text or "chdir" in ev.text)
    ]
    where = {(ctx.host_for(ev), ev.rank) for ev, _ in pairs}
    if not pairs or len(where) > 1 or any(ev.rank == 0 for ev, _ in pairs):
        return [], []  # several processes, or rank 0 itself, lack it: a wrong path, not one node's mount
    return pairs, ["the path exists on the job's other nodes: the excerpt shows one process"]
