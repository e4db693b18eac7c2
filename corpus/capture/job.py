"""A few all-reduces between ranks, with one planted misbehaviour (set by environment).

Run by capture.sh as two processes on one GPU, each with its own NCCL_HOSTID, so NCCL treats
them as two nodes and uses its network transport between them.
  STALL_RANK/STALL_STEP/STALL_SECS  that rank sleeps before that step (a straggler)
  EXIT_RANK/EXIT_STEP/EXIT_CODE     that rank exits before that step (a crash)
  OOM_RANK/OOM_STEP                 that rank allocates far more GPU memory than exists
"""

import datetime
import os
import sys
import time

import torch
import torch.distributed as dist


def env_int(name: str, default: int = -1) -> int:
    return int(os.environ.get(name, default))


def main() -> None:
    rank = env_int("RANK")
    steps = env_int("STEPS", 3)
    timeout = datetime.timedelta(seconds=env_int("PG_TIMEOUT", 60))
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=timeout, device_id=torch.device("cuda", 0))
    x = torch.ones(64 * 2**20, device="cuda")  # 256 MiB of float32
    for step in range(steps):
        if rank == env_int("STALL_RANK") and step == env_int("STALL_STEP"):
            print(f"step {step} rank {rank} stalls {env_int('STALL_SECS', 60)} s", flush=True)
            time.sleep(env_int("STALL_SECS", 60))
        if rank == env_int("EXIT_RANK") and step == env_int("EXIT_STEP"):
            print(f"step {step} rank {rank} exits {env_int('EXIT_CODE', 3)}", flush=True)
            os._exit(env_int("EXIT_CODE", 3))
        if rank == env_int("OOM_RANK") and step == env_int("OOM_STEP"):
            torch.empty(400 * 2**30, dtype=torch.uint8, device="cuda")
        dist.all_reduce(x)
        torch.cuda.synchronize()
        print(f"step {step} rank {rank} allreduce {x[0].item():.0f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
