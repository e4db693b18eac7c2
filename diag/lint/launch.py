"""Checks of how the job starts its processes: MPI wiring, rendezvous address and port, counts."""

from __future__ import annotations

import re

from diag.lint.context import Hit, LintContext
from diag.lint.script import Command, Value, first_int, gpus_per_node

# Programs that are MPI programs whatever their arguments (names, not contents: a static guess).
_MPI_PROGRAM = re.compile(r"(?:^|[_-])mpi|^osu_|^IMB-|^xhpl$|^lmp|^gmx_mpi$|_perf_mpi$", re.I)
# A script that loads an MPI stack or sets its variables runs MPI programs under srun, whatever
# their names; what else srun starts there may be MPI too (a warning, not an error).
_MPI_STACK = re.compile(
    r"\bmodule\s+(?:load|add)\b.*\b(?:openmpi|ompi|hpcx|mpich|mvapich|intel-?mpi|impi|cray-mpich)", re.I
)
_NOT_MPI = re.compile(r"^(?:python[\d.]*|bash|sh|torchrun|hostname|nvidia-smi|echo|env|true|sleep|date|cat|ls)$")
_LOCAL_ADDRS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _is_mpi_program(cmd: Command) -> str | None:
    words = [w.value or w.raw for w in cmd.program]
    if not words:
        return None
    base = words[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"python[\d.]*", base) and len(words) > 2 and words[1] == "-m" and words[2] == "mpi4py":
        return "python -m mpi4py"
    return base if _MPI_PROGRAM.search(base) else None


def _mpi_stack(ctx: LintContext) -> bool:
    if any(_MPI_STACK.search(line) for line in ctx.script.lines):
        return True
    return any(name.startswith(("OMPI_", "I_MPI_", "MPICH_")) for name in ctx.script.env)


def pmix_wiring(ctx: LintContext) -> list[Hit]:
    """An MPI program started by srun without ``--mpi=pmix*`` (and no site default of pmix)."""
    hits = []
    stack = _mpi_stack(ctx)
    slurm_mpi = ctx.script.variable("SLURM_MPI_TYPE")
    profile_default = ctx.profile.mpi_default if ctx.profile else None
    for cmd in ctx.script.commands:
        if cmd.launcher != "srun" or cmd.inner is not None:
            continue
        program = _is_mpi_program(cmd)
        guessed = False
        if program is None and stack and cmd.program:
            base = (cmd.program[0].value or cmd.program[0].raw).rsplit("/", 1)[-1]
            if base.startswith("-") or _NOT_MPI.match(base) or base.endswith(".py"):
                continue
            program, guessed = base, True  # the script loads an MPI stack: probably one of its programs
        if program is None:
            continue
        mpi = cmd.options.get("mpi") or slurm_mpi
        if mpi is not None and (mpi.value is None or mpi.value.startswith("pmi")):
            continue  # wired (or set by a variable we cannot read)
        if mpi is None and profile_default is not None and profile_default.startswith("pmi"):
            continue  # MpiDefault does it
        certain = (mpi is not None or profile_default is not None) and not guessed
        assumed = (
            []
            if mpi is not None or profile_default is not None
            else ["the site's MpiDefault is not pmix (no site profile says)"]
        )
        if guessed:
            assumed.append(f"{program} is an MPI program (the script loads an MPI stack)")
        how = f"--mpi={mpi.value}" if mpi is not None else "no --mpi"
        hits.append(Hit(f"srun at line {cmd.line} starts MPI program {program} with {how}: it cannot wire up",
                        [cmd.line], certain, assumed))  # fmt: skip
    return hits


def mpi_plugin(ctx: LintContext) -> list[Hit]:
    """``srun --mpi=X`` naming a plugin the site profile does not list (needs a profile)."""
    plugins = ctx.profile.mpi_plugins if ctx.profile else None
    if not plugins:
        return []
    hits = []
    for cmd in ctx.script.commands:
        mpi = cmd.options.get("mpi") if cmd.launcher == "srun" else None
        if mpi is not None and mpi.value and mpi.value not in plugins and mpi.value != "list":
            hits.append(Hit(f"srun --mpi={mpi.value} at line {cmd.line}: this Slurm has {', '.join(plugins)} "
                            f"(from {ctx.profile.path})", [cmd.line], True))  # fmt: skip
    return hits


