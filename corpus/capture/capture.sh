#!/usr/bin/env bash
# Capture real NCCL output on one GPU: two ranks made into two NCCL hosts (NCCL_HOSTID), one file per case,
# both processes writing into it as srun interleaves ranks. Usage: capture.sh OUTDIR
# Per-rank settings: HOST0_ENV / HOST1_ENV (space-separated VAR=value), on top of the case's environment.
set -u
out=${1:?usage: capture.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never multicast here
export NCCL_DEBUG=INFO MASTER_ADDR=127.0.0.1 WORLD_SIZE=2 PYTHONUNBUFFERED=1

run_case() {  # name, seconds, shared env..., -- per-rank envs come from HOST0_ENV/HOST1_ENV
  local name=$1 limit=$2; shift 2
  # CASES="35 36" runs only the cases whose number is listed
  if [ -n "${CASES:-}" ] && [[ " $CASES " != *" ${name%%-*} "* ]]; then return; fi
  local log="$out/$name.log" port=$((29600 + RANDOM % 300))
  {
    echo "# case: $name"
    echo "# shared env: $*"
    echo "# rank 0 env: NCCL_HOSTID=node0 ${HOST0_ENV:-}"
    echo "# rank 1 env: NCCL_HOSTID=node1 ${HOST1_ENV:-}"
    python3 -c 'import torch; print(f"# torch {torch.__version__} cuda {torch.version.cuda} nccl {torch.cuda.nccl.version()}")'
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/# gpu: /'
  } > "$out/$name.meta"
  : > "$log"
  env "$@" MASTER_PORT=$port RANK=0 LOCAL_RANK=0 NCCL_HOSTID=node0 ${HOST0_ENV:-} \
    timeout "$limit" python3 "$here/job.py" >> "$log" 2>&1 &
  local p0=$!
  env "$@" MASTER_PORT=$port RANK=1 LOCAL_RANK=0 NCCL_HOSTID=node1 ${HOST1_ENV:-} \
    timeout "$limit" python3 "$here/job.py" >> "$log" 2>&1 &
  local p1=$!
  wait $p0; local rc0=$?; wait $p1; local rc1=$?
  echo "# exit codes: rank0=$rc0 rank1=$rc1" >> "$out/$name.meta"
}

# one node's container without the HCA filter the other node has (settings differ between nodes)
HOST0_ENV="NCCL_IB_HCA=mlx5_0:1" HOST1_ENV="" run_case 30-two-hosts-hca-one-node 120 STEPS=2
# one node inherited NCCL_IB_DISABLE=1
HOST0_ENV="" HOST1_ENV="NCCL_IB_DISABLE=1" run_case 31-two-hosts-ib-disable-one-node 120 STEPS=2
# one node bootstraps over lo
HOST0_ENV="NCCL_SOCKET_IFNAME=lo" HOST1_ENV="" run_case 32-two-hosts-ifname-lo-one-node 120 STEPS=2
# rank 1 runs out of GPU memory at step 1; rank 0 waits in the all-reduce until its watchdog fires
HOST0_ENV="" HOST1_ENV="" run_case 33-two-hosts-cuda-oom-peer-timeout 180 STEPS=3 OOM_RANK=1 OOM_STEP=1 PG_TIMEOUT=30
# rank 0 is a straggler at step 2 (40 s) with a 20 s timeout: rank 1's watchdog fires
HOST0_ENV="" HOST1_ENV="" run_case 34-two-hosts-straggler-rank0 180 STEPS=3 STALL_RANK=0 STALL_STEP=2 STALL_SECS=60 PG_TIMEOUT=20
# rank 1 is a straggler at step 1 (45 s) with a 20 s timeout: rank 0's watchdog fires first
HOST0_ENV="" HOST1_ENV="" run_case 35-two-hosts-straggler-rank1-step1 120 STEPS=2 STALL_RANK=1 STALL_STEP=1 STALL_SECS=45 PG_TIMEOUT=20
# one node was given an interface name it does not have
HOST0_ENV="" HOST1_ENV="NCCL_SOCKET_IFNAME=ib9" run_case 36-two-hosts-ifname-missing-one-node 90 STEPS=2 PG_TIMEOUT=30
ls -la "$out"
