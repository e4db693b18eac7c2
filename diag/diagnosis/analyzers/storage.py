"""Containers and storage: node-local paths, missing shared storage, image import and container start."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import NODE_LOCAL_PREFIXES, first_or, node_local
from diag.diagnosis.context import MULTI_NODE_ASSUMED, Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding

# Signatures whose ``path`` is a file or directory this node could not find.
_MISSING_PATHS = [
    "missing",
    "ds_no_files",
    "peft_missing",
    "no_weights",
    "hf_no_weights",
    "hf_no_index",
    "trainer_no_checkpoint",
    "ds_universal_missing",
    "megatron_idx",
    "missing_java",
    "missing_go",
    "missing_arrow",
    "missing_unquoted",
    "missing_before",
    "tf_not_found",
    "tf_not_found_status",
    "h5py_missing",
    "lightning_missing",
    "ds_invalid",
    "nemo_cannot_resume",
    "datasets_dir",
    "datasets_find",
    "datasets_script",
    "chdir",
    "chdir_other",
]
# The image's and the node's own files: missing ones are an environment problem, not storage layout.
_SYSTEM_PREFIXES = ("/etc/", "/usr/", "/sys/", "/proc/", "/dev/", "/bin/", "/sbin/", "/lib", "/var/", "/run/", "/boot/")
_INSTALL_PARTS = ("/site-packages/", "/dist-packages/", "/opt/conda/", "/miniconda", "/anaconda", "/.venv/", "/venv/")
# Wordings that shells and programs print as they go on: a sign only in a job that failed.
_SHELL_FORMS = ["missing_before", "missing_unquoted", "missing_go", "missing_java"]
# Lines the container rules own: enroot-mount's rootfs targets, pyxis' runtime directories.
_CONTAINER_WORDS = ("enroot-mount", "couldn't mkdir", "pyxis: couldn't chdir", "/enroot-data/", "/run/pyxis", "/run/enroot")
UNKNOWN_WHERE = "the file was made on another node: the excerpt does not show which ranks or nodes lack it"


def node_local_path(rule: Rule, ctx: Context) -> list[Finding]:
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    rank0_host = ctx.facts.host_of_rank.get(0)
    # (evidence, what is missing, why it is node-local, confidence, what it assumed or None)
    local: list = []
    elsewhere: list = []  # (evidence, path, confidence when unknown): missing files on storage that may be shared
    for ev, g in ctx.samples(rule, ["pyxis_name"] if not named_container_made_nowhere(ctx) else []):
        local.append((ev, f'container "{g["name"]}"', "pyxis named containers live on the node that made them", 0.85, None))
    failed = ctx.job_failed()
    shell = {ev for ev, _ in ctx.samples(rule, _SHELL_FORMS)} if not failed else set()
    for ev, g in ctx.samples(rule, _MISSING_PATHS):
        path = _clean_path(g.get("path") or g.get("pbs") or "")
        if not path or any(word in ev.text for word in _CONTAINER_WORDS):
            continue
        if ev in shell or "cannot remove" in ev.text:
            continue  # a shell's or a program's complaint in a run that went on (rm -f noise, a probe)
        if node_local(path):
            local.append((ev, path, "node-local storage", 0.85, None))
        elif not path.startswith("/"):
            if "/" in path:
                why = "a relative path, resolved in each node's own working directory"
                local.append((ev, path, why, 0.5, None))
        elif path.startswith(SHARED_FS_PREFIXES):
            continue  # a shared file system missing is shared-storage-missing
        elif path.startswith(_SYSTEM_PREFIXES) or any(part in path for part in _INSTALL_PARTS):
            continue  # the image's or the node's own files, or an installed package's: not storage layout
        else:
            # /home, /data, /mnt, ... are shared on most clusters but local disks on many cloud VMs.
            elsewhere.append((ev, path, 0.35 if path.startswith(SHARED_PREFIXES) else 0.45))
    # A path missing where rank 0 (which wrote it) runs too is a wrong path; missing only away from
    # rank 0 means it was written on rank 0's node alone; where the excerpt does not say, assume so.
    on_rank0 = {path for ev, path, _ in elsewhere if _away_from_rank0(ctx, ev, rank0_host) is False}
    saved = [_clean_path(p) for p in ctx.captures(rule, "path", ["saving", "saved"])]
    for ev, path, unknown_conf in elsewhere:
        if path in on_rank0:
            continue
        where = _saved_under(path, saved)
        if where and _saved_elsewhere(ctx, rule, ev, where):
            why = f"this job saved it ({where}) and then could not find it: it went to one node's own disk"
            local.append((ev, path, why, 0.7, None))
        elif _away_from_rank0(ctx, ev, rank0_host):
            local.append((ev, path, "missing only where rank 0 did not run, so written on rank 0's node alone", 0.6, None))
        elif ctx.job_failed():  # a file missing in a run that went on is no finding of its own
            why = "not found here, and nothing shows it on this node's storage"
            local.append((ev, path, why, unknown_conf, UNKNOWN_WHERE))
    for ev, g in ctx.samples(rule, ["tf_not_found", "tf_not_found_status"]):
        if "_temp_" in g["path"]:
            why = (
                "TensorFlow's sharded save writes each task's shard under a _temp_ directory that the task "
                "merging them must read: each task wrote to its own node's disk"
            )
            local.append((ev, _clean_path(g["path"]), why, 0.7, None))
    for ev, g in ctx.samples(rule, ["ext_so"]):
        # Only a library in a per-node cache or scratch: a system library missing is the image's problem.
        if node_local(g["path"]):
            why = "a JIT-built extension in one node's cache directory; the other nodes never built it"
            local.append((ev, g["path"], why, 0.75, None))
    for ev, g in ctx.samples(rule, ["missing_relative"]):
        if node_local(g["relpath"]):  # an unexpanded $TMPDIR / $SLURM_TMPDIR
            local.append((ev, g["relpath"], "node-local storage", 0.85, None))
        else:
            local.append((ev, g["relpath"], "a relative path, resolved in each node's own working directory", 0.6, None))
    for ev, g in ctx.samples(rule, ["ds_shard_count"]):
        if int(g["found"]) < int(g["want"]):
            why = (
                f"only {g['found']} of {g['want']} ranks' ZeRO shards are in it: each node saved its own ranks' "
                "shards to its own disk"
            )
            local.append((ev, g["path"], why, 0.8, None))
    for ev, _g in ctx.samples(rule, ["zero_missing"]):
        local.append((ev, "ZeRO checkpoint shards", "each node saved its ranks' shards to its own disk", 0.8, None))
    for ev, g in ctx.samples(rule, ["ray_storage"]):
        local.append((ev, g["path"], "Ray needs a storage path every node can read and write", 0.75, None))
    for ev, _g in ctx.samples(rule, ["cannot_see"]):
        local.append((ev, "rank 0's files", "other ranks cannot see what rank 0 wrote", 0.8, None))
    local += _framework_signs(rule, ctx)
    local += _working_dir_elsewhere(rule, ctx)
    written = [(ev, g) for ev, g in ctx.samples(rule, ["written", "written_dir"]) if node_local(g.get("path", ""))]
    if local:
        paths = list(dict.fromkeys(what for _, what, *_ in local))
        why = list(dict.fromkeys(reason for _, _, reason, *_ in local))
        best = max(c for _, _, _, c, _ in local)
        # Say what the finding assumed when its best sign rests on an assumption.
        assumed = assumed + list(dict.fromkeys(a for *_, c, a in local if a and c == best))
        evidence = pick_evidence([ev for ev, *_ in local] + [ev for ev, _ in written])
        hosts = sorted({h for ev, *_ in local if (h := ctx.host_for(ev))}, key=natural_key)
        if not hosts and any(what.startswith("container ") for _, what, *_ in local):
            # pyxis' line names no node; the tasks that then failed say which nodes lack the container.
            hosts = sorted(ctx.facts.slurm_task_hosts)
        ranks = sorted({ev.rank for ev, *_ in local if ev.rank is not None})
        job = "this job" if MULTI_NODE_ASSUMED in assumed or not ctx.facts.node_count() else f"this {ctx.facts.node_count()}-node job"
        where = hosts_text(hosts) if hosts else "other nodes"
        detail = f"{', '.join(paths[:4])} was not found on {where} of {job}: {'; '.join(why[:3])}"
        return [
            ctx.make_finding(
                rule,
                [s.name for s in rule.signatures],
                detail=detail,
                evidence=evidence,
                values={"path": ", ".join(paths[:4])},
                hosts=hosts or None,
                ranks=ranks or None,
                confidence=best,
                assumed=assumed,
            )
        ]
    resumed = _resume_found_nothing(rule, ctx)
    if written or resumed:
        paths = sorted({g["path"] for _, g in written}) or resumed
        job = "this job" if assumed else f"a {ctx.facts.node_count()}-node job"
        if written:
            detail = f"{', '.join(paths[:4])} is on node-local storage in {job}: other nodes cannot read it"
        else:
            detail = (
                f"a resume found no checkpoint at {', '.join(paths[:2])} in {job}: harmless on a first run, "
                "the sign of node-local storage when another node saved it"
            )
        return [
            ctx.make_finding(
                rule,
                ["written", "written_dir", "resume_latest", "resume_tracker", "resume_scratch"],
                severity="warning",
                confidence=0.5 if written else 0.35,
                detail=detail,
                values={"path": ", ".join(paths[:4])},
                assumed=assumed,
            )
        ]
    return []


def _saved_under(path: str, saved: list[str]) -> str | None:
    """The saved path that ``path`` is, or lies under (a checkpoint directory and its files)."""
    for where in saved:
        base = where.rstrip("/")
        if len(base) > 4 and (path == base or path.startswith(base + "/") or base.startswith(path.rstrip("/") + "/")):
            return base
    return None


def _saved_elsewhere(ctx: Context, rule: Rule, missing_ev, where: str) -> bool:
    """Whether the save line came before the miss from another host or rank (or the logs name neither)."""
    for ev, g in ctx.samples(rule, ["saving", "saved"]):
        if _clean_path(g.get("path", "")).rstrip("/") != where or ev.order > missing_ev.order:
            continue
        save_host, miss_host = ctx.host_for(ev), ctx.host_for(missing_ev)
        if save_host and miss_host and save_host == miss_host:
            continue  # saved and missed on the same node: not a node-local path
        return True
    return False


def _clean_path(path: str) -> str:
    """A captured path without the quotes, backticks and trailing punctuation pastes leave on it."""
    return path.strip("'\"`").rstrip(".,;:)")


def _resume_found_nothing(rule: Rule, ctx: Context) -> list[str]:
    """Node-local checkpoint paths that a resume (DeepSpeed ``latest``, Megatron's tracker file,
    NeMo's checkpoint_dir) found empty: only a sign when the path is node-local by its name."""
    paths = ctx.captures(rule, "path", ["resume_latest", "resume_tracker", "resume_scratch"])
    return [p for p in (_clean_path(p) for p in paths) if node_local(p)]


def _working_dir_elsewhere(rule: Rule, ctx: Context) -> list[tuple]:
    """SGE's qacct ``failed 28 : changing into working directory``: the execution host could not
    enter the job's working directory, which exists on the submit host only (qacct's ``cwd`` row
    names it; its one short word is too common a literal to scan every line for)."""
    failed = ctx.samples(rule, ["sge_cwd_failed"])
    if not failed:
        return []
    why = "the execution host could not enter the working directory the job was submitted from"
    return [(failed[0][0], "the job's working directory (qacct's cwd)", why, 0.5, None)]


def _framework_signs(rule: Rule, ctx: Context) -> list[tuple]:
    """Node-local storage as frameworks word it: a model directory Hugging Face cannot find here, a
    dataset index built on one node, a file:// rendezvous each node waits on alone."""
    signs: list[tuple] = []
    for ev, g in ctx.samples(rule, ["hub_repo_id", "hub_no_path", "hub_cannot_load"]):
        path = g.get("path")
        why = "Hugging Face found no such directory on this node and read the path as a Hub repo id"
        if path and node_local(path):
            signs.append((ev, path, why + "; it is on node-local storage", 0.7, None))
        elif not path:
            signs.append((ev, "a local model directory", why, 0.45, None))
        elif _path_like(path):
            signs.append((ev, path, why, 0.45, UNKNOWN_WHERE))
    for ev, g in ctx.samples(rule, ["hub_not_local", "hub_not_dir", "hub_no_file"]):
        path = _clean_path(g.get("path", ""))
        if not _path_like(path):
            continue  # a Hub id (org/name) that does not exist: a typo, not storage
        if "does not appear to have a file named" in ev.text and (
            not ctx.job_failed() or "generation_config" in ev.text
        ):
            continue  # an optional file (generation config) the loader goes on without
        if "does not appear to have a file named" in ev.text:
            why = f"the directory is there but without {g['file']}: saved in part, or by another node into its own copy"
            conf = 0.7 if node_local(path) else 0.4
        else:
            why = "Hugging Face found no such directory on this node and read the path as a Hub model id"
            conf = 0.75 if node_local(path) else 0.45
        signs.append((ev, path, why, conf, None if node_local(path) else UNKNOWN_WHERE))
    for ev, _g in ctx.samples(rule, ["index_build"]):
        why = "it is built by one rank on its own node and read by the others from the data path"
        signs.append((ev, "the dataset index", why, 0.55 if ev.rank else 0.45, None))
    for ev, g in ctx.samples(rule, ["no_valid_checkpoint"]):
        local_path = node_local(g["path"])
        why = "the checkpoint was saved on one node's disk" + (" (node-local storage)" if local_path else "")
        signs.append((ev, g["path"], why, 0.8 if local_path else 0.5, None))
    for ev, _g in ctx.samples(rule, ["best_model_frame"]):
        why = "the Trainer reloads the best checkpoint from output_dir on every node, and only the main node saved it"
        signs.append((ev, "the best checkpoint", why, 0.5, None))
    signs += _index_built_elsewhere(rule, ctx)
    frames = ctx.samples(rule, ["file_init_frame"])
    if frames:
        paths = ctx.captures(rule, "path", ["file_init"])
        local_paths = [p for p in paths if node_local(p)]
        what = f"the file:// rendezvous file {(local_paths or paths)[0]}" if paths else "the file:// rendezvous file"
        why = "file:// init needs one file every node sees; each node waited on its own copy"
        signs.append((frames[0][0], what, why, 0.75 if local_paths else 0.5, None))
    return signs


def _index_built_elsewhere(rule: Rule, ctx: Context) -> list[tuple]:
    """Rank 0 built the dataset index maps, and then another node failed."""
    built = ctx.samples(rule, ["index_on_rank0"])
    failures = ctx.rules.get("unexplained-failure")
    if not built or failures is None:
        return []
    builders = {ctx.host_for(ev) for ev, _ in built}
    failed = [
        ev
        for ev, _ in ctx.samples(failures, ["traceback", "exception", "exception_other"])
        if ctx.host_for(ev) not in builders
    ]
    if not failed:
        return []
    why = "rank 0 built them into its data directory and another node failed right after: that node does not see it"
    return [(failed[0], "the dataset index maps", why, 0.6, None)]


# ---------------------------------------------------------------------------------- containers
_HTTP_MEANING = {
    "401": "401 Unauthorized: registry credentials missing or wrong ($ENROOT_CONFIG_PATH/.credentials)",
    "403": "403 Forbidden: these credentials may not pull this image",
    "404": "404 Not Found: the image name or tag does not exist",
    "429": "429 Too Many Requests: the registry's pull rate limit (every node importing at once multiplies pulls)",
}


def _import_reason(rule: Rule, ctx: Context, chosen: set[str]) -> str:
    reasons = []
    for code in ctx.captures(rule, "code", ["http_error"]):
        if code in _HTTP_MEANING:
            reasons.append(_HTTP_MEANING[code])
        elif code.startswith("5"):
            reasons.append(f"{code}: the registry failed (outage)")
        else:
            reasons.append(f"HTTP {code}")
    for _ev, g in ctx.samples(rule, ["curl_error"])[:1]:
        reasons.append(f"curl ({g['curl']}) {g['curlmsg']}")
    if "bad_json" in chosen:
        reasons.append(
            "the registry answered with something that is not JSON (proxy or error page, often a rate limit)"
        )
    if "bad_reference" in chosen:
        ref = first_or(ctx.captures(rule, "image", ["bad_reference"]))
        reasons.append(f"invalid image reference {ref} (pyxis wants registry#repository:tag)")
    if chosen & {"auth_protocol", "digest"}:
        reasons.append("the registry's authentication/digest protocol was not understood")
    if "squash_missing" in chosen:
        reasons.append(
            f"the squash file {', '.join(ctx.captures(rule, 'path', ['squash_missing'])[:2])} does not exist"
        )
    if "checksum" in chosen:
        reasons.append("a downloaded layer did not match its digest (a proxy or a cut download altered it)")
    for path in ctx.captures(rule, "path", ["bad_format"])[:1]:
        reasons.append(f"{path} is not a squashfs image (a partial import, or a tarball)")
    if chosen & {"disk_full", "squashfs_write"}:
        reasons.append("the disk filled up while converting the image (ENROOT_CACHE/DATA/TEMP_PATH too small)")
    for image in ctx.captures(rule, "image", ["pull_denied"])[:1]:
        reasons.append(f"pull access denied for {image}: the repository does not exist or needs a login")
    if "manifest_unknown" in chosen:
        reasons.append("the tag or manifest does not exist in the registry (manifest unknown)")
    if "rate_limited" in chosen:
        reasons.append(_HTTP_MEANING["429"])
    for _ev, g in ctx.samples(rule, ["apptainer_pull"])[:1]:
        reasons.append(f"Apptainer could not build the image from the registry{g.get('rest', '')[:120]}")
    for d in ctx.captures(rule, "dir", ["no_space"])[:1]:
        reasons.append(f"not enough space in {d} to convert the image (ENROOT_CACHE/DATA/TEMP_PATH too small)")
    if "command_missing" in chosen:
        reasons.append(f"enroot lacks {', '.join(ctx.captures(rule, 'cmd', ['command_missing']))}")
    if "whiteouts_caps" in chosen:
        reasons.append(
            "enroot-aufs2ovlfs could not convert the image's whiteouts: it lacks its file capabilities "
            "(install the enroot+caps package)"
        )
    return "; ".join(dict.fromkeys(reasons))


def container_import(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    images = ctx.captures(rule, "image", ["failed_import", "bad_reference"]) or ctx.captures(
        rule, "image", ["importing", "enroot_import_cmd"]
    )
    image = first_or(images, "the image")
    if ctx.count("container-runtime-error", ["runtime_dir"]):
        return []  # the import failed because enroot could not make its own directories: not the image
    if chosen - {"importing"} == {"command_missing"} and set(ctx.captures(rule, "cmd", ["command_missing"])) <= {
        "nvidia-container-cli"
    }:
        return []  # enroot's 98-nvidia hook needs it to start a container: container-runtime-error's
    squashes = ctx.captures(rule, "path", ["squash_missing"])
    if chosen - {"importing"} == {"squash_missing"} and all(node_local(p) for p in squashes) and ctx.spans_nodes()[0]:
        return []  # a squash file on one node's local disk, missing on the others: node-local-path says so
    reason = _import_reason(rule, ctx, chosen)
    # enroot's common::curl prints "[ERROR] URL <url> returned error code" for the registry's API
    # (/v2/...) and for its token realm (auth.docker.io/token, nvcr.io/proxy_auth), which has no /v2/;
    # enroot import's own [INFO] steps make a curl error the registry's too.
    registry = (
        any("/v2/" in url for url in ctx.captures(rule, "url", ["http_error"]))
        or any("[ERROR] URL " in ev.text for ev, _ in ctx.samples(rule, ["http_error"]))
        or bool(ctx.stats(rule, ["enroot_step", "enroot_import_cmd"]))
    )
    if chosen <= {"curl_error", "http_error"} and not registry and not ctx.job_failed():
        return []  # a curl or HTTP error from the program itself, not from a registry's API
    hosts = sorted({h for _, st in ctx.stats(rule) for h in st.hosts})
    if not hosts and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    detail = f"pyxis/enroot could not import {image}"
    if hosts:
        detail += f" on {hosts_text(hosts)}"
    detail += f": {reason}" if reason else " (enroot's log gives no reason)"
    # Kept as written: enroot's docker:// URI and pyxis both separate the registry with '#'.
    return [ctx.make_finding(rule, detail=detail + ".", hosts=hosts, values={"image": image})]


def named_container_made_nowhere(ctx: Context) -> bool:
    """pyxis keeps a named container on the node that made it until the job that made it ends
    (container_scope=job, its default). When task 0 cannot find the name either and every node the
    logs show failed, no node of this job made it: another job did (and its end removed it), or none."""
    failed = ctx.rules.get("unexplained-failure")
    if failed is None:
        return False
    # Tasks srun terminated after the others failed (Terminated, Killed) may well have had it.
    exits = [(ev, g) for ev, g in ctx.samples(failed, ["task_exit"]) if g.get("how", "").startswith("Exited")]
    if not any(part.split("-")[0] == "0" for _, g in exits for part in g.get("task", "").split(",")):
        return False
    failing = {g["host"] for _, g in exits if g.get("host")}
    return not (set(ctx.facts.hosts) | ctx.facts.slurm_task_hosts) - failing


def container_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if chosen == {"name_missing"} and not named_container_made_nowhere(ctx):
        return []  # made on some nodes of the job, missing on others: node-local-path says so
    if not chosen:
        return []
    generic = {"start_failed", "couldnt_start", "pyxis_other"}
    if chosen <= generic and "container-import-failure" in ctx.findings:
        return []  # pyxis <= 0.23 prints "couldn't start container" after a failed import too
    parts = []
    names = list(chosen)
    for _ev, g in ctx.samples(rule, ["no_pyxis"])[:1]:
        cmd, value = g["cmd"], g.get("value", "")
        part = f"{cmd} does not know --{g['opt']}: the pyxis plugin is not installed or not loaded for {cmd}"
        if cmd == "sbatch" and value and "#" not in value and "/" not in value:
            part += f" (and in an #SBATCH line the value was cut at '#', leaving '{value}')"
        parts.append(part)
    shared = "shared-storage-missing" in ctx.findings
    mounts = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["mount_failed", "mount_other", "source_missing"])
        if not (shared and g.get("src", "").startswith(SHARED_PREFIXES))
    ]
    if mounts:
        srcs = list(dict.fromkeys(g["src"] for _, g in mounts))
        reason = first_or([g["reason"] for _, g in mounts if g.get("reason")], "source path does not exist")
        hosts = sorted({h for ev, _ in mounts if (h := ctx.host_for(ev))})
        where = f" on {hosts_text(hosts)}" if hosts else ""
        parts.append(f"mounting {', '.join(srcs[:3])} into the container failed{where}: {reason}")
        if any(s.startswith("/dev/infiniband") for s in srcs):
            parts.append("that node has no /dev/infiniband (no IB driver or HCA): exclude it or drop the mount there")
    elif chosen <= {"mount_failed", "mount_other", "source_missing"} | generic and shared:
        return []  # the mount failed because the shared file system is missing there: that is the finding
    for _ev, g in ctx.samples(rule, ["runtime_dir"])[:1]:
        parts.append(
            f"pyxis/enroot could not create {g['path']} ({g['reason']}): the runtime directories of enroot.conf "
            "(ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH, ENROOT_DATA_PATH) must be creatable by the job's user"
        )
    for _ev, g in ctx.samples(rule, ["hook_failed"])[:1]:
        parts.append(f"the enroot hook {g['hook']} failed (exit {g['code']})")
    for _ev, g in ctx.samples(rule, ["nvidia_cli"])[:1]:
        parts.append(f"nvidia-container-cli: {g['what']}: {g['reason']}")
    if "nvidia_cli_missing" in chosen:
        parts.append(
            "enroot's NVIDIA hook needs nvidia-container-cli, which this node lacks (install libnvidia-container-tools)"
        )
    for _ev, g in ctx.samples(rule, ["seccomp"])[:1]:
        why = f" ({g['reason']})" if g.get("reason") else ""
        parts.append(
            f"pyxis could not install its seccomp filter{why}: this node's kernel does not allow it "
            "(check the node image with enroot's requirements self-test, enroot-check)"
        )
    for _ev, g in ctx.samples(rule, ["switchroot"])[:1]:
        parts.append(
            f"enroot could not run {g['cmd']} in the image ({g['reason']}): the image has no shell "
            "(a FROM-scratch or distroless image); use an image that has /bin/sh"
        )
    for _ev, g in ctx.samples(rule, ["pyxis_other"])[:1]:
        parts.append(f"pyxis: {g['what']}{g.get('rest', '')[:120]}")
    for _ev, g in ctx.samples(rule, ["enroot_start"])[:1]:
        parts.append(f"enroot: {g['what']}")
    for _ev, g in ctx.samples(rule, ["enroot_ns"])[:1]:
        why = f" ({g['reason']})" if g.get("reason") else ""
        hint = ": user namespaces are disabled or limited on this node" if "namespace" in g["op"] else ""
        parts.append(f"enroot-{g['tool']} could not {g['op']}{why}{hint}")
    for _ev, g in ctx.samples(rule, ["oci_runtime", "apptainer_start"])[:1]:
        parts.append(f"the container runtime could not create the container: {g['reason'][:160]}")
    if "no_gpu_driver" in chosen:
        parts.append("Docker has no GPU device driver: the NVIDIA container toolkit is not installed or configured")
    if "exited_too_soon" in chosen:
        parts.append("the container exited before pyxis could attach (entrypoint, missing /bin/sh, architecture)")
    for _ev, g in ctx.samples(rule, ["namespace"])[:1]:
        parts.append(f"pyxis could not join the {g['ns']} namespace: {g['reason']}")
    for _ev, g in ctx.samples(rule, ["name_missing"] if named_container_made_nowhere(ctx) else [])[:1]:
        parts.append(
            f'no node of this job has the named container "{g["name"]}": pyxis removes named containers when '
            "the job that made them ends (container_scope=job), so create it with --container-image in the same "
            "job, or save it with --container-save"
        )
    for _ev, g in ctx.samples(rule, ["name_flag"])[:1]:
        parts.append(f'--container-name "{g["flag"]}" was used but the container {g["state"]}')
    if "mounts_format" in chosen:
        parts.append(f"--container-mounts is malformed: {first_or(ctx.captures(rule, 'spec', ['mounts_format']))}")
    if not parts:
        parts.append("the container failed to start; enroot's log above says why")
    reason = "; ".join(parts)
    detail = "The container could not start: " + reason + "."
    hosts = sorted({h for ev, _ in ctx.samples(rule, names) if (h := ctx.host_for(ev))})
    if not hosts and "no_pyxis" not in chosen and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    return [ctx.make_finding(rule, names, detail=detail, hosts=hosts, values={"reason": reason[:160]})]


