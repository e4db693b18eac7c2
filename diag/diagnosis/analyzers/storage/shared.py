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
# Errors that only a mount which is gone returns for a path: ENOTCONN (the FUSE daemon behind it has
# exited) and ESHUTDOWN (a Lustre client evicted). A local disk never says them, so they show the path
# is on shared storage even where its name (a per-user cache under /home/<user>/.cache) reads as one
# node's own. ESTALE is not among them: an NFS client says it too when another client deletes a file
# this one holds open (datasets' and filelock's lock files, a Triton cache two nodes write at once), a
# race in the program rather than a broken mount.
_MOUNT_GONE = ("Transport endpoint is not connected", "Cannot send after transport endpoint shutdown")

_PATH_RE = re.compile(r"""(/[^\s'"`:,;()]+)""")
# ESHUTDOWN from a file call (coreutils' "cannot access X", Python's "[Errno 108] ...: 'X'"): a socket says
# it too, so only a named file makes it the evicted Lustre client's, whatever the path (relative ones too).
_FILE_CALL_SHUTDOWN = re.compile(
    r"""cannot (?:access|create directory|create|open|stat|remove|read|write)(?: [\w ]+)? [`'"]?(?P<path>[^`'"\s:]+)"""
    r"""[`'"]?: Cannot send after transport endpoint shutdown"""
    r"""|\[Errno 108\] Cannot send after transport endpoint shutdown: '(?P<py>[^']+)'"""
)


def _shared_path(text: str) -> str | None:
    for path in _PATH_RE.findall(text):
        if path.startswith(SHARED_PREFIXES) and not path.startswith(NODE_LOCAL_PREFIXES):
            return path
    return None


# node-local-path's signatures for a checkpoint or dataset library saying, in its own words, that a
# path is missing (the same meaning as ENOENT's "No such file or directory"). On a shared file system
# they are this rule's to weigh: missing on some nodes only, or in one process of an excerpt.
FRAMEWORK_MISSING = (
    "mcore_missing",
    "mcore_not_dist",
    "ckpt_at_not_found",
    "ckpt_path_missing",
    "accelerate_missing",
    "datasets_dir",
    "datasets_find",
    "datasets_no_info",
    "datasets_no_data",
    "datasets_local_file",
    "composer_missing",
    "composer_not_found",
    "nemo_file_missing",
    "nemo_cannot_resume",
    "lightning_missing",
    "lightning_invalid",
    "ds_invalid",
    "ds_no_files",
    "ds_resume_failed",
    "peft_missing",
    "megatron_idx",
    "container_src_missing",
    "hub_repo_id",
    "hub_invalid_id",
    "hub_no_path",
    "hub_cannot_load",
    "vllm_no_dir",
    "hub_not_local",
    "hub_not_dir",
    "hub_no_file",
    "no_valid_checkpoint",
    "ds_shard_count",
    "exc_missing_path",
    "exc_missing_path_other",
)
_LOADS = ("loading_ckpt",)
_EMPTY_RESUMES = ("resume_latest", "resume_tracker", "resume_tracker_verl", "resume_scratch", "resume_fresh")


def _mount_gone(text: str, path: str, ctx: Context) -> bool:
    """Whether a mount that is gone answered for ``path``, a path whose name alone reads as node-local
    (a cache under /home/<user>/.cache): the error outweighs the name. /tmp, /dev/shm and local scratch
    stay node-local, and a run that went on reports no storage fault of its own."""
    if path.startswith(NODE_LOCAL_PREFIXES) or path in ("/tmp", "/dev/shm") or not ctx.job_failed():
        return False
    return any(word in text for word in _MOUNT_GONE)


def _framework_absent(ctx: Context) -> list[tuple]:
    """(evidence, path) for frameworks' own "not found" lines naming a path on a shared file system."""
    local = ctx.rules.get("node-local-path")
    if local is None or not ctx.job_failed():
        return []  # libraries print some of these as notices before creating the directory
    out = []
    for ev, g in ctx.samples(local, list(FRAMEWORK_MISSING)):
        path = (g.get("path") or g.get("path2") or "").strip("'\"`").rstrip(".,;:)")
        if path.startswith(SHARED_FS_PREFIXES) and not node_local(path):
            out.append((ev, path))
    return out


def resume_split(ctx: Context) -> list[tuple]:
    """(evidence, loaded path) where one rank or node found no checkpoint to resume from (DeepSpeed's
    missing 'latest', Megatron's tracker file, NeMo's empty checkpoint_dir, torchtitan's fresh start)
    while another rank or node of the same job loaded one from the same directory: the two do not see
    the same files. Harmless first-run notices stay harmless when every rank agrees."""
    local = ctx.rules.get("node-local-path")
    if local is None:
        return []
    loads = [(ev, g.get("path", "")) for ev, g in ctx.samples(local, list(_LOADS)) if g.get("path")]
    if not loads:
        return []
    out = []
    for ev, g in ctx.samples(local, list(_EMPTY_RESUMES)):
        where = (ctx.host_for(ev), ev.rank, ev.task)
        empty_dir = (g.get("path") or "").rstrip("/")
        if empty_dir.endswith(("/latest", "/latest_universal", "/latest_checkpointed_iteration.txt")):
            empty_dir = empty_dir.rsplit("/", 1)[0]
        for lev, path in loads:
            other = (ctx.host_for(lev), lev.rank, lev.task)
            if where == other or where == (None, None, None) or other == (None, None, None):
                continue  # the same process, or lines that name neither node, rank nor task
            if where[0] and other[0] and where[0] == other[0]:
                continue  # two ranks of one node see the same disk
            if empty_dir and path.rstrip("/") != empty_dir and not path.startswith(empty_dir + "/"):
                continue
            out.append((ev, path))
            break
    return out



