"""``slurmdiag probe``: a short Slurm job that checks, on every node, what multi-node GPU jobs need
(verbs devices, NICs, locked memory, /dev/shm, shared paths, GPUs, a small NCCL all-reduce), then
reads its own output back: the normal diagnosis, plus what the marked report lines prove.

Every node prints lines ``slurmdiag-probe: NODE: KEY: VALUE``; :func:`interpret` turns them into
findings with the existing cause ids (only where the lines prove the cause) and ``not checked:``
notes for what the node could not test (no HCAs, no GPUs, no nccl-tests or torch): never a pass.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from diag.catalog.model import RuleSet
from diag.evidence import Evidence
from diag.formats.safe import safe_text
from diag.report import Finding, Report, finding_from_rule

MARK = "slurmdiag-probe:"
LINE = re.compile(rf"^\s*(?:\d+: )?{MARK} (?P<node>[^:\s]+): (?P<key>[\w-]+): ?(?P<value>.*)$")
FINAL_STATES = {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                "BOOT_FAIL", "DEADLINE"}  # fmt: skip
PROBE_CONFIDENCE = 0.95  # the probe looked directly: no inference from log text

# Runs once per node (srun --ntasks-per-node=1), inside the container when there is one. $1 is the
# marker token the batch script wrote into each shared path; the rest are the shared paths.
NODE_SCRIPT = r"""
node=${SLURMD_NODENAME:-$(hostname)}
say() { printf 'slurmdiag-probe: %s: %s: %s\n' "$node" "$1" "$2"; }
token=$1; shift
if [ -d /dev/infiniband ]; then
  say dev-infiniband present
  ls -l /dev/infiniband 2>&1 | while IFS= read -r l; do say dev-infiniband-ls "$l"; done
else
  say dev-infiniband missing
fi
hcas=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
say sys-infiniband "${hcas:-none}"
if command -v ibv_devinfo >/dev/null 2>&1; then
  ibv_devinfo -l 2>&1 | while IFS= read -r l; do say ibv-devinfo "$l"; done
else
  say ibv-devinfo "not found"
fi
if command -v ip >/dev/null 2>&1; then
  ip -br addr 2>&1 | while IFS= read -r l; do say nic "$l"; done
