"""What the honest "unexplained" finding says of messages whose cause is known but outside the catalogue."""

from __future__ import annotations

import re

# inotify_add_watch() fails with ENOSPC when the user's inotify watches (fs.inotify.max_user_watches) are used
# up: no disk is full (UCX's VFS says "UCX  ERROR inotify_add_watch(/tmp) failed: No space left on device").
INOTIFY_LIMIT = re.compile(r"\binotify\w*\(.*\) failed: No space left on device")

# Messages whose cause is known but outside the catalogue (no cause id fits: a node service, not the
# GPU, the fabric or the job's settings): the honest "unexplained" finding says what they usually mean.
# The first that matches gives the hint, so the specific come before the generic (Open MPI's daemon
# before any "command not found").
OUTSIDE_CATALOGUE = (
    (
        # ssh as a launcher's remote shell (mpirun's rsh agent, DeepSpeed's pdsh/ssh, accelerate).
        re.compile(r"ssh: Could not resolve hostname [^\s:]+"),
        "A launcher's ssh could not resolve a host name it was given: the hostfile or host list names a host this "
        "node cannot resolve (a placeholder left in a hostfile, a short name without its DNS search domain, a pod "
        "whose headless service or dnsPolicy is missing); list the hosts as the nodes resolve them "
        "(scontrol show hostnames under Slurm)",
    ),
    (
        # OpenSSH's password prompt ("root@worker-0's password: ") and its retry line ("Permission denied,
        # please try again.") in a job's output: no key was accepted, and nobody is there to type a password.
        re.compile(
            r"ssh: connect to host [^\s:]+ port \d+: |Permission denied \(publickey|(?:not reachable|connect to some hosts) via ssh"
            r"|[\w.-]+@[\w.-]+'s password:|Permission denied, please try again|Host key verification failed"
            r"|(?:ssh|kex)_exchange_identification: (?:read: )?Connection (?:closed|reset)"
        ),
        "A launcher's ssh (pdsh for DeepSpeed, mpirun's rsh agent, accelerate, an MPI operator's launcher pod) could "
        "not log in to another node: sshd there is not reachable (Connection refused / timed out: the node is down, "
        "or a firewall), or there is no passwordless key between the nodes (Permission denied (publickey), or ssh "
        "asking for a password: the key is missing, not mounted, or refused for its permissions; Host key "
        "verification failed: the other node's host key is not in known_hosts; kex_exchange_identification / "
        "ssh_exchange_identification: Connection closed: sshd there dropped the connection before its banner, most "
        "often its MaxStartups limit refusing the burst of sessions a launcher opens at once, or hosts.deny); under "
        "Slurm start the processes with srun instead of ssh (DeepSpeed --launcher slurm, mpirun inside the allocation)",
    ),
    (
        # NCCL's topology detection (graph/xml.cc, graph/topo.cc) resolving a GPU's PCI path under /sys:
        # "NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0".
        re.compile(r"Could not find real path of /sys/class/pci_bus/"),
        "NCCL could not find the GPU's PCI device under /sys/class/pci_bus, where it reads the node's topology: "
        "the process does not see the host's PCI tree (a virtual machine or WSL2 that exposes no PCI device for "
        "the GPU, a container with a partial /sys); run where /sys shows the GPUs (lspci lists them), or give "
        "NCCL a topology file (NCCL_TOPO_FILE)",
    ),
    (
        # slurmstepd's job_container/tmpfs plugin (container_p_create / container_p_join, through container_g_*):
        # "container_p_join: open failed /scratch/119383/.active: No such file or directory", "container_g_join failed".
        re.compile(r"\bcontainer_[pg]_(?:join|create|stepd_create|restore)\b"),
        "Slurm's job_container plugin (job_container/tmpfs) could not set up or enter the job's private /tmp and "
        "/dev/shm on this node: its per-job directory under the plugin's BasePath (job_container.conf) is missing "
        "or unusable there (cleaned up, a node restart, BasePath on storage that is not mounted); a node or Slurm "
        "configuration fault for the admins, not the job's: resubmit excluding the node and report it",
    ),
    (
        # slurmd's req.c refuses RPCs not from root or SlurmUser, and asks "Do you have SlurmUser configured as uid N?".
        re.compile(r"Security violation[,:] .+? from uid \d+|Do you have SlurmUser configured as uid"),
        "slurmd refused the controller's own requests (ping, health check, launch, kill_job) because they came from "
        "a UID that is not SlurmUser's on this node: the slurm (and munge) user has different UIDs/GIDs on the "
        "controller and the nodes; make them identical everywhere (same /etc/passwd entries or directory service), "
        "restart munge and slurmd; until then the node looks unresponsive and its jobs cannot be launched or killed",
    ),
    (
        # kubelet admission: the device plugin's Allocate failed (NVIDIA device plugin README: shared GPUs with
        # failRequestsGreaterThanOne fail a request above 1 with UnexpectedAdmissionError).
        re.compile(r"UnexpectedAdmissionError|Allocate failed due to"),
        "The kubelet rejected the pod at admission because its device plugin could not allocate what it asked for "
        "(with GPU sharing/time-slicing and failRequestsGreaterThanOne a container may ask for at most one shared "
        "GPU; a plugin restart or devices gone unhealthy do the same): the pod never ran; fix the request (or the "
        "plugin's sharing config) and recreate the pod, which the kubelet does not retry",
    ),
    (
        # MIOpen keeps its find database and kernel cache in SQLite files under the home directory by default.
        re.compile(r"(?:MIOpen Error|sqlite_db\.cpp).*SQLite database|SQLite database: (?:locking protocol|database is locked)"),
        "MIOpen's find database and kernel cache are SQLite files (in the home directory by default): on a shared "
        "file system (Lustre, NFS) SQLite's locks fail or many ranks contend for one file; give every process its "
        "own node-local MIOPEN_USER_DB_PATH and MIOPEN_CUSTOM_CACHE_DIR (e.g. /tmp/$USER-miopen-$SLURM_PROCID), "
        "or MIOPEN_DISABLE_CACHE=1",
    ),
    (
        # ORTE's usock and PMIx-server listeners and PRRTE's bind a sockaddr_un in the session directory.
        re.compile(r"bind\(\) failed on error|oob_usock|usock_peer_"),
        "Open MPI's runtime (orted/prted) could not bind its own Unix-domain socket in its session directory, which "
        "lives under TMPDIR: a path longer than a Unix socket allows (about 108 bytes: a long per-job TMPDIR) is "
        "cut short so processes collide on one name (Address already in use), or a stale session directory of an "
        "earlier job is in the way; point TMPDIR (or --mca orte_tmpdir_base / prte_tmpdir_base) at a short "
        "node-local path such as /tmp; this is not a TCP port",
    ),
    (
        # help-plm-base.txt (ORTE, PRRTE): the daemon was started on the other node but never called back.
        re.compile(r"daemon has unexpectedly failed after launch"),
        "mpirun started its daemon (orted/prted) on another node, but the daemon never called back: it could not "
        "reach mpirun's node (no network interface in common, no route, a firewall, an MTU that differs between the "
        "nodes or containers) or it died at start (a library or another Open MPI version on that node); pick the "
        "network with --mca oob_tcp_if_include (prte_if_include for PRRTE) and check the interfaces agree; this is "
        "neither PMIx nor a node lost mid-run",
    ),
    (
        # PRRTE's version handshake between its processes (the box names "Local/Peer PRTE version").
        re.compile(r"detected a mismatch in versions between two processes"),
        "mpirun's runtime (PRRTE) met another PRRTE version in a daemon it started on another node: two Open MPI "
        "installations (a conda or pip environment's beside the cluster's module), and the other nodes' "
        "non-interactive shell finds the other one; use one installation on every node (mpirun --prefix, or the "
        "same environment activated in the remote shell's startup)",
    ),
    (
        # help-prted.txt [timedout]: a request the daemon's PMIx server held for a rank ("Operation:  DMDX: ...").
        re.compile(r"A request has timed out and will therefore fail"),
        "mpirun's own runtime (a PRRTE daemon's PMIx server) gave up on a request it held for a rank (the Operation "
        "line names it; DMDX: one rank asked for another's connection data, which never came): that other rank "
        "hung or died before it published, or the runtime of this release lost the request; this is mpirun's PMIx "
        "server, not Slurm's mpi/pmix; look for the rank that never reached MPI_Init, and try another Open MPI/PRRTE "
        "release (pmix_server_max_wait only lengthens the wait)",
    ),
    (
        # Open MPI 4's flux component (OPAL_PMI_ERROR): "PMI_Init [pmix_flux.c:389:flux_init]: Operation failed".
        re.compile(r"PMI_Init(?:ialized)? \[pmix_flux\.c"),
        "Open MPI's Flux component could not initialise Flux's PMI: the MPI program runs inside a Flux instance "
        "but was not started by flux run / flux submit (a singleton, e.g. the program given to flux alloc as the "
        "instance's initial program), which Open MPI's Flux support does not handle; start it with flux run inside "
        "the allocation",
    ),
    (
        # PMIx's bfrops status when a message holds less than the reader expects (PMIx 2-4 "UNPACK-PAST-END",
        # "UNPACK-INADEQUATE-SPACE"; 5.x "PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER").
        re.compile(r"PMIX ERROR: (?:PMIX_ERR_)?UNPACK[-_A-Z]* in file"),
        "PMIx could not unpack a message from its own server while the process set up (PMIx_Init's handshake, the "
        "job's data): with mpirun, or a singleton's own daemon, client and server are the same Open MPI's PMIx, so "
        "the two did not disagree in version: the runtime of that release misread its own message (a known class "
        "of bugs in early releases and release candidates); try another Open MPI/PMIx release; under srun, make "
        "the MPI's PMIx major version match Slurm's mpi/pmix_vN plugin",
    ),
    (
        # NVIDIA/nccl#1066 ("NCCL not working when each rank only sees its own GPU"), #1529 (containers).
        re.compile(r"nvmlDeviceGetHandleByPciBusId\(\) failed: Not Found"),
        "NCCL could not find a peer's GPU through NVML: each process sees only its own GPU (srun --gpu-bind or "
        "--tres-bind=gres/gpu:per_task, --gpus-per-task with ConstrainDevices, one GPU per container), and NCCL "
        "needs every GPU of the node that its local peers use to be visible to each of them; a program that "
        "selects GPU LOCAL_RANK then also gets \"invalid device ordinal\" (every task's GPU is device 0); give the "
        "tasks of a node all its GPUs (--gpus-per-node, --gpu-bind=none) and let each rank select its own",
    ),
    (
        # The dynamic loader resolving libtorch_cuda.so (or another NCCL user) against an older libnccl.
        # ... and NCCL 2.29+'s device API refusing a library older than the headers it was built with.
        re.compile(r"undefined symbol: nccl\w+|NCCL library is (?:too old|not backwards compatible)"),
        "The program was built against a newer NCCL than the libnccl.so it loaded (an image's own NCCL, "
        "LD_LIBRARY_PATH or LD_PRELOAD ahead of the one the framework ships with): install the NCCL the framework "
        "was built with (the matching nvidia-nccl-cu* wheel) or start from the framework's own base image",
    ),
    (
        re.compile(r"SLURM process starter for OpenMPI was unable to locate"),
        "mpirun runs inside a Slurm allocation and starts its daemons with srun, but finds no srun on PATH: it "
        "runs where Slurm's client tools are absent (inside a container image); start the ranks from the host "
        "with srun --mpi=pmix (pyxis/Apptainer around each rank) instead of mpirun inside the container",
    ),
    (
        # Python's OSError of os.rename/os.replace names both paths.
        re.compile(r"No such file or directory: '[^']+' -> '"),
        "A rename found its source gone: another process renamed or removed the same file first, so several "
        "processes (often each node's local rank 0) save the same checkpoint on shared storage; save and clean "
        "up on global rank 0 only (trainer.is_world_process_zero(), rank == 0), or give each node its own path",
    ),
    (
        re.compile(r"system not yet initialized|cudaErrorSystemNotReady|Error 802\b"),
        "CUDA error 802 (system not yet initialized) means a driver daemon the GPUs need is not running on the "
        "node: on NVSwitch systems (HGX/DGX) the NVIDIA Fabric Manager (systemctl status nvidia-fabricmanager); "
        "drain the node until it runs",
    ),
    (
        re.compile(r"IMEX channel|/dev/nvidia-caps-imex-channels"),
        "IMEX channels are what multi-node NVLink (GB200 NVL72) needs: the job has no IMEX channel "
        "(nvidia-imex running, /dev/nvidia-caps-imex-channels/channel0 passed into the container)",
    ),
    (
        # NCCL's troubleshooting guide (multi-node NVLink) and CUDA IPC in containers.
        re.compile(r"Cuda failure 800\b|cudaErrorNotPermitted|CUDA error: operation not permitted"),
        "CUDA error 800 (operation not permitted) from GPU-to-GPU memory sharing: on multi-node NVLink systems the "
        "job's user cannot open its IMEX channel (/dev/nvidia-caps-imex-channels/channel* permissions); in a "
        "container, CUDA IPC between the ranks needs a shared IPC namespace (--ipc=host)",
    ),
    (
        re.compile(
            r"no CUDA-capable device is detected|cudaErrorNoDevice|no GPUs found|Found no NVIDIA driver"
            r"|torch\.cuda\.is_available\(\) (?:is|returned) False"
        ),
        "The task sees no GPU: the job step was given none (sbatch/srun --gres=gpu:N or --gpus-per-task; an "
        "empty CUDA_VISIBLE_DEVICES), or its container was started without the GPUs",
    ),
    (
        # transport.cc selectTransport: no P2P, SHM or NET path can join the two ranks.
        re.compile(r"No transport found for rank \d+"),
        "NCCL found no way to reach a peer: on one node both P2P and shared memory are off (NCCL_P2P_DISABLE=1 "
        "with NCCL_SHM_DISABLE=1, or containers without a shared /dev/shm and IPC namespace), or between nodes no "
        "network was loaded (NCCL_NET names a plugin that did not load); unset those settings, or give the "
        "containers --ipc=host",
    ),
    (
        # NCCL's bootstrap/socket receive (include/socket.h, misc/socket.cc) when a peer sent another size.
        re.compile(r"Message truncated ?: received \d+ bytes instead of \d+"),
        "NCCL received another size than it expected from a peer: the ranks called collectives that do not match "
        "(different sizes, dtypes or order, often one rank on another code path), an application bug; "
        "TORCH_DISTRIBUTED_DEBUG=DETAIL checks the collectives' shapes across ranks",
    ),
    (
        # Open MPI's launcher: its daemon could not be executed on a remote node (the shell's 127).
        re.compile(r"died unexpectedly with status 127|(?:orted|prted): command not found|(?:orted|prted): error while loading shared libraries"),
        "Open MPI's launch daemon (orted/prted) could not start on a remote node: in the non-interactive shell there "
        "it is not on PATH or a library it needs is not on LD_LIBRARY_PATH; use mpirun --prefix <ompi dir> (or an "
        "Open MPI built with --enable-mpirun-prefix-by-default), or launch with srun under Slurm",
    ),
    (
        # enqueue.cc: an INFO with a fallback in 2.25, a WARN and ncclSystemError from 2.26.
        re.compile(r"exceeds device/fn maxSharedMem"),
        "NCCL's kernels need more shared memory per block than this GPU offers: this NCCL release does not "
        "support the GPU's architecture properly (new GPUs such as consumer Blackwell needed NCCL 2.26.2+); use a "
        "NCCL (or a PyTorch wheel / image) that lists this GPU among its supported architectures",
    ),
    (
        re.compile(r"no kernel image is available for execution|cudaErrorNoKernelImageForDevice"),
        "CUDA error 209 (no kernel image is available) means the program's CUDA kernels were not built for this "
        "GPU's architecture: the PyTorch/CUDA build is older or narrower than the GPU (TORCH_CUDA_ARCH_LIST, a newer "
        "wheel or image), or the job landed on another GPU model than it was built for (--constraint / --gres type)",
    ),
    (
        # slurm's sbatch/salloc/srun (opt.c, the controller's answer to a submission): the request itself was
        # refused, so nothing ran; the words of the refusal ("time limit", "memory limit") name no run's end.
        re.compile(
            r"(?:sbatch|salloc|srun): error: (?:Batch job submission failed|Job submit/allocate failed"
            r"|Unable to allocate resources): |(?:sbatch|salloc|srun): (?:error|fatal): .{0,120}?"
            r"(?:are mutually exclusive|must be provided for|[Ii]nvalid (?:partition|account|qos|feature|time|generic))"
        ),
        "Slurm refused the submission itself (sbatch/salloc/srun), so the job never ran: an option conflict (--mem "
        "with --mem-per-cpu/--mem-per-gpu, a site that requires --mem on shared nodes) or a value outside what the "
        "partition, account or QOS allows (a --time above the partition's MaxTime or the QOS's limit, a partition, "
        "account, feature or GRES that does not exist); fix the submission's options (sinfo -o '%P %l %m %G', "
        "sacctmgr show assoc user=$USER format=account,partition,qos): nothing in the job or on its nodes failed",
    ),
    (
        re.compile(r"Unable to create step for job \S+: Requested nodes are busy"),
        "Slurm could not start the step because another step of the job still holds those CPUs/GPUs: since "
        "Slurm 20.11 steps do not share resources unless asked (srun --overlap), so a step started while an "
        "earlier one (a monitor, a background srun) still runs waits or fails",
    ),
    (
        # NCCL 2.19+ socket.cc (and the "Last error:" PyTorch quotes): the other end went away first.
        re.compile(r"[Cc]onnection closed by (?:remote )?peer (?P<peer>[\w.:-]+)"),
        "NCCL's peer {peer} closed the connection: the process there ended first (a crash, an OOM kill, a "
        "signal), so the cause is in that node's or rank's own log, earlier than this line",
    ),
    (
        # 128 + 4: a shell's, container platform's or launcher's exit status of a process killed by SIGILL.
        re.compile(r"(?:exit (?:code|status):? ?|exitcode: )132\b|Illegal instruction"),
        "The process died of SIGILL (exit code 132 = 128 + 4, Illegal instruction): a binary or library built "
        "for newer CPU instructions (AVX, AVX-512, AMX) than this node's CPU has; exclude the older nodes "
        "(--constraint) or use a build for the oldest CPU of the cluster",
    ),
    (
        # ibv_create_cq/ibv_reg_mr/ibv_create_qp with ENOMEM: pinned memory is capped by RLIMIT_MEMLOCK.
        re.compile(
            r"ibv_(?:create_cq|reg_mr|create_qp|reg_dmabuf_mr)\b.{0,80}?Cannot allocate memory"
            r"|RLIMIT_MEMLOCK too small|failed to initialize while trying to allocate some locked memory"
        ),
        "RDMA could not pin memory (Cannot allocate memory, RLIMIT_MEMLOCK too small): the locked-memory limit (ulimit -l) of the tasks "
        "is too low; set LimitMEMLOCK=infinity for slurmd and PropagateResourceLimitsExcept=MEMLOCK in "
        "slurm.conf (containers: --ulimit memlock=-1)",
    ),
    (
        # slurmd copies the batch script into its spool directory (SlurmdSpoolDir) on the node and runs it there.
        re.compile(r"execve\(\): \S*/slurm_script: No such file"),
        "slurmd's copy of the batch script in its spool directory (SlurmdSpoolDir) was gone when slurmstepd ran it: "
        "a fault of that node (a /tmp cleaner under a spool in /tmp, a full or read-only disk), not of the job; "
        "resubmit excluding the node and tell the admins",
    ),
    (
        # ESLURMD_EXECVE_FAILED: slurmstepd's execve() of the task's command failed (its own error line says why).
        re.compile(r"Slurmd could not execve job|execve\(\): [^:]+: (?:No such file|Permission denied|Exec format)"),
        "slurmstepd could not start the task's command: it is not on the node's PATH (or in the container), not "
        "executable (chmod +x), or its #! interpreter is missing there; give srun the full path of a program "
        "every node (and the image) has",
    ),
    (
        # NCCL reading a topology XML (NCCL_TOPO_FILE, NCCL_GRAPH_FILE, or one a cloud image or net plugin
        # sets) that describes another machine than this one.
        re.compile(r"Attribute \w+ of node \w+ not found|XML Import Channel : dev \d+ not found"),
        "NCCL's topology or graph XML does not describe this machine: a file given by NCCL_TOPO_FILE or "
        "NCCL_GRAPH_FILE (set by the image or a net plugin for another VM size or GPU count) lacks what NCCL "
        "needs; unset them or point them at this machine's files, and make sure the plugin matches the instance",
    ),
    (
        re.compile(r"The node was low on resource: (?:ephemeral-storage|nodefs|imagefs)|ephemeral local storage usage exceeds"),
        "Kubernetes evicted the pod because its node's local disk (ephemeral storage: the container's writable layer, "
        "emptyDir volumes, logs) filled up: write checkpoints, datasets and caches to a persistent volume or shared "
        "storage, or raise the pod's ephemeral-storage limit",
    ),
    (
        re.compile(r"unable to lock file, errno = \d+"),
        "HDF5 could not lock the file: the file system under it (NFS, Lustre or GPFS mounted without flock, a "
        "network share) does not grant its locks; set HDF5_USE_FILE_LOCKING=FALSE in the job's environment, or "
        "write the file to storage that supports locking",
    ),
    (
        re.compile(r"Disk quota exceeded|\bEDQUOT\b|[Ee]rrno:? ?122\b"),
        "A disk quota is full (Disk quota exceeded): clean up or ask for more on the file system the job writes to "
        "(`quota -s`, `lfs quota -h -u $USER <mount>`, `mmlsquota`); quotas count files as well as bytes",
    ),
    (
        INOTIFY_LIMIT,
        "inotify_add_watch's 'No space left on device' is the inotify watch limit, not a full disk: the user's "
        "watches (fs.inotify.max_user_watches) are used up on that node; raise it (sysctl "
        "fs.inotify.max_user_watches=524288) or stop what holds them. UCX's VFS monitor goes on without its watch",
    ),
    (
        re.compile(r"No space left on device|\bENOSPC\b|[Ee]rrno:? ?28\b"),
        "A file system the job writes to is full (No space left on device): `df -h` on the path it names (on "
        "Lustre `lfs df -h`: one full storage target is enough); move checkpoints, caches and temporary files to "
        "storage with room",
    ),
    (
        re.compile(r"[Tt]oo many open files|\bEMFILE\b|[Ee]rrno:? ?24\b"),
        "'Too many open files' is the process's open-file limit (ulimit -n), not a shared-memory or storage "
        "fault: raise it in the job script (ulimit -n 65536) or slurmd's LimitNOFILE; PyTorch DataLoader "
        "workers passing tensors hit it first (torch.multiprocessing.set_sharing_strategy('file_system'))",
    ),
    (
        re.compile(r"driver version is insufficient for CUDA runtime|NVIDIA driver on your system is too old"),
        "The node's NVIDIA driver is older than the CUDA the program was built for: update the driver on the node, "
        "or use an image / a PyTorch build for the CUDA the driver supports (nvidia-smi shows it)",
    ),
    (
        re.compile(r"error while loading shared libraries: (?P<lib>[^\s:]+)"),
        "The program could not start: the dynamic loader found no {lib} on this node (load its module or set "
        "LD_LIBRARY_PATH in the job script, on every node; in a container, the image lacks it)",
    ),
    (
        re.compile(r"(?P<cmd>[\w.+/-]+): command not found"),
        "The job script's shell found no {cmd} on its PATH (activate the environment or load the module in the "
        "job script itself: a batch job does not run an interactive shell's setup; in a container, the image "
        "lacks it)",
    ),
)


def outside_catalogue_hint(texts: list[str]) -> str | None:
    for pattern, hint in OUTSIDE_CATALOGUE:
        for text in texts:
            if m := pattern.search(text):
                return hint.format(**m.groupdict())
    return None
