"""Containers and storage: node-local paths, missing shared storage, image import and container start."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import NODE_LOCAL_PREFIXES, first_or, node_local
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding


def node_local_path(rule: Rule, ctx: Context) -> list[Finding]:
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    missing = [(ev, g) for ev, g in ctx.samples(rule, ["missing", "missing_arrow", "pyxis_name", "chdir"])]
    local_missing = [(ev, g) for ev, g in missing if "name" in g or node_local(g.get("path", ""))]
    written = [(ev, g) for ev, g in ctx.samples(rule, ["written"]) if node_local(g.get("path", ""))]
    if local_missing:
        paths = sorted({g.get("path") or f'container "{g["name"]}"' for _, g in local_missing})
        evidence = pick_evidence([ev for ev, _ in local_missing] + [ev for ev, _ in written])
        hosts = sorted({h for ev, _ in local_missing if (h := ctx.host_for(ev))})
        if not hosts and any("name" in g for _, g in local_missing):
            # pyxis' line names no node; the tasks that then failed say which nodes lack the container.
            hosts = sorted(ctx.facts.slurm_task_hosts)
        ranks = sorted({ev.rank for ev, _ in local_missing if ev.rank is not None})
        job = "this job" if assumed else f"this {ctx.facts.node_count()}-node job"
        detail = (
            f"{', '.join(paths[:4])} is node-local storage: it was not found on "
            f"{hosts_text(hosts) if hosts else 'other nodes'} of {job}"
        )
        return [
            ctx.make_finding(
                rule,
                ["missing", "missing_arrow", "pyxis_name", "chdir", "written"],
                detail=detail,
                evidence=evidence,
                values={"path": ", ".join(paths[:4])},
                hosts=hosts or None,
                ranks=ranks or None,
                confidence=0.85,
                assumed=assumed,
            )
        ]
    if written:
        paths = sorted({g["path"] for _, g in written})
        job = "this job" if assumed else f"a {ctx.facts.node_count()}-node job"
        detail = f"{', '.join(paths[:4])} is on node-local storage in {job}: other nodes cannot read it"
        return [
            ctx.make_finding(
                rule,
                ["written"],
                severity="warning",
                confidence=0.5,
                detail=detail,
                values={"path": ", ".join(paths[:4])},
                assumed=assumed,
            )
        ]
    return []


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
    if chosen & {"disk_full", "squashfs_write"}:
        reasons.append("the disk filled up while converting the image (ENROOT_CACHE/DATA/TEMP_PATH too small)")
    if "command_missing" in chosen:
        reasons.append(f"enroot lacks {', '.join(ctx.captures(rule, 'cmd', ['command_missing']))}")
    return "; ".join(dict.fromkeys(reasons))


def container_import(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    images = ctx.captures(rule, "image", ["failed_import", "bad_reference"]) or ctx.captures(
        rule, "image", ["importing"]
    )
    image = first_or(images, "the image")
    if ctx.count("container-runtime-error", ["runtime_dir"]):
        return []  # the import failed because enroot could not make its own directories: not the image
    reason = _import_reason(rule, ctx, chosen)
    registry = any("/v2/" in url for url in ctx.captures(rule, "url", ["http_error"]))
    if chosen <= {"curl_error", "http_error"} and not registry and not ctx.job_failed():
        return []  # a curl or HTTP error from the program itself, not from a registry's API
    hosts = sorted({h for _, st in ctx.stats(rule) for h in st.hosts})
    if not hosts and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    detail = f"pyxis/enroot could not import {image}"
    if hosts:
        detail += f" on {hosts_text(hosts)}"
    detail += f": {reason}" if reason else " (enroot's log gives no reason)"
    return [ctx.make_finding(rule, detail=detail + ".", hosts=hosts, values={"image": image.replace("#", "/", 1)})]


def container_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    generic = {"start_failed", "couldnt_start"}
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
    if "exited_too_soon" in chosen:
        parts.append("the container exited before pyxis could attach (entrypoint, missing /bin/sh, architecture)")
    for _ev, g in ctx.samples(rule, ["namespace"])[:1]:
        parts.append(f"pyxis could not join the {g['ns']} namespace: {g['reason']}")
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
        if path is None:
            continue
        text = ev.text
        if "Stale file handle" in text or "Transport endpoint is not connected" in text or "Input/output error" in text:
            broken.append((ev, path))
        else:
            absent.append((ev, path))
    facts = ctx.facts
    known = set(facts.hosts) | facts.slurm_task_hosts
    failing = {h for ev, _ in absent if (h := ctx.host_for(ev))}
    # Missing or refused on some nodes while the job has others: a mount problem, not a wrong path.
    partial = bool(failing) and facts.multi_node() and len(failing) < max(facts.node_count(), len(known))
    chosen_pairs = broken + (absent if partial else [])
    if not chosen_pairs:
        return []
    hosts = sorted({h for ev, _ in chosen_pairs if (h := ctx.host_for(ev))}, key=natural_key)
    paths = list(dict.fromkeys(p for _, p in chosen_pairs))
    kinds = []
    if broken:
        texts = " ".join(ev.text for ev, _ in broken)
        for needle, meaning in (
            ("Stale file handle", "a stale NFS handle (the export or server was restarted)"),
            ("Transport endpoint is not connected", "a dead FUSE mount (the client process is gone)"),
            ("Input/output error", "I/O errors (client evicted or a storage target down)"),
        ):
            if needle in texts:
                kinds.append(meaning)
    if partial and absent:
        others = sorted(known - failing, key=natural_key) if known - failing else []
        seen = f", while {hosts_text(others)} read it" if others else ""
        kinds.append(f"missing or refused on {hosts_text(sorted(failing, key=natural_key))} only{seen}")
    detail = f"{', '.join(paths[:3])}: {'; '.join(kinds)}"
    evidence = pick_evidence(ev for ev, _ in chosen_pairs)
    return [
        ctx.make_finding(rule, chosen, detail=detail + ".", hosts=hosts, evidence=evidence, values={"path": paths[0]})
    ]
