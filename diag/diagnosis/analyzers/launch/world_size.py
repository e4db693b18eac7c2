"""World size against the allocation: world-size-mismatch.

Reads what each launcher and framework says of the world it was given (NCCL's nranks, torchrun, Lightning,
DeepSpeed, mpirun's slots, srun steps, Ray's placement) and says which counts of the launch layout disagree.
"""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import fixed_sentence, sentences
from diag.diagnosis.analyzers.launch.common import (
    STORE_TIMEOUT_SIGNATURES,
    _cancelled_right_after,
    _ends_its_log,
    only_rank0_came,
    store_overfull,
)
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST


def _not_divisible(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["not_divisible"])[:1]:
        by = g["by"].rstrip(".")
        if g.get("what", "").startswith("data"):
            return f"the data-parallel size the started processes give ({g['a']}) does not divide by {by}"
        if not g.get("a"):
            # Megatron 23.04's message has no world size of its own (its first number is the world size).
            return f"the number of processes started is not divisible by the parallel layout ({by})"
        return f"{g['a']} processes were started, which the parallel layout ({by}) does not divide"
    return None


def _lightning_slurm(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["lightning_slurm"])[:1]:
        if g.get("opt"):
            return f"Lightning's {g['what']}={g['a']} does not match Slurm's --{g['opt']}={g['b']}"
        per = "tasks per node" if g["what"] == "devices" else "nodes"
        return f"Lightning's {g['what']}={g['a']} does not match the {per} Slurm gave the job"
    return None


def _mpi_slots(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["mpi_slots"])[:1]:
        want = f" {g['want']}" if g.get("want") else ""
        return f"mpirun asked for{want} more processes than the allocation has slots (tasks)"
    return None


def _step_create(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["step_create"])[:1]:
        if g["reason"].startswith(("Task count", "Invalid node name")):
            # A count or node name the step cannot use at all, not one beyond the allocation.
            return f"srun could not lay out the step in job {g['job']} ({g['reason']})"
        return f"an srun step asked for more than job {g['job']} holds ({g['reason']})"
    return None


def _sampler_rank(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["sampler_rank"])[:1]:
        world = int(g["max"]) + 1
        return f"a DistributedSampler got rank {g['rank']} in a world of {world}: RANK and WORLD_SIZE disagree"
    return None


