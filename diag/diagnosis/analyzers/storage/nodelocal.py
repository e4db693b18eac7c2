"""Files on one node's own storage in a job that spans several: node-local-path."""

from __future__ import annotations

import re
from collections import Counter

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import node_local
from diag.diagnosis.analyzers.job.unexplained import ignored_exception_lines
from diag.diagnosis.analyzers.storage.containers import named_container_made_nowhere
from diag.diagnosis.analyzers.storage.shared import (
    SHARED_FS_PREFIXES,
    SHARED_PREFIXES,
    made_by_makedirs,
    removed_by_job,
    resume_split,
)
from diag.diagnosis.context import MULTI_NODE_ASSUMED, Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding

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
    "tf_not_valid",
    "h5py_missing",
    "lightning_missing",
    "ds_invalid",
    "nemo_cannot_resume",
    "datasets_dir",
    "datasets_find",
    "datasets_script",
    "chdir",
    "chdir_other",
    # Checkpoint and dataset libraries' own wordings (Megatron-Core, Orbax, TensorStore, Flax,
    # Accelerate, Hugging Face datasets, Composer, NeMo 2).
    "mcore_missing",
    "mcore_not_dist",
    "ckpt_at_not_found",
    "ckpt_path_missing",
    "orbax_no_steps",
    "tensorstore_missing",
    "flax_missing",
    "accelerate_missing",
    "datasets_not_cached",
    "datasets_no_data",
    "datasets_no_info",
    "datasets_local_file",
    "composer_missing",
    "composer_not_found",
    "nemo_file_missing",
    # DeepSpeed's resume through OpenRLHF / transformers, Lightning's FSDP load, Megatron's
    # --exit-on-missing-checkpoint: a checkpoint directory this rank does not see.
    "ds_resume_failed",
    "lightning_invalid",
    "megatron_exit_missing",
    "exc_missing_path",
    "exc_missing_path_other",
]
# The image's and the node's own files: missing ones are an environment problem, not storage layout.
_SYSTEM_PREFIXES = ("/etc/", "/usr/", "/sys/", "/proc/", "/dev/", "/bin/", "/sbin/", "/lib", "/var/", "/run/", "/boot/")
_INSTALL_PARTS = ("/site-packages/", "/dist-packages/", "/opt/conda/", "/miniconda", "/anaconda", "/.venv/", "/venv/")
# Wordings that shells and programs print as they go on: a sign only in a job that failed.
_SHELL_FORMS = ["missing_before", "missing_unquoted", "missing_go", "missing_java"]
# Library wordings that programs also print as a notice before creating the directory ("Checkpoint
# directory ... does not exist", a first run's "No steps found"): a sign only in a job that failed.
_NOTICE_FORMS = ["mcore_missing", "ckpt_path_missing", "orbax_no_steps", "datasets_not_cached", "composer_missing"]
# Lines the container rules own: enroot-mount's rootfs targets, pyxis' runtime directories.
_CONTAINER_WORDS = ("enroot-mount", "couldn't mkdir", "pyxis: couldn't chdir", "/enroot-data/", "/run/pyxis", "/run/enroot")
UNKNOWN_WHERE = "the file was made on another node: the excerpt does not show which ranks or nodes lack it"
INDEX_ASSUMED = "rank 0 built the index cache on another node: the excerpt does not show rank 0's view of it"
# Megatron's dataset index cache (legacy _doc_idx/_sample_idx/_shuffle_idx/_indexmap_ files, and
# Megatron-Core's <hash>-<Dataset>-<split>-{document,sample,shuffle}_index.npy): rank 0 builds it and
# every other rank reads it, so another rank missing it means rank 0's node kept it.
_INDEX_CACHE = re.compile(r"_(?:doc|sample|shuffle)_idx\.npy|_indexmap_|-(?:document|sample|shuffle)_index\.npy|-description\.txt$")
# The setting that puts each kind of file on storage every node mounts, by a part of its path.
_SETTINGS = (
    (_INDEX_CACHE, "set --data-cache-path (or the data path) to a directory every node mounts"),
    (re.compile(r"/\.metadata$|\.distcp$"), "give the DCP checkpoint_id / FileSystemWriter a directory every node mounts"),
    (re.compile(r"torchinductor_"), "set TORCHINDUCTOR_CACHE_DIR to a directory every node mounts"),
    (re.compile(r"triton"), "set TRITON_CACHE_DIR to a directory every node mounts"),
    (re.compile(r"huggingface/datasets|/cache-[\w-]+\.arrow"), "set HF_DATASETS_CACHE=<shared dir>"),
    (re.compile(r"huggingface/hub|/models--"), "set HF_HOME=<shared dir>"),
    (re.compile(r"/torch/hub/"), "set TORCH_HOME=<shared dir>"),
)


