"""Storage and container analyzers (diag/diagnosis/analyzers/storage/): node-local paths, shared file
systems missing on some nodes, image import and container start."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, leads, one_node, top


def placed(*ranks: int, per_node: int = 8) -> list[str]:
    """NCCL's init lines: which node each rank runs on (four nodes when ranks 0, 8, 16, 24 are given)."""
    return [
        f"slinky-{r // per_node}:{100 + r}:{100 + r} [0] NCCL INFO comm 0x{r:x}1 rank {r} nranks 32 cudaDev 0 "
        "busId 1000 - Init COMPLETE"
        for r in ranks
    ]


def task_failed(*nodes: int) -> list[str]:
    return [f"srun: error: slinky-{n}: task {n}: Exited with exit code 1" for n in nodes]


FOUR_NODES = placed(0, 8, 9, 16, 24)


# --------------------------------------------------------------------------------- node_local_path
TMP_CKPT = "[rank9]: FileNotFoundError: [Errno 2] No such file or directory: '/tmp/ckpt/step_1000.pt'"


def test_missing_node_local_file_names_the_rank_and_its_node(rules):
    finding = found(diagnose(rules, FOUR_NODES + [TMP_CKPT]), "node-local-path")
    assert (finding.severity, finding.ranks, finding.hosts) == ("error", [9], ["slinky-1"])


def test_missing_node_local_file_on_one_node_is_not_about_node_local_storage(rules):
    assert "node-local-path" not in ids(diagnose(rules, one_node() + [TMP_CKPT]))


def test_named_container_missing_on_other_nodes_is_node_local_not_a_runtime_error(rules):
    lines = [
        'slurmstepd: error: pyxis: error: a container with name "train" does not exist, and --container-image is '
        "not set",
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
    ]
    report = diagnose(rules, lines + task_failed(1, 2, 3))
    # pyxis' line names no node: the tasks that failed say which nodes lack the container.
    assert found(report, "node-local-path").hosts == ["slinky-1", "slinky-2", "slinky-3"]
    assert "container-runtime-error" not in ids(report)


def test_named_container_that_no_node_of_the_job_has_was_made_by_another_job(rules):
    # pyxis removes named containers when the job that made them ends (container_scope=job): a
    # name that task 0 cannot find either, with no node shown that has it, is not node-local.
    lines = [
        "$ srun --container-name=train python -c 'import torch'",
        'pyxis: error: a container with name "train" does not exist, and --container-image is not set',
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
        "srun: error: slinky-0: task 0: Exited with exit code 1",
    ]
    leads(rules, lines, "container-runtime-error", says="container_scope=job", not_also="node-local-path")
    # Task 0 only terminated by srun after the others failed: node 0 had it, the others did not.
    terminated = ["srun: error: slinky-0: task 0: Terminated"]
    top(diagnose(rules, lines[1:3] + task_failed(1, 2) + terminated), "node-local-path")


# ---------------------------------------------------------------------------------- shared_storage
def dataset_missing(rank: int) -> str:
    return f"[rank{rank}]: FileNotFoundError: [Errno 2] No such file or directory: '/fsx/datasets/imagenet/train/n01440764'"