# What does not match, in this order (diag.diagnosis.analyzers.common.sentences).
LAYOUT_SENTENCES: tuple = (
    (["rank_count", "info_mismatch"], "ranks passed different world sizes to NCCL ({a} vs {b})"),
    (
        ["checked_in"],
        "two processes claimed rank {rank} of {nranks}: every task got the same RANK, or torchrun "
        "was started once per GPU with the same --node-rank",
    ),
    ([], _step_create),
    (["only_allocated"], "an srun step asked for {want} nodes in a {have}-node allocation"),
    (
        ["nnodes_reset"],
        "srun ran {tasks} tasks on {have} nodes instead of the {want} asked for, "
        "so anything computed from the asked-for node count is wrong",
    ),
    (["ntasks_per_node"], "srun ignored --ntasks-per-node={per_node} ({tasks} tasks requested)"),
    (
        ["launchers_disagree"],
        "the {launcher} launcher started {a} processes but torch.distributed sees a world of {b}: "
        "the two launchers disagree on the layout (processes per node, hosts)",
    ),
    (
        ["launchers_disagree_rank"],
        "the MPI launcher gave a process rank {a} but torch.distributed rank {b}: the two launchers disagree on "
        "the layout",
    ),
    (["deepspeed_hostfile"], "DeepSpeed's launcher refused its hostfile: {msg}"),
    (["deepspeed_slot", "deepspeed_node_rank"], "DeepSpeed's launcher could not place the processes: {msg}"),
    (["deepspeed_mpich"], "DeepSpeed's {mpi} launcher needs the same number of GPUs on every node"),
    (
        ["device_mesh"],
        "the device mesh needs the same GPU count on every node, but {a} ranks are not a whole number of nodes "
        "of {b} GPUs",
    ),
    (["batch_dp"], "the global batch ({gbs}) does not divide by the micro batch ({mbs}) times a data-parallel size of {dp}"),
    (["bare_divisible"], "a parallel group size does not divide: {a} is not divisible by {b}"),
    (["accelerate_parallelism"], "the parallelism config needs {a} processes but {b} were started"),
    (["tf_slurm_resolver"], "TensorFlow's Slurm cluster resolver found the step smaller than asked: {msg}"),
    (
        [
            "slurm_layout", "slurm_alloc_failure", "slurm_unable", "sbatch_refused", "slurm_bad_count",
            "slurm_no_nodes", "slurm_ntasks_per_gpu"
        ],
        "Slurm refused the layout asked for: {msg}",
    ),
    (
        [
            "ompi_ppr", "ompi_filled", "ompi_hosts_outside", "ompi_per_node", "ompi_binding", "ompi_no_nodes",
            "ompi_seq", "ompi_seq_file", "ompi_np_omitted", "ompi_unmapped", "ompi_slurm_no_hosts"
        ],
        "Open MPI could not map the processes onto the allocation: {msg}",
    ),
    (["layout_needs"], "the parallel layout in the config needs {a} processes, but {b} were started"),
    ([], _not_divisible),
    (
        ["dp_rank_beyond"],
        "a process got data-parallel rank {rank} of {dp}: its rank and the world size the layout was computed from "
        "disagree",
    ),
    (["parallel_dims"], "the parallel dimensions {dims} do not multiply to the {world} processes started"),
    (["mesh_bigger"], "the device mesh asks for {ranks} ranks, more than the {world} processes started"),
    (
        [
            "grid_oversized", "lightning_model_parallel", "pipeline_world", "pipe_stages", "inference_shards",
            "mics_shards", "mimo_stub_ranks", "expert_degree", "trtllm_world", "trtllm_engine_world"
        ],
        "the parallel layout the program was given does not fit the processes started: {msg}",
    ),
    (
        ["lightning_product"],
        "Lightning's devices={a} x num_nodes={b} does not match the {world} processes torchrun started",
    ),
    (
        ["lightning_ntasks"],
        "Lightning needs --ntasks-per-node (one task per device), not --ntasks={ntasks}",
    ),
    (
        ["zero_dp_resume"],
        "the ZeRO checkpoint was written by {a} data-parallel ranks and is loaded by {b}: resume with the "
        "checkpoint's layout or convert the checkpoint",
    ),
    (["elastic_world"], "DeepSpeed's elastic config allows world sizes {valid}, not the {world} processes started"),
    (
        ["local_rank_devices"],
        "LOCAL_RANK is not RANK modulo the GPUs the node shows: the tasks per node and the GPUs each task sees "
        "disagree",
    ),
    (
        ["local_rank_conflict"],
        "LOCAL_RANK is {a} but {var} is {b}: two launchers (mpirun and torchrun or deepspeed) each set the ranks",
    ),
    (
        ["launcher_env_rank", "launcher_local_rank"],
        "DeepSpeed found the rank variables missing or contradictory ({msg}): start it under one launcher that "
        "sets them",
    ),
    (["all_to_all_group"], "DeepSpeed's all-to-all groups need whole nodes of the node's GPU count ({msg})"),
    (["nodes_min_max", "deepspeed_limits", "torchrun_nproc"], "the launcher refused its node or GPU counts: {msg}"),
    (
        ["accelerate_processes", "accelerate_num_processes"],
        "accelerate launch was not given a usable process count: {msg}",
    ),
    (
        ["horovod_hosts", "horovod_short_slots", "horovod_impi_slots", "horovod_min_hosts"],
        "horovodrun's hosts and slots do not fit the processes asked for: {msg}",
    ),
    (["horovod_min_slots"], "horovodrun never found slots for the {want} processes it needs at least"),
    (
        ["jax_undefined", "tf_slurm_step"],
        "the process was not started as a task of the job's step, so it has no process count or id ({msg})",
    ),
    (
        ["jax_cluster"],
        "JAX found no {method} step to take its process count from ({why}): start it with srun inside the allocation",
    ),
    (
        ["srun_unused"],
        "Lightning runs on Slurm but the script was not started with srun: one process runs and waits for the others",
    ),
    (
        ["ray_worker_start"],
        "Ray Train waited {secs} s for {workers} workers to be placed: the cluster may not have the resources the "
        "ScalingConfig asks for",
    ),
    (["batch_world"], "the DeepSpeed batch sizes were set for another number of processes ({a} != {b})"),
    ([], _lightning_slurm),
    (
        ["lightning_gpus"],
        "Lightning was asked for GPUs [{want}] that the task cannot see (srun --gpus-per-task=1 or CUDA_VISIBLE_DEVICES "
        "gives each task its own GPU: ask for devices=1 per task, or give one task per node all of them)",
    ),
    ([], _mpi_slots),
    (
        ["ray_bundle_index"],
        "a Ray task or actor was placed on bundle {index} of a placement group that has no such bundle (Ray lists "
        "its indexes as 0-{top}): the "
        "layout places more workers (engines x tensor parallel size, GPUs per node x nodes) than the placement "
        "group reserved",
    ),
    (
        ["ray_gpus_short"],
        "the Ray cluster the job joined offers {have} GPUs where it asks for {want}: a node did not join the "
        "cluster, or ray.init started a local instance (ray.init(address='auto') joins the running one)",
    ),
    (
        ["ray_placement_retries"],
        "Ray never offered the GPUs the layout asks for ({tries} placement retries): the job's node and GPU counts "
        "exceed the cluster's (a dedicated Ray head node has no GPUs: count one node less)",
    ),
    (
        ["vllm_node_gpus"],
        "vLLM's world size (tensor x pipeline parallel, {world}) is more than the {have} GPUs this node shows: its "
        "default multiprocessing executor runs on one node, so a layout over several nodes needs the Ray executor "
        "(--distributed-executor-backend ray) or --nnodes/--node-rank on each node",
    ),
    (
        ["vllm_ray_gpus"],
        "the Ray {where} vLLM joined has fewer GPUs than tensor x pipeline parallel: a node did not join the "
        "cluster, or vLLM started a local Ray instance instead of joining it (RAY_ADDRESS, ray.init(address='auto'))",
    ),
    (
        ["vllm_placement_timeout"],
        "Ray never offered vLLM the GPUs its layout asks for ({secs} s waiting for the placement group): the "
        "cluster's nodes or GPUs are fewer than tensor x pipeline parallel",
    ),
    (
        ["deepspeed_no_gpus"],
        "DeepSpeed's launcher found no GPUs on the node it runs on: the step was given none (--gres=gpu:<n> or "
        "--gpus-per-node), CUDA_VISIBLE_DEVICES hides them, or it runs on a host without GPUs",
    ),
    (
        ["local_rank_gpus", "invalid_device_id"],
        "a LOCAL_RANK is beyond the GPUs the process can see: more processes per node than GPUs, or each task sees "
        "only its own GPU (--gpus-per-task) while the program picks the GPU by its local rank",
    ),
    (
        ["device_index_assert"],
        "a process asked for GPU {device} where it sees {have}: more processes per node than GPUs, or each task sees "
        "only its own GPU while the program picks the GPU by its local rank",
    ),
    (
        ["jax_mesh_devices"],
        "the JAX mesh {shape} was written for another device count than the {have} devices the processes see: a "
        "process did not join (jax.distributed.initialize) or sees fewer GPUs than it should",
    ),
    (
        ["k8s_insufficient"],
        "Kubernetes can place no pod of the job: {n} node(s) lack the {resource} it asks for, so the job asks for "
        "more (or larger) workers than the cluster has free",
    ),
    (
        ["ray_infeasible", "cluster_insufficient"],
        "the cluster has no node (or not enough of them) with the resources the workers ask for: fewer or smaller "
        "workers, or more nodes",
    ),
    (["env_nodes_conflict"], "{var} says {a} nodes where the allocation has {b}: a script exported its own value"),
    (["horovod_slots"], "horovodrun asked for {want} processes where its hosts list {have} slots"),
    (
        ["mii_replicas"],
        "DeepSpeed-MII could place only {have} of the {want} model replicas asked for: replicas x tensor_parallel "
        "(tensor_parallel is per replica) needs more GPUs than the hostfile's slots",
    ),
    (["jax_process_id"], "JAX was given process {rank} of {nranks}: RANK and WORLD_SIZE disagree"),
    (
        ["tests_gpus_short"],
        "nccl-tests asked for {want} GPUs per process where the task sees {have}: -g/-t times the processes per "
        "node must not exceed the node's GPUs (one process per GPU: -g 1)",
    ),
    (
        ["paddle_place"],
        "a process was given GPU {device} where it sees {have} GPUs: more processes on the node than GPUs, or "
        "FLAGS_selected_gpus / CUDA_VISIBLE_DEVICES narrower than the launch assumes (paddle.distributed.launch --gpus)",
    ),
    (["nvshmem_rank_count"], "NVSHMEM's processes were given different world sizes ({a} and {b})"),
    (["nccl_invalid_rank"], "a process asked NCCL for rank {rank} in a world of {nranks}: RANK and WORLD_SIZE disagree"),
    ([], _sampler_rank),
    ([], fixed_sentence("device_ordinal", "a LOCAL_RANK is beyond the GPUs the task can see (invalid device ordinal)")),
)