# ------------------------------------------------------------------------------------- storage
SHARED_PREFIXES = (
    "/home/",
    "/lustre",
    "/gpfs",
    "/nfs",
    "/fsx",
    "/weka",
    "/pfs",
    "/sfs",
    "/shared",
    "/scratch",
    "/projects",
    "/project/",
    "/work/",
    "/data/",
    "/datasets",
    "/mnt/",
    "/net/",
    "/efs",
    "/beegfs",
    "/cephfs",
    "/vast",
    "/groups",
)

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
        if path is None and g.get("server"):
            path = f"the NFS export of {g['server']}"
        elif path is None and any(word in ev.text for word in _FS_CLIENT_WORDS):
            path = "the Lustre file system"  # the client's own message names a target, not a path
        if path is None or node_local(path):
            continue  # a per-node cache under /home is node-local-path's
        text = ev.text
        if any(word in text for word in _BROKEN_WORDS):
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
    if partial and absent:
        others = sorted(known - failing, key=natural_key) if known - failing else []
        seen = f", while {hosts_text(others)} read it" if others else ""
        kinds.append(f"missing or refused on {hosts_text(sorted(failing, key=natural_key))} only{seen}")
    if assumed:
        kinds.append("missing where this excerpt's process ran, on a file system every node should mount")
    # Only the client's own complaint (NFS not responding, a Lustre eviction), no call that failed:
    # often transient, so less certain than a path the job could not use.
    client_only = all(not p.startswith("/") for _, p in chosen_pairs)
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


def _away_from_rank0(ctx: Context, ev, rank0_host: str | None) -> bool | None:
    """Whether a missing-file line came from a node other than rank 0's: True, False (rank 0 or its
    node: the file is missing where it was written, a wrong path), or None when the logs do not say."""
    host = ctx.host_for(ev)
    if ev.rank == 0:
        return False
    if host and rank0_host:
        return host != rank0_host
    if ev.rank is not None:
        return True
    return None


def _path_like(text: str) -> bool:
    """A filesystem path rather than a Hub id (``org/name``): absolute, relative with ./ or ~, or deeper."""
    return text.startswith(("/", "./", "../", "~")) or text.count("/") >= 2