def _norm(path: str) -> str:
    """A path with doubled slashes folded (pastes and string joins leave them) and no trailing slash."""
    return re.sub(r"/{2,}", "/", path.strip("'\"`").rstrip(".,;:)")).rstrip("/")


def removed_by_job(ctx: Context, ev, path: str) -> bool:
    """Whether the job itself deleted ``path`` before this line said it is missing: the miss came from
    inside shutil.rmtree (another process removed the file first), or an earlier line shows the job
    removing the path or a directory above it (checkpoint rotation, a cleanup that every rank runs).
    Then the path was there and the job took it away: not storage that one node lacks."""
    local = ctx.rules.get("node-local-path")
    if local is None or not path:
        return False
    if any(f.path == ev.path and 0 < ev.line - f.line <= 8 for f, _ in ctx.samples(local, ["rmtree_frame"])):
        return True
    target = _norm(path) + "/"
    for rev, g in ctx.samples(local, ["removing", "deleting"]):
        gone = _norm(g.get("path", ""))
        if rev.order > ev.order or len(gone) < 2:
            continue
        if target.startswith(gone + "/"):
            return True
        # A paste that redacted the prefix differently on each line: the same step-named directory
        # (step_15, checkpoint-500, global_step10) removed and then missing.
        base = gone.rsplit("/", 1)[-1]
        if len(base) >= 4 and any(ch.isdigit() for ch in base) and f"/{base}/" in target:
            return True
    return False


def made_by_makedirs(ctx: Context, ev) -> bool:
    """Whether this missing-path line ends a traceback through os.makedirs (within a few lines)."""
    local = ctx.rules.get("node-local-path")
    if local is None:
        return False
    return any(f.path == ev.path and 0 < ev.line - f.line <= 4 for f, _ in ctx.samples(local, ["makedirs_frame"]))


def _dangling_parents(ctx: Context) -> list[tuple]:
    """(evidence, path) where os.makedirs failed with ENOENT. makedirs creates every missing parent, so
    ENOENT from it means a parent exists as a name whose target does not: a symbolic link (or an
    automount point) to storage this node lacks."""
    local = ctx.rules.get("node-local-path")
    if local is None or not ctx.job_failed():
        return []
    out = []
    for ev, g in ctx.samples(local, ["missing"]):
        path = _norm(g.get("path", ""))
        if path and not node_local(path) and made_by_makedirs(ctx, ev):
            out.append((ev, path))
    return out


def shared_storage(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = [n for n, _ in ctx.stats(rule)]
    framework = [(ev, p) for ev, p in _framework_absent(ctx) if not removed_by_job(ctx, ev, p)]
    split = [(ev, p) for ev, p in resume_split(ctx) if p.startswith(SHARED_FS_PREFIXES)]
    dangling = _dangling_parents(ctx)
    if not chosen and not framework and not split and not dangling:
        return []
    broken, absent = [], list(framework)  # (evidence, path)
    for ev, g in ctx.samples(rule, chosen):
        path = g.get("path") if g.get("path", "").startswith(SHARED_PREFIXES) else _shared_path(ev.text)
        if path is None and g.get("why"):
            export = g.get("server") or g.get("export")
            path = f"the network file system {export}" if export else "a network file system"
        if path is None and g.get("server"):
            path = f"the NFS export of {g['server']}"
        elif path is None and any(word in ev.text for word in _FS_CLIENT_WORDS):
            path = "the Lustre file system"  # the client's own message names a target, not a path
        elif path is None and (m := _FILE_CALL_SHUTDOWN.search(ev.text)):
            path = m["path"] or m["py"]
        if path is None or (node_local(path) and not _mount_gone(ev.text, path, ctx)):
            continue  # a per-node cache under /home is node-local-path's, unless the error says otherwise
        if removed_by_job(ctx, ev, path):
            continue  # the job deleted it itself (every rank rotating the same checkpoints)
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
    chosen_pairs = broken + (absent if partial else []) + split
    assumed: list[str] = []
    if not chosen_pairs:
        chosen_pairs, assumed = _missing_in_an_excerpt(ctx, absent)
    if not chosen_pairs and dangling:
        chosen_pairs = dangling
        assumed = ["the link's target is storage some nodes lack: the excerpt shows the node that failed"]
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
    if split:
        kinds.append("one rank loaded the checkpoint from it while another found nothing there: that node does not see it")
    if chosen_pairs is dangling:
        kinds.append(
            "os.makedirs could not create it, though it creates every missing parent: a parent is a symbolic link "
            "(or automount point) whose target this node does not have; make it resolve to a path that exists on "
            "every node"
        )
    elif assumed:
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
            confidence=0.45 if chosen_pairs is dangling else 0.4 if assumed else (0.6 if client_only else None),
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
    framework = {id(ev) for ev, _ in _framework_absent(ctx)}
    pairs = [
        (ev, p)
        for ev, p in absent
        if p.startswith(SHARED_FS_PREFIXES)
        and ("No such file or directory" in ev.text or "chdir" in ev.text or id(ev) in framework)
    ]
    where = {(ctx.host_for(ev), ev.rank) for ev, _ in pairs}
    if not pairs or len(where) > 1 or any(ev.rank == 0 for ev, _ in pairs):
        return [], []  # several processes, or rank 0 itself, lack it: a wrong path, not one node's mount
    return pairs, ["the path exists on the job's other nodes: the excerpt shows one process"]