# A Ray resource request pinned to one node's address, as vLLM's placement group asks for its driver's node.
PINNED_TO_NODE = "'node:"


def world_size(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if "ray_infeasible" in chosen and all(PINNED_TO_NODE in ev.text for ev, _ in ctx.samples(rule, ["ray_infeasible"])):
        # Every request Ray could not place is pinned to a node's address (vLLM's "node:<driver IP>" bundle):
        # no node has that address, whatever its GPUs; rendezvous-failure names the address.
        chosen.discard("ray_infeasible")
    if not chosen:
        return (
            _ranks_claimed_twice(rule, ctx)
            or _separate_worlds(rule, ctx)
            or _separate_test_worlds(rule, ctx)
            or _ranks_beyond_world(rule, ctx)
            or _members_never_joined(rule, ctx)
            or _only_rank0_came(rule, ctx)
            or _store_overfull(rule, ctx)
            or _launchers_alone(rule, ctx)
            or _device_list_index(rule, ctx)
        )
    if chosen == {"device_ordinal"} and ctx.count(rule.id, ["nvml_peer_hidden"]):
        # NCCL could not see a local peer's GPU: each task sees only its own (per-task GPU binding), where
        # every task's GPU is device 0 and any other ordinal is invalid. No count disagrees; the honest
        # unexplained finding names the binding.
        return []
    if chosen == {"srun_unused"} and _every_member_joined(rule, ctx):
        return []  # Lightning started the processes itself, and every one of them joined
    parts = sentences(rule, ctx, chosen, LAYOUT_SENTENCES)
    detail = "Launch layout does not match: " + "; ".join(parts) + "."
    if chosen <= {"nnodes_reset", "ntasks_per_node", "srun_unused", "ray_worker_start"}:
        # srun adjusted the layout and the step ran, Lightning warned that srun was not used, Ray Train's
        # start timed out (resources while autoscaling, or the network): worth knowing, not a failure by itself.
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.6)]
    if chosen == {"vllm_ray_gpus"} and not ctx.job_failed():
        # Newer vLLM logs it as a warning and waits for the placement group: the cluster may still grow.
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.6)]
    unexplained = ctx.rules.get("unexplained-failure")
    if chosen == {"bare_divisible"} and unexplained and ctx.count(unexplained.id, ["shape_divide"]):
        # Megatron's/ColossalAI's divide() asserts "<a> is not divisible by <b>" for any two sizes; the traceback
        # shows it dividing a model shape (hidden size by heads): the model's configuration, a guess for the layout.
        detail += " The traceback shows it dividing a model shape (hidden size, heads), not a parallel layout"
        return [ctx.make_finding(rule, detail=detail + ".", severity="warning", confidence=0.3)]
    return [ctx.make_finding(rule, detail=detail)]