def _endpoint(cmd: Command) -> tuple[Value | None, Value | None]:
    """torchrun's rendezvous host and port as written (--rdzv-endpoint, or --master-addr/-port)."""
    host, port = cmd.options.get("master-addr"), cmd.options.get("master-port")
    endpoint = cmd.options.get("rdzv-endpoint")
    if endpoint is not None:
        text = endpoint.value if endpoint.value is not None else endpoint.raw
        h, sep, p = text.rpartition(":")
        if not sep:
            h, p = text, ""
        known = endpoint.value is not None
        host = Value(h, endpoint.line, h if known or "$" not in h else None)
        port = Value(p, endpoint.line, p if known or "$" not in p else None) if p else None
    return host, port


def master_addr(ctx: LintContext) -> list[Hit]:
    """MASTER_ADDR (or torchrun's rendezvous host) is this node, in a job of several nodes."""
    if ctx.multi_node is False:
        return []
    values = list(ctx.assignments("MASTER_ADDR"))
    values += [h for cmd in ctx.launches() if cmd.launcher == "torchrun" for h in [_endpoint(cmd)[0]] if h]
    hits = []
    for value in values:
        if value.value is not None and value.value.strip("[]") in _LOCAL_ADDRS:
            hits.append(Hit(f"the rendezvous address is {value.value}: the other nodes will connect to themselves",
                            [value.line], bool(ctx.multi_node), ctx.nodes_assumption()))  # fmt: skip
    return hits


def master_port(ctx: LintContext) -> list[Hit]:
    """A fixed MASTER_PORT (or torchrun port): two jobs sharing a node collide on it."""
    values = list(ctx.assignments("MASTER_PORT"))
    values += [p for cmd in ctx.launches() if cmd.launcher == "torchrun" for p in [_endpoint(cmd)[1]] if p]
    return [
        Hit(f"port {v.value} is fixed: another job on the same node using it makes the store fail to listen",
            [v.line], True, advice=True)
        for v in values
        if v.value is not None and v.value.isdigit() and "$" not in v.raw
    ]  # fmt: skip


def world_size(ctx: LintContext) -> list[Hit]:
    """torchrun's ``--nnodes``/``--nproc-per-node`` against the allocation's nodes, tasks and GPUs."""
    hits = []
    for outer in ctx.script.commands:
        runs = [(outer, None)] if outer.launcher == "torchrun" else []
        if outer.launcher == "srun" and outer.inner is not None and outer.inner.launcher == "torchrun":
            runs.append((outer.inner, outer))
        for torchrun, srun in runs:
            hits += _torchrun_counts(ctx, torchrun, srun)
    return hits


def _torchrun_counts(ctx: LintContext, torchrun: Command, srun: Command | None) -> list[Hit]:
    hits = []
    nnodes_v = torchrun.options.get("nnodes")
    nnodes = first_int(nnodes_v) if nnodes_v is not None and ":" not in (nnodes_v.value or ":") else None
    step_nodes = first_int(srun.options.get("nodes")) if srun and "nodes" in srun.options else ctx.nodes
    if nnodes is not None and step_nodes is not None and nnodes != step_nodes:
        hits.append(Hit(f"torchrun --nnodes={nnodes} (line {torchrun.line}) but the job runs it on {step_nodes} "
                        "node(s): the rendezvous waits for nodes that never come", [torchrun.line]))  # fmt: skip
    elif srun is None and nnodes and nnodes > 1:
        hits.append(Hit(f"torchrun --nnodes={nnodes} at line {torchrun.line} is started once, on the batch host only "
                        "(not under srun): the other nodes never join", [torchrun.line]))  # fmt: skip
    nproc = first_int(torchrun.options.get("nproc-per-node"))
    gpus = gpus_per_node(ctx.script, srun)
    if nproc is not None and gpus is not None and nproc > gpus:
        hits.append(Hit(f"torchrun --nproc-per-node={nproc} but the job asks for {gpus} GPU(s) per node",
                        [torchrun.line]))  # fmt: skip
    if srun is not None:
        per_node = srun.options.get("ntasks-per-node") or ctx.script.option("ntasks-per-node")
        tasks = first_int(per_node)
        if tasks is not None and tasks > 1:
            hits.append(Hit(f"srun starts {tasks} torchrun agents per node (--ntasks-per-node={tasks}, line "
                            f"{per_node.line or 'command line'}), each with its own --nproc-per-node workers",
                            [srun.line] + ([per_node.line] if per_node.line else [])))  # fmt: skip
    return hits