def test_vllm_worker_reading_a_missing_model_path_as_a_repo_id_names_its_node(rules):
    worker = "(RayWorkerWrapper pid=344, ip=10.2.30.130) WARNING 12-12 22:31:21 [weight_utils.py:387] "
    lines = [
        worker + "Failed to get file list for '/home/me/.cache/huggingface/hub/models--Qwen/snapshots/c18'. Trying each "
        "pattern in allow_patterns individually until weights have been downloaded. Error: "
        "/home/me/.cache/huggingface/hub/models--Qwen/snapshots/c18 (invalid repository id)",
        "(RayWorkerWrapper pid=1480) INFO 12-12 22:31:21 [default_loader.py:267] Loading weights took 0.20 seconds",
        worker.replace("WARNING", "ERROR") + "Error executing method 'load_model'. This might cause deadlock.",
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert finding.hosts == ["10.2.30.130"] and "read the path as a Hub repo id" in finding.detail


def test_a_node_that_cannot_mount_the_network_file_system_is_shared_storage_missing(rules):
    lines = [
        "---- Begin output of mount -t nfs -o hard,intr,vers=3 head:/home /home ----",
        "STDERR: mount.nfs: access denied by server while mounting head:/home",
        "---- End output of mount -t nfs -o hard,intr,vers=3 head:/home /home ----",
    ]
    finding = found(diagnose(rules, lines), "shared-storage-missing")
    assert "could not mount it (access denied by server while mounting head:/home)" in finding.detail
    # mount(8) failing on a local device is no shared file system.
    usb = "mount: /mnt/usb: special device /dev/sdb1 does not exist."
    assert "shared-storage-missing" not in ids(diagnose(rules, [usb]))


def test_shared_path_missing_on_one_node_only_is_a_mount_problem_there(rules):
    finding = found(diagnose(rules, FOUR_NODES + [dataset_missing(9)]), "shared-storage-missing")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-1"])


def test_shared_path_missing_on_every_node_is_a_wrong_path_not_a_missing_mount(rules):
    report = diagnose(rules, FOUR_NODES + [dataset_missing(r) for r in (0, 8, 9, 16, 24)])
    assert "shared-storage-missing" not in ids(report)


def test_stale_file_handle_is_broken_storage_even_on_one_node(rules):
    line = "slinky-0: [rank12]: OSError: [Errno 116] Stale file handle: '/lustre/proj/ckpt/step_2000.pt'"
    finding = found(diagnose(rules, [line]), "shared-storage-missing")
    assert (finding.ranks, finding.hosts) == ([12], ["slinky-0"])
    # glibc before 2.16 (EL6-era images) words ESTALE "Stale NFS file handle".
    old = "slinky-0: [rank12]: IOError: [Errno 116] Stale NFS file handle: '/nfs/proj/ckpt/step_2000.pt'"
    report = diagnose(rules, [old, "srun: error: slinky-0: task 12: Exited with exit code 1"])
    assert "stale NFS handle" in top(report, "shared-storage-missing").detail


def test_a_fuse_mount_that_is_gone_outweighs_a_cache_path_that_reads_node_local(rules):
    # ENOTCONN on a path comes from a FUSE mount whose daemon exited, never from a local disk.
    line = "OSError: [Errno 107] Transport endpoint is not connected: '/home/jovyan/.cache/torch/hub'"
    report = diagnose(rules, [line, "srun: error: slinky-0: task 3: Exited with exit code 1"])
    assert top(report, "shared-storage-missing") and "node-local-path" not in ids(report)
    # ESTALE on a cache file is as often another client deleting a lock file this one holds (filelock,
    # datasets, a Triton cache two nodes share): a race in the program, so no storage verdict from the name.
    for lines in (
        ["[rank1]: OSError: [Errno 116] Stale file handle: '/home/alice/.cache/huggingface/datasets/cache-3f.arrow'"],
        ["OSError: [Errno 116] Stale file handle"],
        ["OSError: [Errno 107] Transport endpoint is not connected"],  # sockets say ENOTCONN too
    ):
        report = diagnose(rules, lines + ["Command exited with non-zero status 1"])
        assert "shared-storage-missing" not in ids(report), lines
    healthy = ["WARNING: could not remove /home/u/.cache/x.lock: [Errno 107] Transport endpoint is not connected", "Done."]
    assert "shared-storage-missing" not in ids(diagnose(rules, healthy))


def test_container_mount_of_a_missing_shared_file_system_is_folded_into_shared_storage(rules):
    on_node2 = [
        "slinky-2: slurmstepd: error: couldn't chdir to `/lustre/proj/run7': No such file or directory: going to "
        "/tmp instead",
        "slinky-2: slurmstepd: error: pyxis:     enroot-mount: failed to mount: /lustre/proj at "
        "/run/pyxis/0/48213.0/lustre/proj: No such file or directory",
        "slinky-2: slurmstepd: error: pyxis: couldn't start container",
    ]
    report = diagnose(rules, placed(0, 1, 2, 3, per_node=1) + on_node2 + task_failed(2))
    assert found(report, "shared-storage-missing").hosts == ["slinky-2"]
    assert "container-runtime-error" not in ids(report)


# -------------------------------------------------------------------------------- container_import
def test_failed_image_import_names_the_nodes_whose_tasks_failed(rules):
    lines = [
        "slurmstepd: error: pyxis: failed to import docker image: nvcr.io#nvidia/pytorch:24.05-py3",
        "slurmstepd: error: pyxis:     [ERROR] URL https://registry-1.docker.io/v2/library/ubuntu/manifests/22.04 "
        "returned error code: 429 Too Many Requests",
        "slurmstepd: error: pyxis: couldn't start container",
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
    ]
    report = diagnose(rules, lines + task_failed(0, 1))
    finding = found(report, "container-import-failure")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-0", "slinky-1"])
    # pyxis <= 0.23 says "couldn't start container" after a failed import too: not a second cause.
    assert "container-runtime-error" not in ids(report)


def test_weights_saved_to_rank_0s_tmp_are_missing_in_the_directory_another_node_made(rules):
    # transformers' from_pretrained: the directory exists on rank 8's node (its config was written
    # there too) but the weights were saved only on rank 0's local disk.
    lines = [
        "[rank0]: Saving model checkpoint to /tmp/u/sft/final",
        "[rank8]: Traceback (most recent call last):",
        "[rank8]: OSError: Error no file named pytorch_model.bin, model.safetensors, tf_model.h5, model.ckpt.index or "
        "flax_model.msgpack found in directory /tmp/u/sft/final.",
        "srun: error: slinky-1: task 8: Exited with exit code 1",
    ]
    assert "/tmp/u/sft/final" in top(diagnose(rules, lines), "node-local-path").detail
    # The same words on a node that is the whole job: a wrong path, not another node's disk.
    one = diagnose(rules, [lines[2], *one_node()])
    assert "node-local-path" not in ids(one)


def test_enroot_refused_at_the_token_realm_or_given_a_broken_image_is_an_import_failure(rules):
    # enroot's common::curl prints the realm it asked for a token (auth.docker.io/token, no /v2/ in
    # it); docker.sh checks every layer's sha256; runtime.sh refuses a file unsquashfs cannot read.
    for reason in (
        "[ERROR] URL https://auth.docker.io/token returned error code: 429 Too Many Requests",
        "Checksum mismatch: sha256:9c4f3c6d5b0e2a7f8a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7",
        "[ERROR] Invalid image format: /lustre/images/pytorch-24.05.sqsh",
    ):
        lines = [f"slurmstepd: error: pyxis:     {reason}", "slurmstepd: error: pyxis: couldn't start container"]
        report = diagnose(rules, lines + task_failed(0, 1))
        top(report, "container-import-failure")
        assert "container-runtime-error" not in ids(report)
    # Only enroot's line, as pasted from a failed `enroot import`: its [ERROR] URL form is the registry's.
    alone = diagnose(rules, ["[ERROR] URL https://auth.docker.io/token returned error code: 429 Too Many Requests"])
    assert [f.id for f in alone.findings] == ["container-import-failure"]


def test_enroot_without_nvidia_container_cli_cannot_start_the_container_it_imported(rules):
    lines = [
        "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.05-py3",
        "slurmstepd: error: pyxis: container start failed with error code: 1",
        "slurmstepd: error: pyxis: printing enroot log file:",
        "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
        "https://github.com/NVIDIA/libnvidia-container",
        "slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
    ]
    leads(rules, lines + task_failed(0), "container-runtime-error", "nvidia-container-cli", "container-import-failure")


def test_imported_image_and_the_programs_own_curl_404_are_no_import_failure(rules):
    lines = [
        "pyxis: importing docker image: docker.io#library/pytorch:2.5.1-cuda12.4",
        "pyxis: imported docker image: docker.io#library/pytorch:2.5.1-cuda12.4",
        "curl: (22) The requested URL returned error: 404 (optional metrics endpoint, ignored)",
        "training finished",
    ]
    assert "container-import-failure" not in ids(diagnose(rules, lines))


# ------------------------------------------------------------------------------- container_runtime
def test_infiniband_mount_failure_names_the_node_without_ib(rules):
    lines = [
        "slurmstepd: error: pyxis:     enroot-mount: failed to mount: /dev/infiniband at "
        "/run/pyxis/0/48213.0/dev/infiniband: No such file or directory",
        "slurmstepd: error: pyxis: couldn't start container",
    ]
    finding = found(diagnose(rules, lines + task_failed(2)), "container-runtime-error")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-2"])


def test_docker_asked_for_a_device_the_host_lacks_cannot_create_the_container(rules):
    line = (
        'docker: Error response from daemon: error gathering device information while adding custom device '
        '"/dev/infiniband/uverbs4": no such file or directory.'
    )
    report = diagnose(rules, [line])
    finding = top(report, "container-runtime-error")
    assert "no /dev/infiniband/uverbs4" in finding.detail and "fewer HCAs" in finding.detail
    assert "ib-devices-not-mounted" not in ids(report)


# --------------------------------------------------------------- node-local paths in framework words
def test_hugging_face_reading_a_missing_node_local_dir_as_a_repo_id(rules):
    line = (
        "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
        "'/root/.cache/vllm/assets/model_streamer/8d53e465'"
    )
    finding = found(diagnose(rules, [line]), "node-local-path")
    assert "/root/.cache/vllm/assets/model_streamer/8d53e465" in finding.detail
    # A malformed repo id that is not a path is a typo, not storage.
    typo = "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': 'my org/model'"
    assert "node-local-path" not in ids(diagnose(rules, [typo]))


def test_megatron_index_build_failing_on_another_rank_points_at_the_data_path(rules):
    lines = [
        '(worker6, rank=6, pid=8930, ip=10.42.3.242)   File "/opt/megatron-lm/megatron/core/datasets/gpt_dataset.py", line 111, in __init__',
        "(worker6, rank=6, pid=8930, ip=10.42.3.242)     ) = self._build_document_sample_shuffle_indices()",
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "dataset index" in finding.detail and finding.confidence < 0.6


def test_file_rendezvous_on_a_node_local_path(rules):
    lines = [
        "dist.init_process_group(backend='nccl', init_method='file:///tmp/sharedfile', world_size=16, rank=3)",
        "#1  0x00007fd70074e3f0 in thd::init::initFile(std::string, int, std::string, int) ()",
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "/tmp/sharedfile" in finding.detail
    assert "node-local-path" not in ids(diagnose(rules, one_node() + lines))


def test_index_maps_built_on_rank_0_then_another_node_fails(rules):
    lines = [
        "ML-01:  > WARNING: could not find index map files, building the indices on rank 0 ...",
        "ML-01:  > elapsed time to build and save doc-idx mapping (seconds): 840.129082",
        "ML-02: Traceback (most recent call last):",
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "index maps" in finding.detail and finding.hosts == ["ML-02"]
    # The same node failing is not about where the files are.
    same = lines[:2] + ["ML-01: Traceback (most recent call last):"]
    assert "node-local-path" not in ids(diagnose(rules, same))


def test_hugging_face_best_model_and_missing_checkpoint_dirs(rules):
    best = ['  File "/x/transformers/trainer.py", line 2515, in _inner_training_loop', "    self._load_best_model()"]
    assert "best checkpoint" in found(diagnose(rules, best), "node-local-path").detail
    resume = found(
        diagnose(rules, ["ValueError: Can't find a valid checkpoint at /tmp/out/checkpoint-500"]), "node-local-path"
    )
    assert "/tmp/out/checkpoint-500" in resume.detail and "node-local" in resume.detail


def test_checkpoint_directory_under_tmp_in_a_listing_is_a_warning(rules):
    line = "$ ls /tmp/ray/session_2025/working_dir_files/checkpoints/run1/global_step_50/actor"
    finding = found(diagnose(rules, [line]), "node-local-path")
    assert finding.severity == "warning" and "/tmp/ray/session_2025/working_dir_files/checkpoints/" in finding.detail


def test_container_seccomp_and_shell_less_images(rules):
    seccomp = found(
        diagnose(rules, ["slurmstepd: error: pyxis: seccomp filter failed: Function not implemented"]),
        "container-runtime-error",
    )
    assert "seccomp" in seccomp.detail and "Function not implemented" in seccomp.detail
    shell = found(
        diagnose(rules, ["enroot-switchroot: failed to execute: /bin/sh: No such file or directory"]),
        "container-runtime-error",
    )
    assert "no shell" in shell.detail


# ------------------------------------------------------- node_local_path: framework words, thin pastes
SHARDS_GONE = "FileNotFoundError: [Errno 2] No such file or directory: '/opt/ckpt/global_step500/mp_rank_00_model_states.pt'"


def test_a_missing_file_in_a_hostless_excerpt_is_reported_and_says_what_it_assumed(rules):
    finding = found(diagnose(rules, [SHARDS_GONE] + task_failed(2)), "node-local-path")
    assert finding.severity == "error"
    assert any("another node" in a for a in finding.assumed)
    on_rank_5 = found(diagnose(rules, FOUR_NODES + ["[rank9]: " + SHARDS_GONE] + task_failed(1)), "node-local-path")
    assert finding.confidence < on_rank_5.confidence


def test_a_missing_file_on_a_job_known_to_be_one_node_is_not_node_local(rules):
    assert "node-local-path" not in ids(diagnose(rules, one_node() + [SHARDS_GONE] + task_failed(1)))


def test_a_missing_file_on_a_named_shared_file_system_is_left_to_shared_storage(rules):
    line = "FileNotFoundError: [Errno 2] No such file or directory: '/lustre/proj/ckpt/step_10.pt'"
    report = diagnose(rules, ["[rank6]: " + line] + task_failed(2))
    assert "node-local-path" not in ids(report)
    # One process of an excerpt that gives no node count: perhaps that node's mount, said as assumed.
    finding = found(report, "shared-storage-missing")
    assert finding.assumed and finding.confidence < 0.5
    # Rank 0 lacking it too, or a known single node, make it a wrong path.
    assert "shared-storage-missing" not in ids(diagnose(rules, ["[rank0]: " + line] + task_failed(2)))
    assert "shared-storage-missing" not in ids(diagnose(rules, one_node() + ["[rank6]: " + line] + task_failed(1)))


def test_framework_words_for_a_path_this_node_lacks_name_node_local_storage(rules):
    for line in (
        "FileNotFoundError: Checkpoint at /tmp/pl/last.ckpt not found. Aborting training.",
        "FileNotFoundError: Directory /tmp/tok/train is neither a `Dataset` directory nor a `DatasetDict` directory.",
        "OSError: /local/u/sft-out is not a local folder and is not a valid model identifier listed on "
        "'https://huggingface.co/models'",
        "OSError: Unable to open file (unable to open file: name = '/tmp/f/x.h5', errno = 2, error message = 'No such "
        "file or directory', flags = 0, o_flags = 0)",
        "/usr/bin/python: can't open file '/tmp/job7/train.py': [Errno 2] No such file or directory",
        "enroot-load: [ERROR] No such file or directory: /raid/images/run.sqsh",
    ):
        report = diagnose(rules, ["**Error:** `" + line + "`"] + task_failed(1))
        assert report.findings[0].id == "node-local-path", (line, [f.id for f in report.findings])


def test_a_hub_model_id_that_does_not_exist_is_a_typo_not_storage(rules):
    line = "OSError: meta-llama/Llama-2-7b-hff is not a local folder and is not a valid model identifier listed on 'x'"
    assert "node-local-path" not in ids(diagnose(rules, [line] + task_failed(1)))


def test_a_resume_that_found_nothing_is_a_warning_and_only_on_node_local_paths(rules):
    warn = "[WARNING] [engine.py:2800:load_checkpoint] Unable to find latest file at {}/latest, if trying to load"
    finding = found(diagnose(rules, [warn.format("/tmp/ds")]), "node-local-path")
    assert finding.severity == "warning"
    assert "node-local-path" not in ids(diagnose(rules, [warn.format("/lustre/u/ds")]))


def test_sge_failing_to_enter_a_tmp_working_directory_is_node_local(rules):
    qacct = ["hostname     node7", "cwd          /tmp/pipeline/wd3", "failed       28  : changing into working directory"]
    finding = found(diagnose(rules, qacct), "node-local-path")
    assert "working directory" in finding.detail


def test_a_container_mount_target_is_not_a_node_local_path(rules):
    line = (
        "slurmstepd: error: pyxis:     enroot-mount: failed to mount: /srv/a b at "
        "/tmp/enroot-data/user-1/pyxis_9.0/b: No such file or directory"
    )
    assert "node-local-path" not in ids(diagnose(rules, [line] + task_failed(1)))


def test_per_job_local_scratch_and_cloud_instance_disks_are_node_local(rules):
    for path in ("/localscratch/u.4411/data/shard-0.bin", "/mnt/resource/ckpt/step_5.pt", "$SLURM_TMPDIR/ds/x.arrow"):
        line = f"[rank9]: FileNotFoundError: [Errno 2] No such file or directory: '{path}'"
        finding = found(diagnose(rules, FOUR_NODES + [line]), "node-local-path")
        assert "node-local storage" in finding.detail, path


# ----------------------------------------------------------------- containers in other runtimes' words
def test_container_start_failures_in_pyxis_enroot_docker_and_apptainer_words(rules):
    for line in (
        "slurmstepd: error: pyxis: container start error: /usr/bin/enroot exited with code 1",
        "slurmstepd: error: pyxis:     enroot-nsenter: failed to create user namespace: Operation not permitted",
        "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
        "FATAL:   container creation failed: mount hook function failure: no loop devices available",
    ):
        report = diagnose(rules, [line, "srun: error: n4: task 0: Exited with exit code 1"])
        assert report.findings[0].id == "container-runtime-error", (line, [f.id for f in report.findings])


def test_image_pulls_refused_by_docker_registries_and_apptainer_are_import_failures(rules):
    for line, says in (
        ("Error response from daemon: manifest for nvcr.io/nvidia/pytorch:99.01-py3 not found: manifest unknown",
         "manifest unknown"),
        ("Error response from daemon: toomanyrequests: You have reached your pull rate limit.", "rate limit"),
        ("FATAL:   While making image from oci registry: error fetching image to cache: unauthorized", "Apptainer"),
    ):
        report = diagnose(rules, [line, "srun: error: n4: task 0: Exited with exit code 1"])
        assert report.findings[0].id == "container-import-failure", (line, [f.id for f in report.findings])
        assert says in report.findings[0].detail


def test_the_rank_that_died_of_a_missing_file_outranks_its_peers_watchdog_timeouts(rules):
    watchdog = (
        "[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for "
        "600042 milliseconds before timing out."
    )
    report = diagnose(rules, FOUR_NODES + [TMP_CKPT, watchdog] + task_failed(1))
    assert report.findings[0].id == "node-local-path"
    assert found(report, "nccl-timeout").explained_by == "node-local-path"


def test_a_shared_file_system_client_that_broke_is_named_even_without_a_path(rules):
    for line, says in (
        ("[Tue Mar  4 10:01:02 2025] nfs: server fs01 not responding, still trying", "NFS server"),
        ("LustreError: 167-0: scratch-OST0012-osc: This client was evicted by scratch-OST0012; in progress "
         "operations using this service will fail.", "evicted"),
        ("OSError: [Errno 108] Cannot send after transport endpoint shutdown: '/lustre/p/ckpt/s.pt'", "errno 108"),
    ):
        finding = found(diagnose(rules, [line]), "shared-storage-missing")
        assert says in finding.detail, finding.detail


def test_a_file_this_job_saved_and_another_node_then_missed_was_on_that_nodes_disk(rules):
    lines = [
        "slinky-0: [rank0]: Saving model checkpoint to /opt/out/checkpoint-500",
        "slinky-1: [rank9]: FileNotFoundError: [Errno 2] No such file or directory: "
        "'/opt/out/checkpoint-500/trainer_state.json'",
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "saved it" in finding.detail
    same_node = [lines[0], lines[1].replace("slinky-1: [rank9]", "slinky-0: [rank0]")]
    assert "node-local-path" not in ids(diagnose(rules, same_node))


def test_go_and_java_programs_word_a_missing_file_their_own_way(rules):
    for line in (
        "Error: open /tmp/job/cfg.yaml: no such file or directory",
        "java.io.FileNotFoundException: /local/spark/blockmgr/shuffle_0_1_0.index (No such file or directory)",
    ):
        assert diagnose(rules, [line] + task_failed(2)).findings[0].id == "node-local-path", line


def test_a_jit_extension_missing_from_its_build_dir_is_a_failed_build_not_node_local_storage(rules):
    # cpp_extension.load builds into the directory whenever the module is absent, so a node with its own
    # cache builds its own copy; the import fails only after a build that failed in a process sharing it.
    ext = (
        "[rank9]: ImportError: /home/u/.cache/torch_extensions/py311_cu124/fused_adam/fused_adam.so: cannot open "
        "shared object file: No such file or directory"
    )
    assert "node-local-path" not in ids(diagnose(rules, FOUR_NODES + [ext]))
    built = [
        "FAILED: multi_tensor_adam.cuda.o",
        "RuntimeError: Error building extension 'fused_adam'",
        "ImportError: /root/.cache/torch_extensions/py39_cu121/fused_adam/fused_adam.so: cannot open shared object "
        "file: No such file or directory",
    ]
    assert diagnose(rules, built + task_failed(1)).findings[0].id == "unexplained-failure"
    system = "ImportError: /usr/lib/x86_64-linux-gnu/libmlx5.so.1: cannot open shared object file: No such file or directory"
    assert "node-local-path" not in ids(diagnose(rules, FOUR_NODES + [system] + task_failed(1)))


def test_missing_files_in_a_run_that_went_on_or_of_the_system_are_no_storage_finding(rules):
    healthy = [
        "/var/spool/slurmd/job4411/slurm_script: line 5: /etc/profile.d/lmod.sh: No such file or directory",
        "cat: /opt/site/motd.txt: No such file or directory",
        "Epoch 10/10 loss 0.71",
        "Training completed.",
    ]
    assert "node-local-path" not in ids(diagnose(rules, healthy))
    system = "bash: /usr/local/bin/nvidia-persistenced: No such file or directory"
    assert "node-local-path" not in ids(diagnose(rules, [system] + task_failed(1)))


def test_multiprocessings_leaked_semaphore_names_are_no_missing_files(rules):
    # resource_tracker sweeping POSIX semaphores at exit ('/mp-<id>' is sem_open's name, not a path), after
    # a DataLoader worker's finalizer already unlinked them; an exception line makes the run look failed.
    lines = [
        "    sem_unlink(name)",
        "FileNotFoundError: [Errno 2] No such file or directory",
        "/usr/lib/python3.10/multiprocessing/resource_tracker.py:237: UserWarning: resource_tracker: '/mp-73fff5g1': "
        "[Errno 2] No such file or directory",
        "/usr/lib/python3.10/multiprocessing/resource_tracker.py:237: UserWarning: resource_tracker: '/mp-jfgxfl0i': "
        "[Errno 2] No such file or directory",
    ]
    assert "node-local-path" not in ids(diagnose(rules, lines))


def test_shell_noise_and_optional_files_in_a_run_that_went_on_are_no_finding(rules):
    healthy = [
        "rm: cannot remove '/tmp/run7/lock': No such file or directory",
        "ls: cannot access '/tmp/run7/old_ckpt': No such file or directory",
        "Failed to load generation config for /tmp/run7/sft: /tmp/run7/sft does not appear to have a file named "
        "generation_config.json. Proceeding without.",
        "Epoch 3 loss 0.9",
    ]
    assert "node-local-path" not in ids(diagnose(rules, FOUR_NODES + healthy))


def test_a_file_missing_from_an_installed_package_is_not_about_storage(rules):
    line = (
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/opt/conda/lib/python3.11/site-packages/tokenizers/data/vocab.json'"
    )
    assert "node-local-path" not in ids(diagnose(rules, [line] + task_failed(1)))


def test_enroot_import_run_by_hand_fails_at_the_registry(rules):
    lines = [
        "enroot# enroot import 'docker://$oauthtoken@nvcr.io#nvidia/cuda:10.0-base'",
        "[INFO] Querying registry for permission grant",
        "[INFO] Authenticating with user: $oauthtoken",
        "[ERROR] URL https://nvcr.io/proxy_auth returned error code: 401 Unauthorized",
    ]
    finding = found(diagnose(rules, lines), "container-import-failure")
    assert "401" in finding.detail
    # The command the fix names keeps enroot's registry separator.
    assert "docker://$oauthtoken@nvcr.io#nvidia/cuda:10.0-base" in finding.remediation
    # A program's own HTTP error, in no enroot wording and with no enroot import around it, is not an image import.
    assert "container-import-failure" not in ids(diagnose(rules, ["URL https://api.example.org/items returned error code: 500"]))


def test_whiteouts_that_enroot_cannot_convert_are_an_import_failure(rules):
    lines = [
        "[INFO] Converting whiteouts...",
        "0% 0:1=0s e96e057aae67      enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted",
    ]
    assert "enroot+caps" in found(diagnose(rules, lines), "container-import-failure").detail


def test_tensorflow_shards_of_a_sharded_save_missing_on_the_merging_task_are_node_local(rules):
    # Markdown bold and a numbered list, as pasted; the ps task wrote its shard to its own disk.
    lines = ["1. Error on ps-1: **Not found: /train_dir/model.ckpt-0_temp_5fcd97c8/part-00000-of-00002.index**"]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "_temp_" in finding.detail and "/train_dir/model.ckpt-0_temp_5fcd97c8" in finding.detail
    # A checkpoint that is simply not there (no sharded save's temp directory) is not called node-local.
    assert "node-local-path" not in ids(diagnose(rules, ["Not found: /train_dir/model.ckpt-1000.index"]))


# Session 17's upstream forms: (line, the cause it leads with, what its detail must say).
UPSTREAM_CONTAINER_FORMS = [
    (
        "slurmstepd: error: pyxis:     enroot-aufs2ovlfs: failed to create user namespace: Operation not permitted",
        "container-import-failure",
        "unprivileged user namespace",
    ),
    (
        "slurmstepd: error: pyxis:     enroot-mksquashovlfs: failed to execute mksquashfs: No such file or directory",
        "container-import-failure",
        "squashfs-tools",
    ),
    (
        "FATAL:   could not open image /scratch/u/pytorch_24.05.sif: image format not recognized",
        "container-import-failure",
        "Apptainer could not get",
    ),
    (
        "invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not "
        "supported. Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.",
        "container-runtime-error",
        "--runtime=nvidia",
    ),
]


def test_import_helpers_a_bad_image_file_and_a_cdi_mode_hook_in_their_upstream_words(rules):
    for line, cause, says in UPSTREAM_CONTAINER_FORMS:
        assert says in top(diagnose(rules, [line]), cause).detail, line


def test_enroot_directories_a_user_cannot_create_stop_the_container_whatever_their_path(rules):
    relayed = [
        "slurmstepd-hades: error: pyxis:     mkdir: cannot create directory ‘/raid’: Permission denied",
        "slurmstepd-hades: error: pyxis:     mkdir: cannot create directory ‘/tmp/enroot-data’: Permission denied",
    ]
    finding = diagnose(rules, relayed).findings[0]
    assert finding.id == "container-runtime-error" and "ENROOT_DATA_PATH" in finding.detail
    # enroot's default runtime path is the user's XDG runtime directory.
    alone = diagnose(rules, ["mkdir: cannot create directory ‘/run/user/140196’: Permission denied"]).findings[0]
    assert alone.id == "container-runtime-error" and "/run/user/140196 " in alone.detail
    # A directory the job's own script could not make is not enroot's.
    plain = diagnose(rules, ["mkdir: cannot create directory ‘/scratch/run3’: Permission denied"])
    assert "container-runtime-error" not in ids(plain)


# ------------------------------------------------ checkpoint and dataset libraries' own wordings
DCP_METADATA = "[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/home/u/dcp/step_200/.metadata'"


def dcp_failure(failed: str) -> list[str]:
    """torch.distributed.checkpoint's gathered failure as every rank prints it, under its own prefix."""
    return [
        "[rank0]: Traceback (most recent call last):",
        "[rank0]:     dcp.load(state_dict, checkpoint_id=args.ckpt)",
        f"[rank0]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([{failed}])",
        "[rank0]: Traceback (most recent call last): (RANK 8)",
        "[rank0]:   File \"/usr/lib/python3/dist-packages/torch/distributed/checkpoint/filesystem.py\", line 650, in "
        "read_metadata",
        DCP_METADATA,
        "E1203 10:00:01.000 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 "
        "(pid: 4411) of binary: /usr/bin/python3",
    ]


def test_dcp_metadata_missing_on_the_ranks_it_lists_is_rank_0s_disk(rules):
    # Rank 0 prints rank 8's traceback: the exception's rank list, not the prefix, says who lacks it.
    finding = found(diagnose(rules, dcp_failure("8, 9, 10, 11, 12, 13, 14, 15")), "node-local-path")
    assert finding.ranks == list(range(8, 16))
    assert "rank 0 did not run" in finding.detail and "FileSystemWriter" in finding.detail
    # Every rank, rank 0 included, lacking it: a wrong checkpoint_id, not node-local storage.
    every = ", ".join(str(r) for r in range(16))
    assert "node-local-path" not in ids(diagnose(rules, dcp_failure(every)))


def test_megatron_index_cache_missing_away_from_rank_0_names_the_cache_setting(rules):
    line = (
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/data/cache/GPTDataset_indices/8a1f2e-GPTDataset-train-document_index.npy'"
    )
    finding = found(diagnose(rules, [f"[rank9]: {line}"] + task_failed(1)), "node-local-path")
    assert "--data-cache-path" in finding.detail
    # No rank shown: still the index cache, with what that assumes said.
    finding = found(diagnose(rules, [line] + task_failed(1)), "node-local-path")
    assert any("index cache" in a for a in finding.assumed)
    # Rank 0, which builds it, lacking it is something else.
    assert "node-local-path" not in ids(diagnose(rules, [f"[rank0]: {line}"] + task_failed(0)))


def test_hub_offline_cache_miss_is_three_valued(rules):
    line = (
        "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
        "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set 'local_files_only' "
        "to False."
    )
    finding = found(diagnose(rules, FOUR_NODES + [f"[rank9]: {line}"] + task_failed(1)), "node-local-path")
    assert "HF_HOME" in finding.detail and finding.hosts == ["slinky-1"]
    unknown = found(diagnose(rules, [line] + task_failed(1)), "node-local-path")
    assert unknown.confidence < finding.confidence and unknown.assumed
    # Rank 0 missing it too: nothing was downloaded anywhere.
    both = [f"[rank0]: {line}", f"[rank9]: {line}"]
    assert "node-local-path" not in ids(diagnose(rules, FOUR_NODES + both + task_failed(0, 1)))


def test_checkpoint_libraries_wordings_of_a_node_local_directory(rules):
    lines = [
        "megatron.core.dist_checkpointing.core.CheckpointingException: Checkpoint directory /tmp/mcore/iter_0000100 "
        "does not exist",
        "FileNotFoundError: Checkpoint at /tmp/orbax/100/default not found.",
        "FileNotFoundError: No steps found in /local/u/orbax.",
        'ValueError: NOT_FOUND: Error opening "zarr" driver: Metadata at local file "/tmp/ckpt/100/params/.zarray" '
        "does not exist",
        "ValueError: Matching checkpoint not found: /tmp/flax/checkpoint_100",
        "ValueError: Tried to find /tmp/accel/checkpoints/checkpoint_3 but folder does not exist",
        "FileNotFoundError: Dataset json: could not find data in /tmp/hf/datasets/json/default-1/0.0.0/abc. Please "
        "make sure to call builder.download_and_prepare()",
        "FileNotFoundError: No such file: '/tmp/tok/train/dataset_info.json'. Expected to load a `Dataset` object "
        "but provided path is not a `Dataset`.",
    ]
    for line in lines:
        finding = top(diagnose(rules, FOUR_NODES + [f"[rank9]: {line}"] + task_failed(1)), "node-local-path")
        assert finding.hosts == ["slinky-1"], line


def test_ray_storage_check_in_its_later_wording_names_storage_path(rules):
    lines = [
        "RuntimeError: Unable to set up cluster storage with the following settings:",
        "StorageContext<",
        "  storage_path=/home/ray/ray_results",
        ">",
        "Check that all nodes in the cluster have read/write access to the configured storage path.",
    ]
    assert "storage_path" in found(diagnose(rules, lines), "node-local-path").detail


def test_a_working_directory_slurmstepd_may_not_enter_is_not_a_missing_one(rules):
    # slurmstepd prints the errno: only "No such file or directory" says the directory is absent here.
    refused = "slurmstepd: error: couldn't chdir to `/home/alice/run7': Permission denied: going to /tmp instead"
    assert "node-local-path" not in ids(diagnose(rules, [refused] + task_failed(1)))
    stale = "slurmstepd: error: couldn't chdir to `/home/alice/run7': Stale file handle: going to /tmp instead"
    assert ids(diagnose(rules, [stale] + task_failed(1))) & {"node-local-path"} == set()
    assert "shared-storage-missing" in ids(diagnose(rules, [stale] + task_failed(1)))


def test_slurmstepd_input_file_on_a_shared_file_system_this_node_lacks(rules):
    line = "slurmstepd: error: Could not open stdin file /gpfs/proj/in/prompts.txt: No such file or directory"
    assert "/gpfs/proj/in/prompts.txt" in found(diagnose(rules, [line] + task_failed(1)), "shared-storage-missing").detail


def test_composer_sharded_checkpoint_missing_is_three_valued(rules):
    line = "FileNotFoundError: /home/u/composer/ep1-ba100 not found!"
    finding = found(diagnose(rules, FOUR_NODES + [f"[rank9]: {line}"] + task_failed(1)), "node-local-path")
    assert "rank 0 did not run" in finding.detail
    # Rank 0 lacking it as well: a wrong load_path.
    assert "node-local-path" not in ids(diagnose(rules, FOUR_NODES + [f"[rank0]: {line}"] + task_failed(0)))


def test_slurmds_own_copy_of_the_batch_script_missing_is_the_nodes_fault_not_a_node_local_path(rules):
    report = diagnose(rules, ["slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory"])
    assert "node-local-path" not in ids(report)
    assert "SlurmdSpoolDir" in found(report, "unexplained-failure").detail
    # The user's own script on /tmp is still the job's node-local path.
    user = diagnose(rules, ["slurmstepd: error: execve(): /tmp/u/job/train.sh: No such file or directory"])
    assert "node-local-path" in ids(user)


def test_a_tool_failing_on_the_images_files_beside_enroot_imports_steps_is_an_import_failure(rules):
    lines = [
        "$ enroot import dockerd://local/bug-repro",
        "[INFO] Fetching image",
        "[INFO] Extracting image content...",
        "find: ‘rootfs/var/lib/snapd/void’: Permission denied",
    ]
    assert "snapd/void" in top(diagnose(rules, lines), "container-import-failure").detail
    # The same find error in a job that imports nothing is not about containers.
    assert "container-import-failure" not in ids(diagnose(rules, lines[-1:]))


def test_enroot_import_whiteouts_not_permitted_point_at_the_temp_directory(rules):
    lines = [
        "$ enroot import docker://dispel4py/docker.openmpi",
        "[INFO] Converting whiteouts...",
        "90% 37:4=0s 064f9af0   **enroot-aufs2ovlfs: failed to create ovlfs whiteout**: /var/tmp/pbs.15/enroot.dv/39/x: Operation not permitted",
    ]
    finding = found(diagnose(rules, lines), "container-import-failure")
    assert "dispel4py/docker.openmpi" in finding.detail and "nodev" in finding.detail


def test_mksquashfs_that_cannot_create_the_output_names_the_output_directory(rules):
    lines = [
        "lcapps@xxx:/mnt/scratch/lcapps/$ enroot import --output nccl.squash 'docker://ubuntu'",
        "[INFO] Creating squashfs filesystem...",
        "_Could not create destination file: No such file or directory_",
    ]
    finding = found(diagnose(rules, lines), "container-import-failure")
    assert "could not import ubuntu" in finding.detail and "--output directory" in finding.detail


def test_a_rename_whose_source_is_gone_is_two_writers_of_one_shared_path_not_a_node_local_one(rules):
    line = "FileNotFoundError: [Errno 2] No such file or directory: 'output/run1/tmp.pth.tar' -> 'output/run1/last.pth.tar'"
    report = diagnose(rules, [line])
    assert "node-local-path" not in ids(report)
    assert "global rank 0" in top(report, "unexplained-failure").detail
    # The same relative path read and not found is still a node's own working directory.
    read = "FileNotFoundError: [Errno 2] No such file or directory: 'output/run1/last.pth.tar'"
    assert "node-local-path" in ids(diagnose(rules, [read]))


def test_a_batch_script_running_a_relative_path_that_is_not_there_is_a_working_directory_question(rules):
    line = "/var/spool/slurm/d/job1177731/slurm_script: line 2: ./dask-worker-scriptz8gmf_cpsh: No such file or directory"
    finding = top(diagnose(rules, [line]), "node-local-path")
    assert "./dask-worker-scriptz8gmf_cpsh" in finding.detail and "working directory" in finding.detail


def test_cpps_filesystem_error_names_the_missing_path_in_brackets(rules):
    lines = [
        "1: terminate called after throwing an instance of 'std::filesystem::__cxx11::filesystem_error'",
        "1:   what():  filesystem error: cannot open file: No such file or directory [/tmp/ckpt/model.bin]",
    ]
    assert "/tmp/ckpt/model.bin" in top(diagnose(rules, lines), "node-local-path").detail


def test_a_node_without_the_pyxis_spank_plugin_runs_the_task_without_its_container(rules):
    finding = found(diagnose(rules, ['slurmstepd: warning: no SPANK plugin found to process option "pyxis"']), "container-runtime-error")
    assert "plugstack.conf" in finding.detail


def test_docker_and_apptainer_without_their_gpu_support(rules):
    docker = 'docker: Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu compute utility]].'
    assert top(diagnose(rules, [docker]), "container-runtime-error").severity == "error"
    nv = "WARNING: Could not find any nv libraries on this host!"
    assert top(diagnose(rules, [nv]), "container-runtime-error").severity == "warning"
    failed = [nv, "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"]
    assert top(diagnose(rules, failed), "container-runtime-error").severity == "error"
    assert "setuid" in top(diagnose(rules, ["FATAL:   nvidia-container-cli not allowed in setuid mode"]), "container-runtime-error").detail


def test_ngc_banners_and_cdi_devices_a_node_does_not_have(rules):
    no_driver = "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available."
    assert top(diagnose(rules, [no_driver]), "container-runtime-error").severity == "warning"
    old = [
        "ERROR: This container was built for NVIDIA Driver Release 560.35 or later, but",
        "       version 535.183.01 was detected and compatibility mode is UNAVAILABLE.",
    ]
    assert "560.35" in top(diagnose(rules, old), "container-runtime-error").detail
    cdi = "FATAL:   while setting up CDI devices: while setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all"
    assert "nvidia.com/gpu=all" in top(diagnose(rules, [cdi]), "container-runtime-error").detail


def test_any_frameworks_exception_that_says_a_node_local_path_is_missing(rules):
    for line in (
        "FileNotFoundError: can't find model states file at '/tmp/ds_ckpt/global_step2000/mp_rank_00_model_states.pt'",
        "megatron.core.dist_checkpointing.core.CheckpointingException: Object shard "
        "/tmp/megatron_ckpt/iter_0002000/rng_state/shard_0.0.9_1.1.16.pt not found",
    ):
        assert top(diagnose(rules, [line]), "node-local-path").severity == "error", line
    # The same words about a path on a shared file system are a wrong path or a missing mount, not this.
    shared = "megatron.core.dist_checkpointing.core.CheckpointingException: Object shard /lustre/proj/ckpt/shard_0.pt not found"
    assert "node-local-path" not in ids(diagnose(rules, [shared]))


def test_a_node_that_cannot_mount_the_shared_file_system_for_want_of_its_client(rules):
    lines = [
        '  Warning  FailedMount  32s (x8 over 96s)  kubelet  MountVolume.SetUp failed for volume "nfs-root" : '
        "mount failed: exit status 32",
        "Output: mount: /var/lib/kubelet/pods/0c1d/volumes/kubernetes.io~nfs/nfs-root: bad option; for several "
        "filesystems (e.g. nfs, cifs) you might need a /sbin/mount.<type> helper program.",
    ]
    finding = top(diagnose(rules, lines), "shared-storage-missing")
    assert finding.severity == "error" and "could not mount" in finding.detail
    # A volume of another kind the kubelet could not set up is no file system mount.
    configmap = ['Warning FailedMount 12s kubelet MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found']
    assert "shared-storage-missing" not in ids(diagnose(rules, configmap))


def test_pytorch_finding_no_driver_is_a_container_without_gpus_an_error_once_the_job_fails(rules):
    warning = (
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: "
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver"
    )
    assert found(diagnose(rules, [warning]), "container-runtime-error").severity == "warning"
    failed = [warning, "RuntimeError: No CUDA GPUs are available", "srun: error: n1: task 0: Exited with exit code 1"]
    assert found(diagnose(rules, failed), "container-runtime-error").severity == "error"


# ------------------------------------------------ session 16: resumes, index caches, mounts (upstream forms)
def ds_latest_missing(where: str) -> str:
    return (
        f"[2025-03-02 12:01:33,750] [WARNING] [engine.py:2914:load_checkpoint] Unable to find latest file at {where}/latest, "
        "if trying to load latest checkpoint please ensure this file exists or pass an explicit checkpoint tag when loading "
        "a checkpoint."
    )


def ds_loading(where: str) -> str:
    return (
        "[2025-03-02 12:01:34,102] [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading checkpoint from "
        f"{where}/global_step2000/mp_rank_00_model_states.pt..."
    )


def test_one_node_resuming_while_another_finds_no_checkpoint_in_the_same_tmp_dir_is_node_local(rules):
    lines = [
        "[rank0]:[titan] 2025-03-02 12:01:33,750 - root - INFO - Loading the checkpoint from /tmp/titan/checkpoint/step-1000.",
        "[rank8]:[titan] 2025-03-02 12:01:33,752 - root - INFO - No checkpoint was provided, this is a fresh start.",
    ]
    finding = top(diagnose(rules, lines), "node-local-path")
    # Nothing failed yet: the ranks disagree, which is worth a warning, not an error.
    assert finding.severity == "warning" and "found no checkpoint there" in finding.detail


def test_a_shared_checkpoint_one_node_loads_and_another_cannot_see_is_shared_storage(rules):
    lines = ["0: " + ds_loading("/lustre/proj/ckpt/gpt"), "8: " + ds_latest_missing("/lustre/proj/ckpt/gpt")]
    finding = top(diagnose(rules, lines), "shared-storage-missing")
    assert "another found nothing there" in finding.detail
    # Every rank of a first run finding no 'latest' is no finding at all.
    first_run = [f"{t}: " + ds_latest_missing("/lustre/proj/ckpt/gpt") for t in (0, 8)]
    assert not {"node-local-path", "shared-storage-missing"} & ids(diagnose(rules, first_run))


def test_ranks_reading_different_megatron_tracker_iterations_have_one_load_dir_per_node(rules):
    line = (
        "WARNING: on rank 8 found iteration 1000 in the metadata while max iteration across the ranks is 2000, "
        "replacing it with max iteration."
    )
    finding = top(diagnose(rules, FOUR_NODES + [line]), "node-local-path")
    assert finding.severity == "warning" and "not reading one --load directory" in finding.detail


def test_composer_checkpoint_found_on_rank_0_only_names_the_local_save_folder(rules):
    looking = (
        "2025-03-02 12:01:33,750: rank8[48211][MainThread]: INFO: composer.trainer.trainer: Looking for autoresume "
        "checkpoint: sft/checkpoints/latest-rank0.pt (remote), /tmp/composer/sft/checkpoints/latest-rank0.pt (local)"
    )
    failed = "RuntimeError: Downloading the checkpoint to all nodes failed"
    finding = top(diagnose(rules, [looking, failed]), "node-local-path")
    assert "/tmp/composer/sft/checkpoints/latest-rank0.pt" in finding.detail and finding.severity == "error"


def test_a_relative_script_run_from_the_tmp_fallback_blames_the_missing_working_directory(rules):
    lines = [
        "slurmstepd: error: couldn't chdir to `/lustre/proj/alice/llama3': No such file or directory: going to /tmp instead",
        "/opt/conda/bin/python3: can't open file '/tmp/train.py': [Errno 2] No such file or directory",
    ]
    report = diagnose(rules, lines)
    top(report, "shared-storage-missing")
    assert "node-local-path" not in ids(report)


def test_a_container_mount_source_under_tmp_is_node_local_not_a_runtime_error(rules):
    lines = ["slurmstepd: error: pyxis: --container-mounts: source path does not exist: /tmp/alice/data"]
    report = diagnose(rules, placed(0, 8) + lines + task_failed(1))
    assert "/tmp/alice/data" in top(report, "node-local-path").detail
    assert "container-runtime-error" not in ids(report)
    # A squash file that enroot create cannot find on this node's /tmp: the same.
    squash = [
        "slurmstepd: error: pyxis: failed to create container filesystem for image: /tmp/pytorch.sqsh",
        "slurmstepd: error: pyxis: printing enroot log file:",
        "slurmstepd: error: pyxis:     [ERROR] No such file or directory: /tmp/pytorch.sqsh",
    ]
    report = diagnose(rules, placed(0, 8) + squash + task_failed(1))
    top(report, "node-local-path")
    assert "container-runtime-error" not in ids(report)


def test_a_checkpoint_library_not_finding_a_shared_path_on_one_node_is_shared_storage(rules):
    def missing(rank: int) -> str:
        return (
            f"[rank{rank}]: megatron.core.dist_checkpointing.core.CheckpointingException: Checkpoint directory "
            "/lustre/proj/ckpt/gpt/iter_0002000 does not exist"
        )

    finding = found(diagnose(rules, FOUR_NODES + [missing(9)]), "shared-storage-missing")
    assert finding.hosts == ["slinky-1"]
    # Missing for every rank, rank 0 (which saved it) included: a wrong path, not a mount.
    assert "shared-storage-missing" not in ids(diagnose(rules, FOUR_NODES + [missing(r) for r in (0, 8, 9, 16, 24)]))


def test_hugging_face_missing_a_shared_model_dir_on_one_node_is_shared_storage_not_node_local(rules):
    tokenizer = (
        "[rank9]: OSError: Can't load tokenizer for '/lustre/proj/models/llama3-8b'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name."
    )
    report = diagnose(rules, FOUR_NODES + [tokenizer] + task_failed(1))
    assert found(report, "shared-storage-missing").hosts == ["slinky-1"]
    assert "node-local-path" not in ids(report)
    # Megatron-Core's notice before it creates the directory, in a run that goes on: no finding.
    notice = "[rank9]: Checkpoint directory /lustre/proj/ckpt/gpt/iter_0002000 does not exist"
    assert "shared-storage-missing" not in ids(diagnose(rules, FOUR_NODES + [notice]))


def test_a_missing_file_python_printed_and_ignored_at_exit_is_no_node_local_path(rules):
    # DeepSpeed's triton kernels save an autotune cache from an atexit callback after the run finished.
    missing = [
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/deepspeed/ops/transformer/inference/triton/matmul_ext.py", '
        "line 444, in matmul_ext_update_autotune_table",
        "FileNotFoundError: [Errno 2] No such file or directory: '/home/alice/.triton/autotune/Fp16Matmul_2d_kernel.pickle'",
    ]
    ignored = ["Exception ignored in atexit callback: <function matmul_ext_update_autotune_table at 0x7f1c2d3e4f70>"]
    assert "node-local-path" in ids(diagnose(rules, missing))
    assert "node-local-path" not in ids(diagnose(rules, ignored + missing))


def test_a_script_that_cannot_cd_into_its_directory_is_a_node_local_warning(rules):
    # A job script's cd on a node that lacks the directory (SkyPilot's synced workdir on one node only).
    report = diagnose(rules, ["bash: cd: /home/myuser/sky_workdir: No such file or directory"])
    finding = top(report, "node-local-path")
    assert finding.severity == "warning" and "/home/myuser/sky_workdir" in finding.detail
    # ... but a shared file system's path missing is not a node-local layout.
    assert "node-local-path" not in ids(diagnose(rules, ["bash: cd: /lustre/proj/run: No such file or directory"]))


# ------------------------------------------------- what the job made or removed itself, workflow tools
def test_a_checkpoint_every_rank_rotates_is_the_jobs_own_deletion_not_storage(rules):
    lines = [
        "[default0]:[17:14:34] DEBUG Removing past checkpoint for step 15 (/shared/outputs/ckpt/step_15)",
        "[default1]:[17:14:41] DEBUG Removing past checkpoint for step 15 (/shared/outputs/ckpt/step_15)",
        "[default1]:FileNotFoundError: [Errno 2] No such file or directory: '/shared/outputs/ckpt/step_15/trainer'",
    ]
    top(diagnose(rules, lines), "unexplained-failure")


def test_a_removal_of_another_step_does_not_hide_a_node_local_miss(rules):
    lines = FOUR_NODES + ["[rank0]: Deleting older checkpoint /tmp/ckpt/step_900", TMP_CKPT]
    top(diagnose(rules, lines), "node-local-path")


def test_a_file_gone_inside_shutil_rmtree_is_no_node_local_path(rules):
    lines = [
        '[rank3]:   File "/usr/lib/python3.10/shutil.py", line 679, in _rmtree_safe_fd',
        "[rank3]:     os.unlink(entry.name, dir_fd=topfd)",
        "[rank3]: FileNotFoundError: [Errno 2] No such file or directory: '/home/u/run/ckpt/checkpoint-500/optimizer.pt'",
    ]
    assert "node-local-path" not in ids(diagnose(rules, lines))


def test_a_chmod_of_a_cache_file_another_writer_replaced_is_no_node_local_path(rules):
    lines = [
        "terminate called after throwing an instance of 'boost::filesystem::filesystem_error'",
        '  what():  boost::filesystem::permissions: No such file or directory: "/home/u/.config/miopen//gfx90a.ufdb.txt"',
        "[ERROR] 2023-01-01 10:00:00,000 api: failed (exitcode: -6) local_rank: 1 (pid: 27837) of binary: /usr/bin/python",
    ]
    top(diagnose(rules, lines), "unexplained-failure")


def test_a_tree_unpacked_into_the_processs_own_mkdtemp_is_no_node_local_path(rules):
    line = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmp3o00dg6a/checkpoint/composer_states.pt'"
    assert "node-local-path" not in ids(diagnose(rules, [line]))


def test_a_mkstemp_name_another_rank_opens_stays_node_local(rules):
    line = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/tmpsec297zt'"
    top(diagnose(rules, [line]), "node-local-path")


def test_makedirs_enoent_is_a_dangling_link_to_storage_this_node_lacks(rules):
    lines = [
        '  File "/opt/smrtlink/python2.7/os.py", line 157, in makedirs',
        "    mkdir(name, mode)",
        "OSError: [Errno 2] No such file or directory: '/opt/smrtlink/userdata/tmp_dir/pb-tmp-271cc25e'",
    ]
    finding = found(diagnose(rules, lines), "shared-storage-missing")
    assert finding.assumed and "symbolic link" in finding.detail


def test_a_toil_worker_that_cannot_open_the_job_store_is_node_local(rules):
    lines = [
        "[2025-01-10T10:00:00-0800] [MainThread] [E] [toil.worker] Could not access the job store at "
        "'file:/tmp/toil-jobstore'. If you are running with a grid batch system (e.g. Slurm), the job store path "
        "must be on a shared filesystem accessible from all worker nodes."
    ]
    finding = found(diagnose(rules, lines), "node-local-path")
    assert "/tmp/toil-jobstore" in finding.detail


def test_a_toil_restart_of_a_job_store_that_never_existed_is_no_node_local_path(rules):
    line = (
        "toil.jobStores.abstractJobStore.NoSuchJobStoreException: The job store '/home/u/js-typo' does not exist, so "
        "there is nothing to restart."
    )
    assert "node-local-path" not in ids(diagnose(rules, [line]))


def test_adios2_subfile_missing_is_node_local_but_a_refused_open_is_not(rules):
    missing = (
        "[ADIOS2 EXCEPTION] <Toolkit> <transport::file::FilePOSIX> <Open> : couldn't open file /mnt/bb/u/out.bp/data.12,"
        " check permissions or path existence, in call to POSIX open: errno = 2: No such file or directory"
    )
    top(diagnose(rules, [missing]), "node-local-path")
    refused = missing.replace("errno = 2: No such file or directory", "errno = 13: Permission denied")
    assert "node-local-path" not in ids(diagnose(rules, [refused]))


def test_a_relative_save_by_a_ray_actor_on_another_node_is_a_warning(rules):
    remote = "(CriticModelRayActor pid=700760, ip=10.0.3.17) [INFO] Saved ./ckpt/last/model.pt."
    finding = found(diagnose(rules, [remote, "training done"]), "node-local-path")
    assert finding.severity == "warning" and "10.0.3.17" in finding.detail
    local = "(CriticModelRayActor pid=700760) [INFO] Saved ./ckpt/last/model.pt."
    assert "node-local-path" not in ids(diagnose(rules, [local, "training done"]))


def test_sentencepiece_quotes_the_missing_tokenizer_path(rules):
    lines = ['[rank4]: OSError: Not found: "/tmp/llama-7b/tokenizer.model": No such file or directory Error #2']
    assert "/tmp/llama-7b/tokenizer.model" in top(diagnose(rules, lines), "node-local-path").detail


def test_a_uenv_that_hands_squashfs_mount_its_image_as_the_command(rules):
    lines = [
        "error: unable to exec '/capstor/scratch/cscs/u/.uenv-images/images/61d1.squashfs:/user-environment':",
        "    No such file or directory (errno=2)",
    ]
    finding = top(diagnose(rules, lines), "container-runtime-error")
    assert "/usr/bin/uenv" in finding.detail
    assert "container-import-failure" not in ids(diagnose(rules, lines))


def test_enroot_import_that_fills_its_disk_while_unpacking_says_which_paths_to_move(rules):
    # enroot#187: dockerd:// import, "docker export | tar -C rootfs -px" into ENROOT_TEMP_PATH.
    lines = [
        "[INFO] Fetching image",
        "[INFO] Extracting image content...",
        "tar: usr/lib/x86_64-linux-gnu/libcudnn_cnn_train.so.8.9.7: Cannot write: No space left on device",
        "tar: Exiting with failure status due to previous errors",
    ]
    finding = found(diagnose(rules, lines), "container-import-failure")
    assert "ran out of disk" in finding.detail and "ENROOT_TEMP_PATH" in finding.detail
    # The same tar error unpacking a data set, with no enroot import around it, is not an image import.
    data = ["+ tar -xf /data/imagenet.tar -C /local/scratch", lines[2].replace("usr/lib", "train")]
    assert "container-import-failure" not in ids(diagnose(rules, data))


def test_singularity_2_that_cannot_mount_its_squashfs_image_is_a_start_failure(rules):
    # singularity#3465: the node's kernel had no squashfs support; the image itself was fine.
    lines = [
        "VERBOSE [U=114117593,P=72054] singularity_image_squashfs_mount()     Mounting squashfs image: /dev/loop0 -> /var/lib/singularity/mnt/container",
        "ERROR   [U=114117593,P=72054] singularity_image_squashfs_mount()     Failed to mount squashfs image in (read only): No such device",
    ]
    leads(rules, lines, "container-runtime-error", "kernel has no squashfs", not_also="container-import-failure")


def test_image_pulls_that_fail_outside_enroot_name_the_registrys_answer(rules):
    pull = diagnose(rules, [
        'Failed to pull image "nvcr.io/nvidia/driver:460.73.01-ubuntu21.04": rpc error: code = NotFound desc = failed '
        'to pull and unpack image "nvcr.io/nvidia/driver:460.73.01-ubuntu21.04": failed to resolve reference'
    ])  # fmt: skip
    assert "NotFound" in top(pull, "container-import-failure").detail
    full = diagnose(rules, [
        "failed to register layer: Error processing tar file(exit status 1): write /opt/conda/lib/libtorch.so: no space "
        "left on device"
    ])  # fmt: skip
    assert "disk" in top(full, "container-import-failure").detail
    for line in [
        "FATAL:   While performing build: conveyor failed to get: unable to retrieve auth token: invalid username/password",
        "unauthorized: authentication required",
        "FATAL:   image format not recognized",
    ]:
        top(diagnose(rules, [line]), "container-import-failure")


def test_singularity_charliecloud_and_apptainer_start_failures_say_what_to_change(rules):
    cases = {
        "ERROR  : Base home directory does not exist within the container: /usit": "--no-home",
        "ERROR  : Unknown image format/type: tracker.sif": "SIF",
        "ch-run[11544]: can't init user+mount namespaces: Invalid argument (ch_core.c:381 22)": "user.max_user_namespaces",
        "ERROR:   No runscript and no /bin/sh executable found in container, aborting": "apptainer exec",
        "ERROR  : 'newgidmap' execution failed. Check that 'newgidmap' is setuid root or has setcap cap_setgid+eip.":
            "/etc/subgid",
        "docker: Error response from daemon: could not select device driver with capabilities: [[gpu]].": "toolkit",
    }  # fmt: skip
    for line, advice in cases.items():
        assert advice in top(diagnose(rules, [line, "ABORT  : Retval = 255"]), "container-runtime-error").detail, line


def test_a_script_found_beside_the_batch_scripts_spool_copy_is_node_local(rules):
    report = diagnose(rules, [
        "/HOME/u/.conda/envs/m/bin/python: can't open file '/var/spool/slurmd/job713328/train.py': [Errno 2] No such "
        "file or directory",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 3623) of binary: "
        "/HOME/u/.conda/envs/m/bin/python",
    ])  # fmt: skip
    assert "SLURM_SUBMIT_DIR" in top(report, "node-local-path").detail


def test_gpfs_down_on_a_node_is_shared_storage_missing(rules):
    top(diagnose(rules, [" mmremote: GPFS is not ready to handle commands yet."]), "shared-storage-missing")


def test_a_working_directory_slurmstepd_could_not_enter_in_a_run_that_went_on_is_a_warning(rules):
    chdir = "0: slurmstepd: error: couldn't chdir to `/workspace': No such file or directory: going to /tmp instead"
    progress = [f"0: Train Epoch: 0 [{n * 512}/114688 ({n}%)] Loss: 5.1" for n in range(1, 40)]
    finding = found(diagnose(rules, [chdir] * 4 + progress), "node-local-path")
    assert finding.severity == "warning" and "/tmp instead" in finding.detail
    # Under node-local storage the same line is an error: another node made that directory.
    local = "slurmstepd: error: couldn't chdir to `/scratch/local/run7': No such file or directory: going to /tmp instead"
    assert top(diagnose(rules, [local]), "node-local-path").severity == "error"
    # And a task that then fails makes the missing directory the error it is.
    assert found(diagnose(rules, [chdir] + progress + task_failed(1)), "node-local-path").severity == "error"


def test_singularity_unable_to_write_the_layers_it_unpacks_is_an_image_import_failure(rules):
    lines = ["ERROR  : tar extraction error: Write failed", "WARNING: Warning handling tar header: Write failed"] * 3 + [
        "ERROR  : Failed opening trigger file /tmp/.singularity-cleanuptrigger.Wx8uUe1W: No space left on device",
        "ABORT  : Retval = 255",
    ]
    finding = top(diagnose(rules, lines), "container-import-failure")
    assert "SINGULARITY_TMPDIR" in finding.detail


def test_a_file_every_process_in_torchruns_failure_table_lacked_rank_0_too_is_a_wrong_path(rules):
    # Both local ranks, rank 0 among them, could not open the script: missing where rank 0 runs, not one node's disk.
    missing = "/home/yuqi/venv/bin/python3: can't open file '/home/yuqi/proj/test_pippy/gpt2_generate.py': [Errno 2] No such file or directory"
    table = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "Failures:",
        "[1]:",
        "  host      : sfo1",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 2 (pid: 395837)",
        "Root Cause (first observed failure):",
        "[0]:",
        "  host      : sfo1",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 2 (pid: 395836)",
    ]
    report = diagnose(rules, [missing, missing, *table])
    assert "node-local-path" not in ids(report) and report.findings[0].id == "unexplained-failure"
    # One line for two failed processes: the other may have failed of something else, so the path stays a suspect.
    assert "node-local-path" in ids(diagnose(rules, [missing, *table]))


def test_apptainer_finding_no_such_command_in_the_image_names_the_command(rules):
    lines = ['FATAL:   "bris": executable file not found in $PATH'] * 2 + ["srun: error: nid007965: tasks 0-7: Exited with exit code 255"]
    finding = diagnose(rules, lines).findings[0]
    assert finding.id == "container-runtime-error" and 'no "bris" on its PATH' in finding.detail


def test_a_file_call_refused_with_eshutdown_is_an_evicted_lustre_client_even_on_relative_paths(rules):
    lines = [
        "ls: cannot access output/01_coassembly/contigs_derep_list.txt: Cannot send after transport endpoint shutdown",
        "ls: cannot access README.md: Cannot send after transport endpoint shutdown",
    ]
    finding = found(diagnose(rules, lines), "shared-storage-missing")
    assert "evicted" in finding.detail and "README.md" in finding.detail
    # A socket or a USB device says the same words: no file, no storage finding.
    device = "system76-firmware: failed to update: Cannot send after transport endpoint shutdown (os error 108)"
    assert "shared-storage-missing" not in ids(diagnose(rules, [device]))


def test_a_file_missing_inside_shutil_rmtree_was_removed_by_another_process_not_node_local(rules):
    # A paste that kept only the frame's source line: the directory was being deleted when it went missing.
    lines = [
        "    shutil.rmtree(staging_output_dir)",
        "FileNotFoundError: [Errno 2] No such file or directory: '/checkpoints_tmp/tmp-checkpoint-1'",
    ]
    assert "node-local-path" not in ids(diagnose(rules, lines))
    top(diagnose(rules, lines[1:]), "node-local-path")  # without the frame, the reading stands