else
  for n in /sys/class/net/*; do say nic "$(basename "$n") $(cat "$n/operstate" 2>/dev/null)"; done
fi
say ulimit-l "$(ulimit -l)"
say dev-shm-kb "$(df -kP /dev/shm 2>/dev/null | awk 'NR==2 {print $2}')"
for p in "$@"; do
  if [ ! -e "$p" ]; then say shared "$p missing"
  elif [ ! -r "$p/.slurmdiag-probe-$SLURM_JOB_ID" ]; then say shared "$p no-marker"
  elif [ "$(cat "$p/.slurmdiag-probe-$SLURM_JOB_ID")" = "$token" ]; then say shared "$p ok"
  else say shared "$p other-marker"
  fi
done
if command -v nvidia-smi >/dev/null 2>&1; then
  say gpus "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
else
  say gpus "nvidia-smi not found"
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
export NCCL_DEBUG=INFO
if command -v all_reduce_perf >/dev/null 2>&1; then
  say nccl "all_reduce_perf"
  timeout 120 all_reduce_perf -b 8 -e 128M -f 2 -g 1 2>&1; say nccl-exit "$?"
elif [ "${gpus:-0}" -gt 0 ] && python3 -c 'import torch' >/dev/null 2>&1; then
  say nccl "torch.distributed"
  timeout 120 python3 -c '
import os, torch, torch.distributed as dist
dist.init_process_group("nccl", rank=int(os.environ["SLURM_PROCID"]), world_size=int(os.environ["SLURM_NTASKS"]))
torch.cuda.set_device(0)
x = torch.ones(32 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("slurmdiag-probe: %s: nccl-result: all_reduce ok, value %g" % (os.environ.get("SLURMD_NODENAME", "?"), x[0].item()))
dist.destroy_process_group()
' 2>&1; say nccl-exit "$?"
elif [ "${gpus:-0}" -gt 0 ]; then
  say nccl "skipped: neither all_reduce_perf (nccl-tests) on PATH nor torch importable"
else
  say nccl "skipped: no GPU, and no all_reduce_perf (nccl-tests) on PATH"
fi
say done ok
"""


@dataclass
class ProbeOptions:
    nodes: int
    container_image: str | None = None
    partition: str | None = None
    time_minutes: int = 5
    shared_paths: Sequence[str] = ()
    output_dir: str = "."
    job_name: str = "slurmdiag-probe"


def job_script(opts: ProbeOptions) -> str:
    """The batch script: one marker per shared path from the first node, then the node report on
    every node, then the markers removed."""
    q = shlex.quote
    head = [
        "#!/bin/bash",
        f"#SBATCH --job-name={opts.job_name}",
        f"#SBATCH --nodes={opts.nodes}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --time={opts.time_minutes}",
        f"#SBATCH --output={opts.output_dir.rstrip('/') or '.'}/{opts.job_name}-%j.out",
    ]
    if opts.partition:
        head.append(f"#SBATCH --partition={opts.partition}")
    srun = ["srun", "--ntasks-per-node=1", f"--nodes={opts.nodes}", "--label"]
    if opts.container_image:
        srun += [f"--container-image={q(opts.container_image)}", "--container-mounts=/dev/infiniband:/dev/infiniband"]
    paths = " ".join(q(p) for p in opts.shared_paths)
    body = [
        "# Written by slurmdiag probe: the marked lines are read back by `slurmdiag probe`.",
        'token="$SLURM_JOB_ID-$(date +%s%N)-$RANDOM"',
        f"for p in {paths}; do" if paths else "for p in; do",
        '  [ -d "$p" ] && echo "$token" > "$p/.slurmdiag-probe-$SLURM_JOB_ID" 2>/dev/null',
        "done",
        "read -r -d '' NODE_SCRIPT <<'SLURMDIAG_PROBE_EOF'",
        NODE_SCRIPT.strip(),
        "SLURMDIAG_PROBE_EOF",
        # torch.distributed rendezvous: the first node of the allocation.
        'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
        "export MASTER_PORT=$((29500 + SLURM_JOB_ID % 1000))",
        " ".join(srun) + f' bash -c "$NODE_SCRIPT" probe "$token" {paths}'.rstrip(),
        "status=$?",
        f"for p in {paths}; do" if paths else "for p in; do",
        '  rm -f "$p/.slurmdiag-probe-$SLURM_JOB_ID"',
        "done",
        "exit $status",
    ]
    return "\n".join(head + [""] + body) + "\n"


Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60)


class ProbeError(Exception):
    pass


def submit(script: str) -> str:
    """sbatch the script (on stdin); the job id."""
    try:
        done = subprocess.run(["sbatch", "--parsable"], input=script, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProbeError(f"sbatch failed: {exc}") from exc
    if done.returncode != 0:
        raise ProbeError(f"sbatch failed: {safe_text(done.stderr.strip()[:300])}")
    job_id = done.stdout.strip().split(";")[0]
    if not job_id:
        raise ProbeError("sbatch printed no job id")
    return job_id


def wait_for(job_id: str, wait_s: float, poll_s: float = 1.0, run: Runner = _run) -> str:
    """The job's final state, polling scontrol; raises ProbeError when --wait runs out."""
    deadline = time.monotonic() + wait_s
    state = "?"
    while True:
        try:
            done = run(["scontrol", "show", "job", "-o", job_id])
            match = re.search(r"\bJobState=(\S+)", done.stdout)
            state = match.group(1) if match else ("gone" if done.returncode else "?")
        except (OSError, subprocess.TimeoutExpired):
            state = "?"
        if state in FINAL_STATES:
            return state
        if state == "gone":  # aged out of slurmctld: sacct (through query_job) has the rest
            return state
        if time.monotonic() >= deadline:
            raise ProbeError(
                f"probe job {job_id} is still {state} after {wait_s:g} s (--wait): see `squeue -j {job_id}`, "
                f"then `slurmdiag job {job_id}` once it ends, or `scancel {job_id}`"
            )
        time.sleep(poll_s)


@dataclass
class NodeReport:
    node: str
    values: dict[str, list[tuple[str, Evidence]]] = field(default_factory=dict)

    def first(self, key: str) -> str | None:
        return self.values[key][0][0] if key in self.values else None

    def evidence(self, key: str) -> Evidence | None:
        return self.values[key][0][1] if key in self.values else None


def parse(paths: Sequence[str]) -> dict[str, NodeReport]:
    """The marked lines of the probe's output files, by node (in the order nodes first report)."""
    nodes: dict[str, NodeReport] = {}
    order = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    match = LINE.match(line.rstrip("\n"))
                    if not match:
                        continue
                    order += 1
                    ev = Evidence(path=path, line=number, text=line.rstrip("\n")[:400], order=(0, order))
                    report = nodes.setdefault(match["node"], NodeReport(match["node"]))
                    report.values.setdefault(match["key"], []).append((match["value"].strip(), ev))
        except OSError:
            continue
    return nodes


def _finding(rules: RuleSet, cause: str, hosts: list[str], detail: str, evidence: list[Evidence],
             values: dict[str, str]) -> Finding | None:  # fmt: skip
    rule = rules.by_id().get(cause)
    if rule is None:  # turned off with --disable
        return None
    values = {"hosts": ", ".join(hosts), "node": ", ".join(hosts), **values}
    return finding_from_rule(rule, confidence=PROBE_CONFIDENCE, detail=detail, evidence=evidence, values=values,
                             hosts=hosts)  # fmt: skip


def interpret(nodes: dict[str, NodeReport], rules: RuleSet, *, container: bool, expected_nodes: int,
              shared_paths: Sequence[str]) -> tuple[list[Finding], list[str]]:  # fmt: skip
    """Findings the probe lines prove, and notes: per node what could not be checked, and warnings."""
    findings: list[Finding] = []
    notes: list[str] = []
    if len(nodes) < expected_nodes:
        notes.append(
            f"not checked: only {len(nodes)} of {expected_nodes} nodes printed a probe report "
            "(the step failed or the container did not start on the others: see the findings above)"
        )
    unmounted: list[str] = []
    unmounted_ev: list[Evidence] = []
    for name, node in nodes.items():
        shown = safe_text(name)
        hcas = (node.first("sys-infiniband") or "none").split()
        hcas = [] if hcas == ["none"] else hcas
        dev = node.first("dev-infiniband")
        if dev == "missing" and hcas:
            if container:
                unmounted.append(name)
                unmounted_ev += [e for e in (node.evidence("dev-infiniband"), node.evidence("sys-infiniband")) if e]
            else:
                notes.append(f"{shown}: /sys/class/infiniband lists {safe_text(' '.join(hcas))} but /dev/infiniband "
                             "is missing on the host: the verbs device nodes are not created (rdma-core/udev)")  # fmt: skip
        elif not hcas:
            notes.append(f"not checked: {shown}: InfiniBand (no HCA in /sys/class/infiniband"
                         + (", and no /dev/infiniband)" if dev == "missing" else ")"))  # fmt: skip
        limit = node.first("ulimit-l")
        if limit is not None and limit != "unlimited":
            notes.append(f"warning: {shown}: locked memory is limited (ulimit -l = {safe_text(limit)} KiB): RDMA "
                         "registration can fail; set it unlimited (slurm.conf PropagateResourceLimits, "
                         "/etc/security/limits.conf memlock)")  # fmt: skip
        gpus = node.first("gpus")
        if gpus is None or not gpus.isdigit():
            notes.append(f"not checked: {shown}: GPUs (nvidia-smi not found)")
        elif gpus == "0":
            notes.append(f"not checked: {shown}: GPUs (nvidia-smi lists none)")
        nccl = node.first("nccl") or ""
        if nccl.startswith("skipped"):
            notes.append(f"not checked: {shown}: NCCL all-reduce ({safe_text(nccl.removeprefix('skipped: '))})")
        elif nccl and node.first("nccl-exit") not in (None, "0"):
            notes.append(
                f"{shown}: the NCCL all-reduce ({safe_text(nccl)}) exited with {safe_text(node.first('nccl-exit') or '?')}"
            )
        if node.first("done") is None:
            notes.append(f"not checked: {shown}: the probe stopped before its end (no 'done' line)")
    if unmounted:
        findings.append(_finding(
            rules, "ib-devices-not-mounted", unmounted,
            f"Inside the container /dev/infiniband is missing on {', '.join(unmounted)} while "
            "/sys/class/infiniband lists HCAs there.", unmounted_ev, {}))  # fmt: skip
    for path in shared_paths:
        bad: dict[str, str] = {}
        evidence: list[Evidence] = []
        for name, node in nodes.items():
            for value, ev in node.values.get("shared", []):
                where, _, state = value.rpartition(" ")
                if where == path and state != "ok":
                    bad[name] = state
                    evidence.append(ev)
        if not bad and nodes:
            seen = sum(any(v.rpartition(" ")[0] == path for v, _ in n.values.get("shared", [])) for n in nodes.values())
            if seen == len(nodes):
                notes.append(
                    f"{safe_text(path)}: one shared directory: the first node's marker was read on all {seen} nodes"
                )
        if bad and len(bad) < len(nodes):
            how = "; ".join(f"{n}: {'missing' if s == 'missing' else 'marker from the first node not visible'}"
                            for n, s in bad.items())  # fmt: skip
            findings.append(_finding(
                rules, "shared-storage-missing", list(bad),
                f"{path} is not the same shared directory on every node ({how}).", evidence, {"path": path}))  # fmt: skip
        elif bad:
            notes.append(
                f"{safe_text(path)}: not visible as one shared directory on any node ("
                + "; ".join(f"{n}: {s}" for n, s in bad.items())
                + "): a wrong path, or not shared at all"
            )
    return [f for f in findings if f is not None], notes


def add_to_report(report: Report, files: Sequence[str], rules: RuleSet, opts: ProbeOptions) -> Report:
    """The normal diagnosis with the probe's own reading of its marked lines added."""
    from diag.diagnosis.evaluate import rank

    nodes = parse(files)
    findings, notes = interpret(nodes, rules, container=bool(opts.container_image), expected_nodes=opts.nodes,
                                shared_paths=opts.shared_paths)  # fmt: skip
    known = {f.id for f in report.findings}
    report.findings = rank(report.findings + [f for f in findings if f.id not in known], rules.by_id())
    report.notes = list(report.notes) + notes
    return report