# Python's OSError for a rename/replace names both paths ("'a/tmp.pth' -> 'a/last.pth'"). Its source
# missing is a file this very process had just written, taken away by another process that renamed
# or removed the same shared path: several writers of one shared path, not a node's own disk.
RENAME_SOURCE = re.compile(r"No such file or directory: '[^']+' -> '")
# The same for calls that change a file in place (C++ boost::filesystem and std::filesystem name the
# call): the file was there for this process a moment before, and another writer of the same path
# (a cache every node updates in a shared home) replaced or removed it.
IN_PLACE = re.compile(
    r"boost::filesystem::(?:permissions|rename|remove|last_write_time|resize_file|copy_file)\b|"
    r"filesystem error: cannot (?:set permissions|rename|remove|set write time|resize)"
)
# A tree inside one of Python's tempfile names ("tmp" and 8 of [a-z0-9_]): what a process unpacked or
# downloaded into its own tempfile.mkdtemp() directory (<tmpdir>/checkpoint/file). A file missing in it
# is missing from what that process unpacked. The temp name itself (tempfile.mkstemp's file, or a file
# right in the directory) is a name one process made and handed to others: that stays node-local.
_MKDTEMP = re.compile(r"/tmp[a-z0-9_]{8}/[^/]+/")

# slurmstepd's job_container plugin (job_container/tmpfs: container_p_create / container_p_join, called through
# container_g_*) builds each job's private /tmp and /dev/shm under its BasePath on the node: a file of it that is
# missing is Slurm's own per-job directory on that node (made at the job's start, gone with a cleanup or a node
# restart), not a path the job chose.
_JOB_CONTAINER = re.compile(r"\bcontainer_[pg]_\w+\b|job_container/tmpfs")


