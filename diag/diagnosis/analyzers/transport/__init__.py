"""Fabric and NCCL transport: why NCCL is on TCP, and the settings, images and plugins behind it.

One module per cause (or pair of causes that decide each other): fallback (nccl-tcp-fallback,
nccl-ib-disabled), devices (ib-verbs-library-missing, ib-devices-not-mounted), hca
(nccl-ib-hca-wrong), sockets (nccl-socket-ifname), plugin (nccl-net-plugin), roce (roce-gid-index),
gdr (gdr-disabled), shm (shm-too-small); what they share is in common.
"""
