"""Containers and storage: a module per cause family member: nodelocal (node-local-path), containers
(container-import-failure, container-runtime-error), shared (shared-storage-missing)."""
