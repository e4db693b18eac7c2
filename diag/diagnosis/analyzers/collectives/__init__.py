"""Collectives: watchdog timeouts and the rank behind them, nccl-tests bandwidth, verbose NCCL logging.

One module per cause: timeout (nccl-timeout: the watchdog's own account, the desync report, the
ranks behind), with the same cause said in other words in ras (NCCL's RAS report of a hung job) and
waits (store, barrier, Gloo, Horovod, JAX, UCC and nccl-tests timeouts); busbw (busbw-low); verbose
(nccl-debug-verbose).
"""