def node_local_path(rule: Rule, ctx: Context) -> list[Finding]:
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    rank0_host = ctx.facts.host_of_rank.get(0)
    # (evidence, what is missing, why it is node-local, confidence, what it assumed or None)
    local: list = []
    elsewhere: list = []  # (evidence, path, confidence when unknown): missing files on storage that may be shared
    stepd_fallback: list = []  # working directories a run that went on lacked: a warning until something fails
    for ev, g in ctx.samples(rule, ["pyxis_name"] if not named_container_made_nowhere(ctx) else []):
        local.append((ev, f'container "{g["name"]}"', "pyxis named containers live on the node that made them", 0.85, None))
    failed = ctx.job_failed()
    shell = {
        ev for ev, _ in ctx.samples(rule, _SHELL_FORMS + _NOTICE_FORMS) if "[ERROR] " not in ev.text  # enroot's own error
    } if not failed else set()
    shell -= {ev for ev, _ in ctx.samples(rule, ["chdir"])}  # slurmstepd's, not a shell's: judged below by its path
    fell_back = _fell_back_to_tmp(rule, ctx)
    failures = ctx.rules.get("unexplained-failure")
    ignored = ignored_exception_lines(failures, ctx) if failures else set()
    for ev, g in ctx.samples(rule, _MISSING_PATHS):
        path = _missing_path(g)
        if not path or any(word in ev.text for word in _CONTAINER_WORDS):
            continue
        if (ev.path, ev.line) in ignored:
            continue  # printed under "Exception ignored in" (a destructor, an atexit callback): the program went on
        if "resource_tracker:" in ev.text:
            continue  # multiprocessing's exit-time sweep of leaked semaphores: '/mp-<id>' names one, not a file
        if fell_back and path.startswith("/tmp/") and ctx.host_for(ev) in fell_back:
            continue  # a relative path resolved in slurmstepd's /tmp fallback: the working directory is the cause
        if ev in shell or "cannot remove" in ev.text:
            continue  # a shell's or a program's complaint in a run that went on (rm -f noise, a probe)
        if RENAME_SOURCE.search(ev.text) or IN_PLACE.search(ev.text):
            continue  # a rename or chmod whose file another process moved first: one shared path, written twice
        if removed_by_job(ctx, ev, path):
            continue  # the job deleted it itself (a checkpoint rotation every rank runs), not one node's disk
        if "so there is nothing to restart" in ev.text:
            continue  # Toil's leader --restart on a job store that is not there; a worker's miss is _workflow_signs'
        if made_by_makedirs(ctx, ev):
            continue  # a parent is a link to storage this node lacks: shared-storage-missing weighs it
        if _MKDTEMP.search(path) and node_local(path):
            continue  # unpacked into the process's own temporary directory: nothing another node wrote
        if "No such file" not in g.get("reason", "No such file"):
            continue  # slurmstepd could not enter a directory that is there (Permission denied, Stale file handle)
        if _JOB_CONTAINER.search(ev.text):
            continue  # Slurm's job_container plugin's own per-job directory: a node's or Slurm's fault, not a path choice
        if path.endswith("/slurm_script"):
            continue  # slurmd's own copy of the batch script in its spool directory: the node's fault, not the job's
        if node_local(path):
            local.append((ev, path, _with_setting("node-local storage", path), 0.85, None))
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
    dcp_failed = _dcp_failed_ranks(rule, ctx)
    on_rank0 = {path for ev, path, _ in elsewhere if _away_from_rank0(ctx, ev, rank0_host, dcp_failed) is False}
    on_rank0 |= _missing_on_every_failed_rank(rule, ctx, [path for _, path, _ in elsewhere])
    saved = [_clean_path(p) for p in ctx.captures(rule, "path", ["saving", "saved"])]
    for ev, path, unknown_conf in elsewhere:
        if path in on_rank0:
            continue
        where = _saved_under(path, saved)
        if where and _saved_elsewhere(ctx, rule, ev, where):
            why = f"this job saved it ({where}) and then could not find it: it went to one node's own disk"
            local.append((ev, path, why, 0.7, None))
        elif _away_from_rank0(ctx, ev, rank0_host, dcp_failed):
            why = "missing only where rank 0 did not run, so written on rank 0's node alone"
            local.append((ev, path, _with_setting(why, path), 0.6, None))
        elif _INDEX_CACHE.search(path) and ctx.job_failed():
            # Rank 0 builds the index cache and the others read it: a rank that lacks it is
            # almost always another node (rank 0 itself lacking it is the wrong-path case above).
            why = "Megatron's dataset index cache is built by rank 0 and read by every other rank from the same path"
            local.append((ev, path, _with_setting(why, path), 0.55, INDEX_ASSUMED))
        elif ctx.job_failed():  # a file missing in a run that went on is no finding of its own
            why = "not found here, and nothing shows it on this node's storage"
            local.append((ev, path, why, unknown_conf, UNKNOWN_WHERE))
        elif "going to /tmp instead" in ev.text:
            # slurmstepd goes on in /tmp: the root of what fails next where the program uses relative paths
            why = "slurmstepd could not enter it on this node and started the task in /tmp instead"
            stepd_fallback.append((ev, path, why, 0.35, UNKNOWN_WHERE))
    for ev, g in ctx.samples(rule, ["spool_script"])[:1]:
        why = (
            "the job script found its own directory ($0, BASH_SOURCE), which under sbatch is slurmd's node-local "
            "spool copy, not the directory it was submitted from: use $SLURM_SUBMIT_DIR"
        )
        local.append((ev, g["path"], why, 0.8, None))
    for ev, g in ctx.samples(rule, ["tf_not_found", "tf_not_found_status"]):
        if "_temp_" in g["path"]:
            why = (
                "TensorFlow's sharded save writes each task's shard under a _temp_ directory that the task "
                "merging them must read: each task wrote to its own node's disk"
            )
            local.append((ev, _clean_path(g["path"]), why, 0.7, None))
    for ev, g in ctx.samples(rule, ["shell_relative"]):
        why = "a relative path a script ran from the job's working directory, not from where the file was written"
        local.append((ev, g["relpath"], why, 0.5, None))
    for ev, g in ctx.samples(rule, ["missing_relative"]):
        if RENAME_SOURCE.search(ev.text):
            continue
        if node_local(g["relpath"]):  # an unexpanded $TMPDIR / $SLURM_TMPDIR
            local.append((ev, g["relpath"], "node-local storage", 0.85, None))
        else:
            local.append((ev, g["relpath"], "a relative path, resolved in each node's own working directory", 0.6, None))
    for ev, g in ctx.samples(rule, ["ds_shard_count"]):
        if int(g["found"]) < int(g["want"]) and not g["path"].startswith(SHARED_FS_PREFIXES):
            why = (
                f"only {g['found']} of {g['want']} ranks' ZeRO shards are in it: each node saved its own ranks' "
                "shards to its own disk"
            )
            local.append((ev, g["path"], why, 0.8, None))
    for ev, _g in ctx.samples(rule, ["zero_missing"]):
        local.append((ev, "ZeRO checkpoint shards", "each node saved its ranks' shards to its own disk", 0.8, None))
    for ev, g in ctx.samples(rule, ["ray_storage"]):
        why = "Ray needs a storage path every node can read and write (RunConfig(storage_path=<shared dir or cloud URI>))"
        local.append((ev, g.get("path") or "Ray Train's storage_path", why, 0.75, None))
    for ev, _g in ctx.samples(rule, ["cannot_see"]):
        local.append((ev, "rank 0's files", "other ranks cannot see what rank 0 wrote", 0.8, None))
    local += _framework_signs(rule, ctx)
    local += _container_sources(rule, ctx)
    local += _workflow_signs(rule, ctx)
    # Signs of ranks that disagree or of a script in the wrong directory, not of a failure: a warning until something fails.
    ray_saves = _ray_relative_saves(rule, ctx)
    soft = _split_signs(rule, ctx) + _shell_cd_missing(rule, ctx) + ray_saves + stepd_fallback
    local += soft
    local += _pathless_signs(rule, ctx, rank0_host, dcp_failed)
    local += _working_dir_elsewhere(rule, ctx)
    written = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["written", "written_dir"])
        if node_local(g.get("path", "")) and not _MKDTEMP.search(g.get("path", ""))
    ]
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
        if dcp_failed:
            ranks = sorted(dcp_failed)  # the ranks that failed, not the rank that printed their tracebacks
        job = "this job" if MULTI_NODE_ASSUMED in assumed or not ctx.facts.node_count() else f"this {ctx.facts.node_count()}-node job"
        where = hosts_text(hosts) if hosts else "other nodes"
        detail = f"{', '.join(paths[:4])} was not found on {where} of {job}: {'; '.join(why[:3])}"
        if len(ray_saves) == len(local):  # saved, not yet missed: where it went, not where it is missing
            detail = f"{', '.join(paths[:4])} stays on one node's own disk in {job}: {'; '.join(why[:3])}"
        only_soft = len(soft) == len(local)
        return [
            ctx.make_finding(
                rule,
                [s.name for s in rule.signatures],
                severity="warning" if only_soft and not failed else None,
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
                ["written", "written_dir", "resume_latest", "resume_tracker", "resume_tracker_verl", "resume_scratch"],
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
    paths = ctx.captures(rule, "path", ["resume_latest", "resume_tracker", "resume_tracker_verl", "resume_scratch"])
    return [p for p in (_clean_path(p) for p in paths) if node_local(p)]


_SHELL_CD = re.compile(r"\bcd: (?P<path>/[^\s:'\"`]+): No such file or directory")


def _shell_cd_missing(rule: Rule, ctx: Context) -> list[tuple]:
    """A job script's ``cd`` into a directory this node does not have, in a log that shows no failure
    (a failed job's missing paths are weighed with the others): the script went on in the wrong
    directory, or stopped there; the directory was made on another node's disk, or the storage that
    holds it is not mounted here."""
    if ctx.job_failed():
        return []
    signs = []
    for ev, g in ctx.samples(rule, ["missing_before"]):
        found = _SHELL_CD.search(ev.text)
        if not found or found["path"] != _clean_path(g.get("path", "")):
            continue
        path = found["path"]
        if path.startswith(SHARED_FS_PREFIXES) or path.startswith(_SYSTEM_PREFIXES):
            continue  # a shared file system missing is shared-storage-missing; a system path is the image's
        why = "the job's script could not enter it on this node: made on another node's disk, or on storage not mounted here"
        signs.append((ev, path, why, 0.35, UNKNOWN_WHERE))
    return signs


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
    for ev, g in ctx.samples(rule, ["hub_repo_id", "hub_invalid_id", "hub_no_path", "hub_cannot_load", "vllm_no_dir"]):
        path = g.get("path")
        if path and path.startswith(SHARED_FS_PREFIXES):
            continue  # a shared file system this node lacks: shared-storage-missing weighs it
        why = "Hugging Face found no such directory on this node and read the path as a Hub repo id"
        if path and node_local(path):
            signs.append((ev, path, why + "; it is on node-local storage", 0.7, None))
        elif not path:
            signs.append((ev, "a local model directory", why, 0.45, None))
        elif _path_like(path):
            signs.append((ev, path, why, 0.45, UNKNOWN_WHERE))
    for ev, g in ctx.samples(rule, ["hub_not_local", "hub_not_dir", "hub_no_file"]):
        path = _clean_path(g.get("path", ""))
        if not _path_like(path) or path.startswith(SHARED_FS_PREFIXES):
            continue  # a Hub id (org/name) that does not exist (a typo), or a shared file system's path
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
        if g["path"].startswith(SHARED_FS_PREFIXES):
            continue
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
        for ev, _ in ctx.samples(failures, ["traceback", "exception", "exception_socket", "exception_other"])
        if ctx.host_for(ev) not in builders
    ]
    if not failed:
        return []
    why = "rank 0 built them into its data directory and another node failed right after: that node does not see it"
    return [(failed[0], "the dataset index maps", why, 0.6, None)]


# ---------------------------------------------------------------------------------- containers

def _away_from_rank0(ctx: Context, ev, rank0_host: str | None, dcp_failed: set[int] | None = None) -> bool | None:
    """Whether a missing-file line came from a node other than rank 0's: True, False (rank 0 or its
    node: the file is missing where it was written, a wrong path), or None when the logs do not say.
    A DCP CheckpointException's list of failed ranks comes first: every rank prints the others'
    tracebacks under its own prefix, so a line's own rank is not the rank that failed."""
    if dcp_failed:
        return 0 not in dcp_failed
    host = ctx.host_for(ev)
    if ev.rank == 0:
        return False
    if host and rank0_host:
        return host != rank0_host
    if ev.rank is not None:
        return True
    return None


def _missing_on_every_failed_rank(rule: Rule, ctx: Context, missing: list[str]) -> set[str]:
    """The paths that every process in torchrun's failure table lacked, where the table lists rank 0: as
    many lines missing the path as rows, rank 0's among them (a script or log path wrong on every node)."""
    failed = {int(r) for r in ctx.captures(rule, "rank", ["elastic_failed_rank"])}
    if 0 not in failed:
        return set()
    lines: Counter[str] = Counter()  # a signature's count, not its samples: identical lines keep one sample
    for _, st in ctx.stats(rule, _MISSING_PATHS):
        paths = [_missing_path(g) for _, g in st.samples]
        if len(set(paths)) == 1:
            lines[paths[0]] += st.count
        else:
            lines.update(paths)
    return {path for path in set(missing) if lines[path] >= len(failed)}


def _missing_path(groups: dict[str, str]) -> str:
    return _clean_path(groups.get("path") or groups.get("path2") or groups.get("pbs") or "")


def _dcp_failed_ranks(rule: Rule, ctx: Context) -> set[int] | None:
    """The ranks torch.distributed.checkpoint's CheckpointException lists as failed, or None."""
    ranks: set[int] = set()
    for text in ctx.captures(rule, "ranks", ["dcp_ranks"]):
        ranks |= {int(r) for r in re.findall(r"\b\d{1,7}\b", text)}  # a rank, not a run of digits
    return ranks or None


def _with_setting(why: str, path: str) -> str:
    """``why`` with the setting that moves this kind of file to shared storage, where its path says."""
    for pattern, setting in _SETTINGS:
        if pattern.search(path):
            return f"{why} ({setting})"
    return why


def _pathless_signs(rule: Rule, ctx: Context, rank0_host: str | None, dcp_failed: set[int] | None) -> list[tuple]:
    """Messages that name no path (Megatron's empty --load, huggingface_hub's offline cache miss):
    three-valued like a missing path. Rank 0 printing it too means nothing was saved or downloaded
    anywhere (a wrong path or an empty cache), not node-local storage."""
    signs: list[tuple] = []
    kinds = (
        (
            "megatron_no_load",
            "the --load checkpoint",
            "Megatron found no checkpoint under --load on this rank (--save/--load on a directory every node mounts)",
        ),
        (
            "hub_offline",
            "the Hugging Face cache",
            "this node's HF_HOME lacks what another node downloaded, and offline mode forbids fetching it "
            "(HF_HOME=<shared dir>)",
        ),
    )
    if not ctx.job_failed():
        return signs  # a miss in a run that went on (an optional file) is no finding of its own
    for name, what, why in kinds:
        samples = ctx.samples(rule, [name])
        where = [_away_from_rank0(ctx, ev, rank0_host, dcp_failed) for ev, _ in samples]
        if not samples or False in where:
            continue
        for (ev, _g), away in zip(samples, where):
            if away:
                signs.append((ev, what, why, 0.6, None))
            else:
                signs.append((ev, what, why, 0.4, UNKNOWN_WHERE))
    return signs

def _fell_back_to_tmp(rule: Rule, ctx: Context) -> set:
    """Hosts where slurmstepd could not enter a working directory that is not node-local and ran the
    task in /tmp instead: a relative path then resolves under /tmp there, a consequence, not the cause."""
    return {
        ctx.host_for(ev)
        for ev, g in ctx.samples(rule, ["chdir"])
        if "going to /tmp instead" in ev.text and not node_local(g.get("path", ""))
    }


def _container_sources(rule: Rule, ctx: Context) -> list[tuple]:
    """A --container-mounts source on one node's own disk that this node lacks (pyxis' own check, or
    enroot-mount's ENOENT). A source on shared storage is shared-storage-missing's or a wrong path."""
    signs: list[tuple] = []
    for ev, g in ctx.samples(rule, ["container_src_missing", "enroot_mount_missing"]):
        path = _clean_path(g.get("path", ""))
        if node_local(path):
            why = "a container mount source on node-local storage, made on another node only"
            signs.append((ev, path, why, 0.8, None))
    return signs


def _split_signs(rule: Rule, ctx: Context) -> list[tuple]:
    """Ranks that disagree about what the checkpoint directory holds: Megatron's tracker file giving
    ranks different iterations, Composer's latest checkpoint on rank 0 and not on every rank, a resume
    that loaded on one rank and found nothing on another. One shared directory cannot do that; one
    directory per node can."""
    signs: list[tuple] = []
    for ev, g in ctx.samples(rule, ["tracker_mismatch"]):
        why = (
            f"rank {g['rank']} read iteration {g['found']} from latest_checkpointed_iteration.txt while another rank "
            f"read {g['max']}: the ranks are not reading one --load directory"
        )
        signs.append((ev, "the --load checkpoint directory", why, 0.6, None))
    for ev, _g in ctx.samples(rule, ["composer_all_nodes"]):
        paths = [_clean_path(p) for p in ctx.captures(rule, "path", ["composer_autoresume"])]
        what = paths[0] if paths else "the latest autoresume checkpoint"
        why = "Composer found it on rank 0 and not on every other rank: it was saved on rank 0's node only"
        conf = 0.8 if paths and node_local(paths[0]) else 0.65
        signs.append((ev, what, why, conf, None))
    for empty, loaded in resume_split(ctx):
        if loaded.startswith(SHARED_FS_PREFIXES):
            continue  # a shared file system one node sees and another does not: shared-storage-missing
        why = f"one rank loaded {loaded} while another found no checkpoint there: each node has its own copy of the directory"
        signs.append((empty, loaded, why, 0.75 if node_local(loaded) else 0.5, None if node_local(loaded) else UNKNOWN_WHERE))
    return signs


_RAY_REMOTE = re.compile(r"\((?P<actor>[\w.]+) pid=\d+, ip=(?P<ip>[^)\s]+)\)")
_BP_SUBFILE = re.compile(r"\.bp\.dir/+[^/]+\.bp\.\d+$|\.bp/+data\.\d+$")


def _workflow_signs(rule: Rule, ctx: Context) -> list[tuple]:
    """Tools whose workers on other nodes open what the first process made: Toil's job store (its
    workers say they cannot open it, or die in the line that opens it), ADIOS2's BP subfiles (each
    aggregator writes into the directory rank 0 creates)."""
    signs: list[tuple] = []
    for ev, g in ctx.samples(rule, ["toil_no_jobstore"]):
        path = g["path"].removeprefix("file:")
        why = "Toil's workers run on other nodes and must open the job store: it is not on storage they mount"
        signs.append((ev, f"the Toil job store {path}", why, 0.85 if node_local(path) else 0.8, None))
    for ev, _g in ctx.samples(rule, ["toil_default_jobstore"]):
        why = "Toil's default job store is a local temporary directory, which a grid batch system's workers cannot open"
        signs.append((ev, "the Toil job store", why, 0.8, None))
    frames = ctx.samples(rule, ["toil_resume_frame"])
    if frames and not signs:
        named = ctx.captures(rule, "path", ["toil_no_such"])
        what = f"the Toil job store {named[0].removeprefix('file:')}" if named else "the Toil job store"
        why = "a Toil worker on a batch-system node failed where it opens the job store, before running its job"
        if named:
            signs.append((frames[0][0], what, why + ": it does not exist there", 0.75, None))
        else:
            assumed = "the worker could not see the job store: its exception is not in the excerpt"
            signs.append((frames[0][0], what, why, 0.5, assumed))
    for ev, g in ctx.samples(rule, ["adios_open"]):
        path = g["path"]
        if g.get("errno") not in (None, "", "2") or not _BP_SUBFILE.search(path):
            continue  # a refused open (EACCES) or a file of its own: not the directory rank 0 made
        why = (
            "ADIOS2 writes each aggregator's subfile into the .bp directory that rank 0 creates; on node-local "
            "storage (a burst buffer, NVMe) only rank 0's node has that directory"
        )
        if node_local(path):
            signs.append((ev, path, why, 0.8, None))
        else:
            assumed = "the .bp directory is on storage only rank 0's node sees: the excerpt does not name the file system"
            signs.append((ev, path, why, 0.5, assumed))
    return signs


def _ray_relative_saves(rule: Rule, ctx: Context) -> list[tuple]:
    """A Ray actor on another node than the driver saving to a relative path: Ray prints ", ip=" in a
    worker's prefix only for another node (the input framing turns it into the line's host), and runs
    the worker in that node's copy of the runtime_env working_dir, so the files stay on that node."""
    signs: list[tuple] = []
    for ev, g in ctx.samples(rule, ["ray_relative_save", "ray_relative_saving"]):
        remote = _RAY_REMOTE.search(ev.text)
        if not remote and not (ev.pid is not None and ev.host):
            continue  # the driver's own node, or no worker prefix: the path is where the user looks
        where = f"{remote['actor']} on {remote['ip']}" if remote else f"a worker on {ev.host}"
        why = (
            f"{where} saved it to a relative path, which resolves in that node's own copy of the job's working "
            "directory (Ray's runtime_env working_dir): give an absolute path on shared storage"
        )
        signs.append((ev, g["relpath"].rstrip(".,;:)"), why, 0.5, None))
        break
    return signs


def _path_like(text: str) -> bool:
    """A filesystem path rather than a Hub id (``org/name``): absolute, relative with ./ or ~, or deeper."""
    return text.startswith(("/", "./", "../", "~")) or text.count("/") >= 2