# How far below a traceback's source line its exception may be (the frames under it, "^^^^" markers).
_INDEX_ERROR_REACH = 4


def _device_list_index(rule: Rule, ctx: Context) -> list[Finding]:
    """An IndexError just under a traceback line that picks the process's device by its local rank
    (Lightning's ``self.parallel_devices[self.local_rank]``): the node runs more processes than the
    devices the program was given for it (devices per node below the tasks Slurm placed there, nodes
    with uneven GPU counts). An IndexError elsewhere says nothing of the layout."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return []
    picks = [ev for ev, _ in ctx.samples(rule, ["local_rank_index"])]
    errors = [
        ev
        for ev, g in ctx.samples(unexplained, ["exception"])
        if g.get("exception", "").rsplit(".", 1)[-1] == "IndexError"
    ]
    hits = [
        err
        for err in errors
        if any(p.path == err.path and 0 < err.line - p.line <= _INDEX_ERROR_REACH for p in picks)
    ]
    if not hits:
        return []
    pick = next(p for p in picks if any(p.path == e.path and 0 < e.line - p.line <= _INDEX_ERROR_REACH for e in hits))
    detail = (
        "Launch layout does not match: a process's local rank is past the end of the device list it picks its GPU "
        f"from ({pick.text.strip()[:80]} raised IndexError): more processes were started on its node than the "
        "devices the program was given for that node (the devices per node set in the program below the tasks "
        "Slurm placed there, or nodes with different GPU counts while the program assumes one count for all)."
    )
    assumed = ["the device list is the program's devices per node, and the local rank the task's place on its node"]
    return [
        ctx.make_finding(
            rule, [], detail=detail, evidence=pick_evidence([pick, *hits]), confidence=0.55, assumed=assumed
        )
    ]


def _separate_worlds(rule: Rule, ctx: Context) -> list[Finding]:
    """Every node holds ranks 0..k-1 of a k-rank communicator and no communicator is larger: each
    node ran a job of its own (nccl-tests built without MPI=1 under mpirun, a launcher that gave
    every node the same world), not one job spanning the nodes."""
    facts = ctx.facts
    k = facts.max_nranks
    hosts = [h for h in facts.hosts.values() if h.ranks and h.host != UNNAMED_HOST]
    if k < 2 or len(hosts) < 2 or any(h.ranks != set(range(k)) for h in hosts):
        return []
    detail = (
        f"{len(hosts)} nodes ({hosts_text([h.host for h in hosts])}) each ran ranks 0-{k - 1} of their own {k}-rank "
        "communicator and no communicator spans the nodes: each node ran a separate job (nccl-tests must be "
        "built with MPI=1 to run across nodes under mpirun; every launcher must get the whole world)"
    )
    severity = "error" if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=[h.host for h in hosts], severity=severity, confidence=0.5
        )
    ]


def _separate_test_worlds(rule: Rule, ctx: Context) -> list[Finding]:
    """nccl-tests printing its rank 0 on several hosts: as above, seen in nccl-tests' own device list
    (no NCCL INFO needed): each process ran a world of its own, so its figures are single-node ones."""
    first = ctx.facts.tests_rank0
    if len(first) < 2:
        return []
    hosts = sorted(first, key=natural_key)
    detail = (
        f"nccl-tests listed its rank 0 on {len(hosts)} hosts ({hosts_text(hosts)}): every process ran as a job of "
        "its own, not as ranks of one job, so no traffic crossed the nodes and the bandwidth figures are single-node "
        "ones. nccl-tests joins its processes only through MPI: rebuild it with `make MPI=1 MPI_HOME=<mpi>` "
        "(`make clean` first) and launch it with mpirun or `srun --mpi=pmix`"
    )
    evidence = [
        ctx.evidence_at(order, text, host)
        for host, (order, text) in sorted(first.items(), key=lambda item: item[1][0])[:4]
    ]
    severity = "error" if ctx.job_failed() else "warning"  # as _separate_worlds weighs it
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=hosts, evidence=evidence, severity=severity, confidence=0.6
        )
    ]


def _task_numbers(text: str) -> set[int]:
    """srun's task list ("2-7", "8-13,15") as numbers."""
    out: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        if not (low.isdigit() and len(low) < 10 and (not high or (high.isdigit() and len(high) < 10))):
            continue  # not a task list srun writes (a log line of another program, digits past int()'s limit)
        if int(high or low) - int(low) < 100_000:
            out.update(range(int(low), int(high or low) + 1))
    return out


