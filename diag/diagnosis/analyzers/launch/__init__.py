"""Launch: PMIx wiring and run-time errors, rendezvous, the master port, world size against the allocation.

One module per sub-family: pmix (pmix-not-used, pmix-runtime-error), rendezvous (rendezvous-failure,
port-in-use), world_size (world-size-mismatch); what they share is in common.
"""
