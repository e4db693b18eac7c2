"""Container images pyxis/enroot could not import, and containers they could not start: container-import-failure, container-runtime-error."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or, fixed_sentence, node_local, sentences
from diag.diagnosis.analyzers.storage.shared import SHARED_PREFIXES
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.report import Finding

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
    if chosen & {"k8s_pull", "k8s_pull_backoff"}:
        reasons.append(
            "the kubelet could not pull it (ErrImagePull / ImagePullBackOff: a wrong name or tag, missing "
            "imagePullSecrets, or the registry out of reach; kubectl describe pod shows the registry's answer)"
        )
    for why in ctx.captures(rule, "why", ["apptainer_conveyor"])[:1]:
        reasons.append(f"Apptainer could not fetch the image's layers: {why[:160]}")
    if "registry_unauthorized" in chosen:
        reasons.append("the registry refused the pull as unauthorized: log in (docker login, APPTAINER_DOCKER_"
                       "USERNAME/PASSWORD, enroot's .credentials) or check the image name")
    for why in ctx.captures(rule, "why", ["k8s_failed_pull"])[:1]:
        reasons.append(f"the registry answered: {why[:160]}")
    if "layer_no_space" in chosen:
        reasons.append("the node's image store ran out of disk while unpacking a layer (docker's or containerd's root)")
    if "singularity_tar_write" in chosen:
        reasons.append(
            "Singularity could not write the image's layers as it unpacked them (a full /tmp: point SINGULARITY_TMPDIR "
            "and SINGULARITY_CACHEDIR at storage with room, or build the image once and run the file)"
        )
    for path in ctx.captures(rule, "path", ["apptainer_image_missing"])[:1]:
        reasons.append(f"the image file {path} does not exist on this node")
    for d in ctx.captures(rule, "dir", ["no_space"])[:1]:
        reasons.append(f"not enough space in {d} to convert the image (ENROOT_CACHE/DATA/TEMP_PATH too small)")
    if "command_missing" in chosen:
        reasons.append(f"enroot lacks {', '.join(ctx.captures(rule, 'cmd', ['command_missing']))}")
    if "whiteouts_caps" in chosen:
        reasons.append(
            "enroot-aufs2ovlfs could not convert the image's whiteouts: it lacks its file capabilities "
            "(install the enroot+caps package)"
        )
    for _ev, g in ctx.samples(rule, ["import_helper"])[:1]:
        why = f" ({g['why']})" if g.get("why") else ""
        if "namespace" in g["what"]:
            reasons.append(
                f"enroot-{g['tool']} could not {g['what'].removeprefix('failed to ')}{why}: enroot import runs its "
                "helpers in an unprivileged user namespace, which this node does not allow (user.max_user_namespaces=0); "
                "import where it is allowed, once, to a squash file on shared storage (enroot import -o)"
            )
        elif "mksquashfs" in g["what"]:
            reasons.append(f"enroot import could not run mksquashfs{why}: squashfs-tools is not installed on this node")
        else:
            reasons.append(f"enroot-{g['tool']}: {g['what']}{why}")
    for path in ctx.captures(rule, "path", ["apptainer_bad_image"])[:1]:
        reasons.append(f"{path} is not an image Apptainer recognizes (a pull or copy cut short, or a wrong file): pull it again")
    for _ev, g in ctx.samples(rule, ["whiteouts_fs"])[:1]:
        where = f" ({g['path']})" if g.get("path") else ""
        if "not permitted" in (g.get("why") or "").lower():
            reasons.append(
                f"enroot-aufs2ovlfs was not permitted to create the overlay whiteouts{where}: ENROOT_TEMP_PATH is on "
                "a directory mounted nodev (a batch system's $TMPDIR) or the helper lacks its file capabilities "
                "(enroot+caps); point ENROOT_TEMP_PATH at a local, writable directory without nodev"
            )
            continue
        reasons.append(
            f"enroot-aufs2ovlfs could not write the overlay whiteouts{where}: the file system under ENROOT_TEMP_PATH/"
            "ENROOT_DATA_PATH cannot hold overlay xattrs (NFS, Lustre, an overlayfs /tmp in a pod); point them at a "
            "node-local disk or tmpfs"
        )
    for _ev, g in ctx.samples(rule, ["squash_destination"])[:1]:
        reasons.append(
            f"mksquashfs could not create the squash file ({g['why']}): the --output directory is missing or on a "
            "file system it cannot create the file on (some NFS/Lustre scratch); write it to a local directory "
            "such as /tmp, then copy it to shared storage"
        )
    return "; ".join(dict.fromkeys(reasons))


def container_import(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return _extract_failed(rule, ctx)
    images = ctx.captures(rule, "image", ["failed_import", "bad_reference"]) or ctx.captures(
        rule, "image", ["importing", "enroot_import_cmd", "k8s_pull_backoff", "k8s_failed_pull"]
    )
    image = first_or(images, "the image")
    if ctx.count("container-runtime-error", ["runtime_dir", "enroot_dir"]):
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
    runtime = "pyxis/enroot"
    if chosen <= {"k8s_pull", "k8s_pull_backoff", "k8s_failed_pull", "layer_no_space"} and chosen & {
        "k8s_pull", "k8s_pull_backoff", "k8s_failed_pull"
    }:
        runtime = "Kubernetes"
    elif chosen == {"layer_no_space"}:
        runtime = "docker/containerd"
    elif chosen <= {"apptainer_pull", "apptainer_image_missing", "apptainer_bad_image"}:
        runtime = "Apptainer"
    elif chosen == {"singularity_tar_write"}:
        runtime = "Singularity"
    detail = f"{runtime} could not get {image}" if runtime != "pyxis/enroot" else f"pyxis/enroot could not import {image}"
    if hosts:
        detail += f" on {hosts_text(hosts)}"
    detail += f": {reason}" if reason else " (enroot's log gives no reason)"
    # Kept as written: enroot's docker:// URI and pyxis both separate the registry with '#'.
    return [ctx.make_finding(rule, detail=detail + ".", hosts=hosts, values={"image": image})]


def _extract_failed(rule: Rule, ctx: Context) -> list[Finding]:
    """A tool failing on the image's files (find, tar, mksquashfs...) right beside enroot import's own
    steps: the import stopped there (an unreadable directory in a layer, a full or read-only temp dir)."""
    full = ctx.samples(rule, ["extract_full"])
    errors = full or ctx.samples(rule, ["extract_error"])
    if not errors or not ctx.stats(rule, ["enroot_step", "enroot_import_cmd"]):
        return []
    _ev, g = errors[0]
    if full:
        # The disk enroot unpacks into, not the registry or the image, is the problem: say which settings move it.
        detail = (
            f"enroot import ran out of disk while unpacking the image: {g['tool']}: {g['why'][:160]}; the file system "
            "under ENROOT_TEMP_PATH (dockerd://) or ENROOT_CACHE_PATH/ENROOT_DATA_PATH (docker://) is full, often a "
            "tmpfs /tmp or a small local disk: point them at a larger file system"
        )
    else:
        detail = (
            f"enroot import stopped while unpacking or converting the image: {g['tool']}: {g['why'][:160]} (a layer "
            "with a directory nobody may read, or ENROOT_TEMP_PATH/ENROOT_CACHE_PATH full or read-only; a newer "
            "enroot or a rebuilt image without it)"
        )
    image = first_or(ctx.captures(rule, "image", ["enroot_import_cmd"]), "the image")
    return [
        ctx.make_finding(
            rule, ["extract_full" if full else "extract_error"], detail=detail + ".", confidence=0.6,
            values={"image": image}, evidence=pick_evidence(ev for ev, _ in errors),
        )
    ]  # fmt: skip


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


def _enroot_ns(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["enroot_ns"])[:1]:
        why = f" ({g['reason']})" if g.get("reason") else ""
        hint = ": user namespaces are disabled or limited on this node" if "namespace" in g["op"] else ""
        return f"enroot-{g['tool']} could not {g['op']}{why}{hint}"
    return None


def _singularity2_mount(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["singularity2_mount"])[:1]:
        what = f"{g['kind']} image" if g.get("kind") else "sandbox directory"
        text = f"Singularity could not mount the {what}: {g['reason']}"
        if g.get("kind") and "No such device" in g["reason"]:
            # mount(2) answers ENODEV when the kernel has no driver for the file system type.
            text += f" (this node's kernel has no {g['kind']} or loop-device support: modprobe {g['kind']} loop, or run from a sandbox directory)"
        return text
    return None


def _name_missing(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["name_missing"] if named_container_made_nowhere(ctx) else [])[:1]:
        return (
            f'no node of this job has the named container "{g["name"]}": pyxis removes named containers when '
            "the job that made them ends (container_scope=job), so create it with --container-image in the same "
            "job, or save it with --container-save"
        )
    return None


def _mounts_format(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    if "mounts_format" not in chosen:
        return None
    return f"--container-mounts is malformed: {first_or(ctx.captures(rule, 'spec', ['mounts_format']))}"


# What went wrong, in this order (diag.diagnosis.analyzers.common.sentences).
SENTENCES: tuple = (
    (
        ["runtime_dir", "enroot_dir"],
        "pyxis/enroot could not create {path} ({reason}): the runtime directories of enroot.conf "
        "(ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH, ENROOT_DATA_PATH) must be creatable by the job's user",
    ),
    (["hook_failed"], "the enroot hook {hook} failed (exit {code})"),
    (
        ["apptainer_nvccli"],
        "Apptainer's --nvccli does not work on a setuid installation: use --nv, or run Apptainer unprivileged",
    ),
    (
        ["ngc_driver_old"],
        "the image needs NVIDIA driver {want} or later and the node's driver is older, with no CUDA forward "
        "compatibility for this GPU: use an image built for the node's driver, or update the driver",
    ),
    (
        ["cdi_unresolvable"],
        "the CDI devices asked for ({devs}) are not in the node's CDI specification (nvidia-ctk cdi generate "
        "writes it, /etc/cdi or /var/run/cdi)",
    ),
    (
        ["ngc_no_driver"],
        "the NGC image found no NVIDIA driver: the container was started without the GPUs (docker --gpus, "
        "apptainer --nv, pyxis/enroot's NVIDIA hook)",
    ),
    (
        ["torch_no_driver"],
        "PyTorch found no NVIDIA driver: the container was started without the GPUs (docker --gpus, apptainer --nv, "
        "pyxis/enroot's NVIDIA hook with NVIDIA_VISIBLE_DEVICES) or the task landed on a node without them",
    ),
    (
        ["apptainer_nv"],
        "Apptainer --nv found no NVIDIA driver files on this host (no driver on the node, or nvliblist.conf "
        "missing), so the container has no GPU",
    ),
    (
        ["spank_missing"],
        "slurmstepd on this node has no pyxis SPANK plugin (its plugstack.conf lacks it), so the task ran on the "
        "host without its container",
    ),
    (
        [],
        fixed_sentence(
            "hook_direct",
            "the NVIDIA container runtime hook runs in CDI or csv mode here, where docker --gpus (the hook alone) is "
            "refused: start it with --runtime=nvidia (nvidia-ctk runtime configure), or set mode = \"legacy\" in "
            "/etc/nvidia-container-runtime/config.toml",
        ),
    ),
    (["nvidia_cli"], "nvidia-container-cli: {what}: {reason}"),
    (
        [],
        fixed_sentence(
            "nvidia_cli_missing",
            "enroot's NVIDIA hook needs nvidia-container-cli, which this node lacks (install libnvidia-container-tools)",
        ),
    ),
    (
        ["seccomp"],
        "pyxis could not install its seccomp filter ({reason}): this node's kernel does not allow it "
        "(check the node image with enroot's requirements self-test, enroot-check)",
    ),
    (
        ["switchroot"],
        "enroot could not run {cmd} in the image ({reason}): the image has no shell "
        "(a FROM-scratch or distroless image); use an image that has /bin/sh",
    ),
    (["pyxis_other"], "pyxis: {what}{rest}"),
    (["enroot_start"], "enroot: {what}"),
    ([], _enroot_ns),
    (["oci_runtime", "apptainer_start"], "the container runtime could not create the container: {reason}"),
    ([], _singularity2_mount),
    (
        ["singularity2_format"],
        "Singularity 2.x cannot read the image {path}: a SIF file, which only Singularity 3+ and Apptainer run "
        "(load their module, or build an ext3/squashfs image for 2.x)",
    ),
    (
        ["charliecloud_ns"],
        "Charliecloud's ch-run could not create its user and mount namespaces ({reason}): unprivileged user "
        "namespaces are disabled or limited on this node (sysctl user.max_user_namespaces, "
        "kernel.unprivileged_userns_clone)",
    ),
    ([], fixed_sentence("apptainer_no_shell", "the image has no runscript and no /bin/sh: give the command to run (apptainer exec <image> <cmd>) or use an image with a shell")),
    (
        ["apptainer_no_command"],
        'the container has no "{cmd}" on its PATH: the command is the host\'s (a module, a virtual environment, a '
        "directory not bound in with --bind) or not installed in the image; give its full path inside the image or "
        "bind its directory in",
    ),
    (
        ["apptainer_process"],
        "Apptainer could not create the container process ({reason}): its session directory's file system "
        "(APPTAINER_TMPDIR, /tmp) is full, or the node's user namespaces are used up",
    ),
    (
        ["apptainer_idmap"],
        "--fakeroot needs {tool}, which failed: it must be setuid root or carry file capabilities, and your user "
        "needs entries in /etc/subuid and /etc/subgid on this node",
    ),
    (
        ["singularity2_home"],
        "Singularity could not bind your home into the container ({what}: {path}): the image lacks the directory "
        "your home sits under; run with --no-home or -H <dir in the image>, or create that directory in the image",
    ),
    ([], fixed_sentence("no_gpu_driver", "Docker has no GPU device driver: the NVIDIA container toolkit is not installed or configured")),
    ([], fixed_sentence("exited_too_soon", "the container exited before pyxis could attach (entrypoint, missing /bin/sh, architecture)")),
    (["namespace"], "pyxis could not join the {ns} namespace: {reason}"),
    (
        ["slurm_lib_absent"],
        "Slurm's {lib} could not be loaded: a Slurm program (a TaskProlog, which Slurm 24.11+ runs inside the pyxis "
        "container) ran where the host's Slurm libraries are not mounted",
    ),
    (
        ["squashfs_exec"],
        "squashfs-mount tried to run the image and mount point {image}:{mount} as the command: the uenv that called "
        "it speaks another squashfs-mount syntax (an old uenv installed in your home ahead of the system's "
        "/usr/bin/uenv); remove it so the system's uenv is used",
    ),
    ([], _name_missing),
    (["name_flag"], '--container-name "{flag}" was used but the container {state}'),
    ([], _mounts_format),
)


def _spank_failed_alone(rule: Rule, ctx: Context) -> list[Finding]:
    """slurmstepd's "spank_pyxis.so: task_init() failed" follows pyxis' own error; pasted without
    it, the line still says pyxis could not set up the container, if not why."""
    if "container-import-failure" in ctx.findings:
        return []
    failed = ctx.samples(rule, ["spank_failed"])
    if not failed:
        return []
    detail = (
        f"pyxis failed in {failed[0][1]['fn']}() (rc={failed[0][1]['rc']}), so the task never started; the lines "
        "before it in the job's .err say why (an image import or a container start error)"
    )
    assumed = ["pyxis' own error before this line was left out of the excerpt"]
    return [
        ctx.make_finding(rule, ["spank_failed"], detail=detail + ".", confidence=0.45, assumed=assumed)
    ]


def container_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if chosen == {"name_missing"} and not named_container_made_nowhere(ctx):
        return []  # made on some nodes of the job, missing on others: node-local-path says so
    if not chosen:
        return _spank_failed_alone(rule, ctx)
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
    local = "node-local-path" in ctx.findings  # a source or squash file on one node's own disk: that is the finding
    mounts = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["mount_failed", "mount_other", "source_missing", "docker_device"])
        if not (shared and g.get("src", "").startswith(SHARED_PREFIXES)) and not (local and node_local(g.get("src", "")))
    ]
    if local and chosen == {"pyxis_other"} | (chosen & generic) and all(
        "container filesystem for image" in g["what"] and node_local(g["rest"].lstrip(": "))
        for _, g in ctx.samples(rule, ["pyxis_other"])
    ):
        return []  # enroot create found no squash file on this node's local disk: node-local-path says so
    if mounts:
        srcs = list(dict.fromkeys(g["src"] for _, g in mounts))
        reason = first_or([g["reason"] for _, g in mounts if g.get("reason")], "source path does not exist")
        hosts = sorted({h for ev, _ in mounts if (h := ctx.host_for(ev))})
        where = f" on {hosts_text(hosts)}" if hosts else ""
        parts.append(f"mounting {', '.join(srcs[:3])} into the container failed{where}: {reason}")
        devices = [s for s in srcs if s.startswith("/dev/infiniband/")]
        if devices:
            parts.append(
                f"that node has no {devices[0]} (fewer HCAs than the job lists, or no IB driver): list only the "
                "devices every node has, or mount /dev/infiniband whole"
            )
        elif any(s.startswith("/dev/infiniband") for s in srcs):
            parts.append("that node has no /dev/infiniband (no IB driver or HCA): exclude it or drop the mount there")
    elif chosen <= {"mount_failed", "mount_other", "source_missing", "docker_device"} | generic and (shared or local):
        return []  # the mount failed because the shared file system is missing there: that is the finding
    parts += sentences(rule, ctx, chosen, SENTENCES)
    if not parts:
        parts.append("the container failed to start; enroot's log above says why")
    reason = "; ".join(parts)
    detail = "The container could not start: " + reason + "."
    if chosen <= {"apptainer_nv", "ngc_no_driver", "torch_no_driver"}:
        # A warning: the container starts, without GPUs; what fails after it is the program's own error.
        detail = "The container started without GPUs: " + reason + "."
        severity = None if ctx.job_failed() else "warning"
        return [ctx.make_finding(rule, names, detail=detail, severity=severity, confidence=0.6)]
    hosts = sorted({h for ev, _ in ctx.samples(rule, names) if (h := ctx.host_for(ev))})
    if not hosts and "no_pyxis" not in chosen and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    return [ctx.make_finding(rule, names, detail=detail, hosts=hosts, values={"reason": reason[:160]})]