def _ranks_beyond_world(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's "invalid argument" at init, and srun saying every task from some k > 0 up failed while tasks
    0..k-1 did not: the program was given a world of k processes (a --world-size or WORLD_SIZE of its own)
    while srun started more; NCCL rejects a rank that is not below the world size."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return []
    failed: set[int] = set()
    for _, g in ctx.samples(unexplained, ["task_exit"]):
        if g.get("how", "").startswith("Exited with exit code"):
            failed |= _task_numbers(g.get("task", ""))
    if not failed or min(failed) < 1 or failed != set(range(min(failed), max(failed) + 1)):
        return []
    errors = [ev for ev, _ in ctx.samples(unexplained, ["exception", "nccl_error"])]
    invalid = [ev for ev in errors if "NCCL" in ev.text and "invalid argument" in ev.text]
    if not invalid:
        return []
    k, top = min(failed), max(failed)
    detail = (
        f"tasks {k}-{top} failed at NCCL's set-up with \"invalid argument\" while tasks 0-{k - 1} did not: the program "
        f"was given a world of {k} processes (its own --world-size or WORLD_SIZE) while srun started {top + 1}, and "
        "NCCL rejects a rank that is not below the world size; derive the world size from SLURM_NTASKS, or start "
        "as many tasks as the world it is told"
    )
    assumed = [f"srun started {top + 1} tasks (the highest failing task is {top})"]
    return [
        ctx.make_finding(
            rule, [], detail="Launch layout does not match: " + detail + ".", evidence=pick_evidence(invalid),
            confidence=0.55, assumed=assumed,
        )  # fmt: skip
    ]


def _only_rank0_came(rule: Rule, ctx: Context) -> list[Finding]:
    """Rank 0's store timing out with 1 of N processes joined, and no other process heard from: the
    others were never started (the script run once instead of under srun or torchrun on every node,
    a layout that computes a larger world than was launched). Other ranks that were started and
    went elsewhere would fail to reach the store, and say so; then it is the rendezvous."""
    store = only_rank0_came(ctx)
    if store is None:
        return []
    secs, _, world = store
    rendezvous_rule = ctx.rules["rendezvous-failure"]
    timeout = ctx.stats(rendezvous_rule, sorted(STORE_TIMEOUT_SIGNATURES))
    detail = (
        f"Launch layout does not match: the job computed a world of {world} processes but only rank 0 reached "
        f"its store in {secs} s and no other process was heard from, so the other {world - 1} were never started "
        "(start the script with srun on every node, or torchrun with --nnodes/--nproc-per-node that match the "
        "allocation; a framework's strategy or devices setting can ask for more processes than were launched)"
    )
    finding = ctx.make_finding(rule, [], detail=detail + ".", evidence=pick_evidence(ev for _, st in timeout for ev, _ in st.samples))
    finding.count = sum(st.count for _, st in timeout)
    return [finding]


def _store_overfull(rule: Rule, ctx: Context) -> list[Finding]:
    overfull = store_overfull(ctx)
    if overfull is None:
        return []
    ev, joined, world = overfull
    detail = (
        f"Launch layout does not match: {joined} processes joined the store-based barrier of a {world}-process "
        "world, so the barrier never completes: more processes were started than the world size they were given "
        "(torchrun started under srun once per GPU instead of once per node, or two launchers on a node; "
        "--ntasks-per-node=1 for torchrun, or WORLD_SIZE=$SLURM_NTASKS when srun starts every process)"
    )
    return [ctx.make_finding(rule, [], detail=detail + ".", evidence=[ev])]


def _launchers_alone(rule: Rule, ctx: Context) -> list[Finding]:
    """torchrun's agent reporting a rendezvous of one node (group_world_size=1), or DeepSpeed's launcher
    started for one node (nnodes=1), in a job that spans several nodes: that launcher ran a world of its
    own, and the nodes never formed one job. Several such reports from different hosts show it; one
    report in a log that shows several nodes is a weaker sign (the launcher may have been meant to run
    alone), so it says what it assumed."""
    alone = ctx.samples(rule, ["elastic_alone", "ds_launch_alone"])
    if not alone:
        return []
    hosts = sorted({h for ev, _ in alone if (h := ctx.host_for(ev))}, key=natural_key)
    several = len(hosts) >= 2
    if not several and ctx.facts.nodes_known() is not True:
        return []
    launcher = "torchrun's agent" if any(n == "elastic_alone" for n, _ in ctx.stats(rule, ["elastic_alone"])) else "DeepSpeed's launcher"
    where = f"on {hosts_text(hosts)}" if several else "in this multi-node job"
    detail = (
        f"Launch layout does not match: {launcher} {where} formed a world of one node: each node's launcher ran "
        "its own job instead of one job across the nodes (torchrun --nnodes=$SLURM_NNODES with one shared "
        "--rdzv-endpoint on the first node, not localhost or --standalone; deepspeed with a hostfile of every node)"
    )
    assumed = [] if several else ["the other nodes' launchers did the same: only one launcher's report is in the logs"]
    severity = None if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule,
            ["elastic_alone", "ds_launch_alone"],
            detail=detail + ".",
            evidence=pick_evidence(ev for ev, _ in alone),
            hosts=hosts or None,
            severity=severity,
            confidence=0.7 if several else 0.5,
            assumed=assumed,
        )
    ]


