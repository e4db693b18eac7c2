"""Framework and scheduler message forms for the launch, storage, job and GPU causes, as users paste
them: one line of a failed job, bare or damaged (markdown, quoting, launcher and logger prefixes).
The wording is ours, in the forms the frameworks print; each must still name its cause first."""

from __future__ import annotations

import pytest

from diag.api import diagnose_bytes

FORMS = [
    ("node-local-path", "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/run4/ckpt/step_300/model.pt'"),
    ("node-local-path", "FileNotFoundError: Checkpoint at /local/u/pl/last.ckpt not found. Aborting training."),
    ("node-local-path", "OSError: /tmp/sft/final is not a local folder and is not a valid model identifier listed"),
    ("node-local-path", "ValueError: Can't find 'adapter_config.json' at '/tmp/u/lora/checkpoint-40'"),
    ("node-local-path", "ValueError: No valid checkpoint found in output directory (/local/u/sft)"),
    ("node-local-path", "ValueError: Expected 16 of '*_optim_states.pt' under '/opt/u/ckpt/global_step40' but found "
     "8 files. Possibly due to an overwrite of an old checkpoint"),
    ("world-size-mismatch", "RuntimeError: world_size (6) is not divisible by tensor_model_parallel_size (4) x "
     "pipeline_model_parallel_size (1)"),
    ("cuda-oom", "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.0GiB."),
    ("job-oom", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."),
    ("job-oom", "77.batch    batch   lab   8   OUT_OF_ME+   0:125"),
    ("gpu-xid", "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error"),
    ("gpu-xid", "I0412 10:00:00.000 health.go:155] XidCriticalError: Xid=95 on Device=GPU-9a1f; marking device as "
     "unhealthy."),
    ("shm-too-small", "RuntimeError: unable to write to file </torch_31_7>: No space left on device (28)"),
    ("rendezvous-failure", "RuntimeError: Timed out initializing process group in store based barrier on rank: 2, "
     "for key: store_based_barrier_key:1 (world_size=8, worker_count=4, timeout=0:30:00)"),
    ("job-time-limit", "JobId=77 JobName=sft JobState=TIMEOUT Reason=TimeLimit"),
    ("job-time-limit", "submitit WARNING - Caught signal SIGUSR2 on gpu-st-7: this job is timed-out."),
    ("pmix-not-used", "MPI startup(): PMI server not found. Please set I_MPI_PMI_LIBRARY variable if it is not a "
     "singleton case."),
    ("pmix-plugin-missing", "srun: error: plugin_load_from_file: dlopen(/usr/lib64/slurm/mpi_pmix_v4.so): "
     "libpmix.so.2: cannot open shared object file: No such file or directory"),
    ("container-runtime-error", "slurmstepd: error: pyxis: container start error: enroot exited with code 1"),
    ("container-runtime-error", "slurmstepd: error: pyxis: couldn't chdir to /workspace/run: No such file or directory"),
    ("container-import-failure", "Error response from daemon: manifest for nvcr.io/x/y:1 not found: manifest unknown"),
    # Read from upstream sources (see README, Framework message forms).
    ("shm-too-small", "RuntimeError: DataLoader worker (pid 4417) is killed by signal: Bus error. It is possible that "
     "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."),
    ("gpu-xid", "RuntimeError: CUDA error: uncorrectable NVLink error was detected during the execution"),
    ("cuda-oom", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
     "191.98 GiB of which 1.05 GiB is free."),
    ("cuda-oom", "RuntimeError: CUDA driver error: out of memory"),
    ("cuda-oom", "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: "
     "15,032,385,536 bytes)."),
    ("cuda-oom", "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
     "cache is needed, which is larger than the available KV cache memory (4.21 GiB)."),
    ("cuda-oom", "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be "
     "stored in KV cache (93936)."),
    ("job-oom", "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you "
     "tried to allocate 68719476736 bytes."),
    ("gpu-xid", "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 20034, Fatal, Link 27 LTSSM Fault Up"),
    ("world-size-mismatch", "ValueError: Invalid rank 8, rank should be in the interval [0, 7]"),
    # The store answered both reads: the processes had met, and rank 0 was late to the group's first collective.
    ("nccl-timeout", "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cuda//0"),
    ("nccl-timeout", "RuntimeError: [3] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"),
    ("container-import-failure", "[ERROR] Invalid image format: /lustre/images/pytorch-24.05.sqsh"),
    ("container-runtime-error", "[ERROR] Command not found: nvidia-container-cli, see "
     "https://github.com/NVIDIA/libnvidia-container"),
    ("pmix-not-used", "[unset]: PMIU_write error; fd=-1 buf=:cmd=init pmi_version=1 pmi_subversion=1"),
    ("node-local-path", "megatron.core.dist_checkpointing.core.CheckpointingException: Common file "
     "/tmp/u/mcore/iter_0000200/common.pt does not exist"),
    ("node-local-path", "FileNotFoundError: Checkpoint at /tmp/u/orbax/300/default not found."),
    ("node-local-path", 'ValueError: NOT_FOUND: Error opening "zarr" driver: Metadata at local file '
     '"/local/u/ckpt/300/params/.zarray" does not exist'),
    ("node-local-path", "ValueError: Tried to find /tmp/u/accel/checkpoint_7 but folder does not exist"),
    ("node-local-path", "FileNotFoundError: Dataset json is not cached in /tmp/u/hf/datasets"),
    ("node-local-path", "RuntimeError: Unable to set up cluster storage with the following settings:"),
    ("node-local-path", "RuntimeError: Checkpoint /tmp/u/composer/ep1-ba100-rank0.pt does not exist"),
    ("node-local-path", 'FileNotFoundError: No such file or directory: "/tmp/u/sft/model-00001-of-00004.safetensors"'),
    ("node-local-path", "FileNotFoundError: Checkpoint file not found: /local/u/nemo2/step=100/weights/common.pt"),
]

DAMAGE = {
    "bare": lambda line: line,
    "backticks": lambda line: f"`{line}`",
    "quoted": lambda line: f"> {line}",
    "bold": lambda line: f"**{line}**",
    "open-mpi prefix": lambda line: f"[1,3]<stderr>:{line}",
    "pdsh prefix": lambda line: f"worker-3: {line}",
    "srun label and rank": lambda line: f"3: [rank3]: {line}",
    "indented": lambda line: f"    {line}",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize(("cause", "line"), FORMS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FORMS)])
def test_a_thin_damaged_paste_still_names_its_cause_first(rules, cause, line, damage):
    paste = DAMAGE[damage](line) + "\nsrun: error: n3: task 3: Exited with exit code 1\n"
    report = diagnose_bytes(paste.encode(), rules)
    assert report.findings and report.findings[0].id == cause, [f.id for f in report.findings]
    # A one-line excerpt is thin evidence: the finding says so.
    assert report.findings[0].confidence < 0.9