def _every_member_joined(rule: Rule, ctx: Context) -> bool:
    """Whether Lightning announced every member of its world (``GLOBAL_RANK: r, MEMBER: m/n`` for all n)."""
    st = dict(ctx.stats(rule, ["lightning_member"])).get("lightning_member")
    if st is None:
        return False
    worlds = [int(w) for w in st.captures.get("world", {})]
    return bool(worlds) and len(st.captures.get("rank", {})) >= max(worlds)


def _members_never_joined(rule: Rule, ctx: Context) -> list[Finding]:
    """Lightning announcing fewer members than its world, and the log ending there: the run waits
    for members that were never started. Lightning's SLURM guide names the causes: a job started
    without srun, or #SBATCH --nodes / --ntasks-per-node that disagree with num_nodes / devices."""
    st = dict(ctx.stats(rule, ["lightning_member"])).get("lightning_member")
    if st is None:
        return []
    ranks = st.captures.get("rank", {})
    worlds = [int(w) for w in st.captures.get("world", {})]
    said = [ev for ev, _ in st.samples]
    if not worlds or len(ranks) >= max(worlds):
        return []
    hung_until_cancelled = _cancelled_right_after(ctx, said)  # the cancel's slurmstepd line is no failure of its own
    if (ctx.job_failed() or not _ends_its_log(ctx, said)) and not hung_until_cancelled:
        return []
    detail = (
        f"Lightning announced {len(ranks)} of {max(worlds)} members and "
        f"{'nothing came after until the job was cancelled' if hung_until_cancelled else 'the log ends there'}: "
        "the other processes "
        "were never started, so initialisation waits for them (start the script with srun, and make #SBATCH "
        "--nodes / --ntasks-per-node match Trainer(num_nodes=..., devices=...))"
    )
    assumed = ["the run hung at this line: the log shows nothing after it"]
    return [
        ctx.make_finding(
            rule, ["lightning_member"], detail=detail + ".", severity="warning", confidence=0.45, assumed=assumed
        )
    ]


def _ranks_claimed_twice(rule: Rule, ctx: Context) -> list[Finding]:
    """Lightning's per-process announcement (``GLOBAL_RANK: r, MEMBER: m/n``) with the same ranks
    announced more than once and fewer distinct ranks than the world: two launchers each started
    ranks 0.. of the layout (num_nodes / --nodes / --ntasks-per-node disagree)."""
    stats = dict(ctx.stats(rule, ["lightning_member"]))
    st = stats.get("lightning_member")
    if st is None:
        return []
    ranks = st.captures.get("rank", {})
    worlds = [int(w) for w in st.captures.get("world", {})]
    if not ranks or not worlds or st.count <= len(ranks) or len(ranks) >= max(worlds):
        return []
    detail = (
        f"Launch layout does not match: {len(ranks)} of {max(worlds)} ranks were each announced "
        f"{st.count // len(ranks)} times: several nodes started as the same node of the layout, so the "
        "other ranks never joined (Lightning's num_nodes and devices must match Slurm's --nodes and --ntasks-per-node)."
    )
    return [ctx.make_finding(rule, ["lightning_member"], detail=detail, confidence=0.7)]
