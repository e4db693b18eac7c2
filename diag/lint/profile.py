"""A site profile: what a static lint cannot see in a script but an admin knows about the cluster.

With a profile, a check that would say "may be wrong" (a warning, lower confidence) can say "is
wrong" (an error): an HCA the nodes do not have, an interface that does not exist, a path on a
mount the profile calls node-local. ``--profile FILE`` or ``$SLURMDIAG_SITE``. Example::

    nics: [ib0, enp]                # interface names (or prefixes) on the compute nodes
    hcas: [mlx5_0, mlx5_1]          # ls /sys/class/infiniband
    mpi_plugins: [pmix, pmix_v4]    # srun --mpi=list
    mpi_default: none               # MpiDefault in slurm.conf
    enroot_mounts_hca: false        # does enroot's mellanox hook mount /dev/infiniband by itself?
    shared_mounts: [/pfs, /home]
    node_local_mounts: [/tmp, /dev/shm, /raid, /local]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

PROFILE_ENV = "SLURMDIAG_SITE"
_LISTS = ("nics", "hcas", "mpi_plugins", "shared_mounts", "node_local_mounts")


class ProfileError(Exception):
    """A profile that cannot be read or does not follow the schema (one line for the user)."""


@dataclass(frozen=True)
class SiteProfile:
    path: str
    nics: tuple[str, ...] | None = None  # None: the profile does not say
    hcas: tuple[str, ...] | None = None
    mpi_plugins: tuple[str, ...] | None = None
    mpi_default: str | None = None
    enroot_mounts_hca: bool | None = None
    shared_mounts: tuple[str, ...] = field(default_factory=tuple)
    node_local_mounts: tuple[str, ...] = field(default_factory=tuple)


def load_profile(path: str | None) -> SiteProfile | None:
    """The profile at ``path`` (or ``$SLURMDIAG_SITE``); None when neither is given."""
    path = path or os.environ.get(PROFILE_ENV) or None
    if not path:
        return None
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read the site profile: {exc.strerror or exc}") from None
    except yaml.YAMLError:
        raise ProfileError(f"{path}: the site profile is not valid YAML") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a site profile is one YAML mapping")
    known = set(_LISTS) | {"mpi_default", "enroot_mounts_hca"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ProfileError(f"{path}: unknown field {unknown[0]!r} (known: {', '.join(sorted(known))})")
    values: dict = {}
    for name in _LISTS:
        raw = data.get(name)
        if raw is None:
            continue
        if not isinstance(raw, list) or not all(isinstance(v, str) and v for v in raw):
            raise ProfileError(f"{path}: {name} must be a list of non-empty strings")
        values[name] = tuple(v.rstrip("/") or "/" for v in raw) if name.endswith("mounts") else tuple(raw)
    if "mpi_default" in data and data["mpi_default"] is not None:
        values["mpi_default"] = str(data["mpi_default"])
    if "enroot_mounts_hca" in data:
        if not isinstance(data["enroot_mounts_hca"], bool):
            raise ProfileError(f"{path}: enroot_mounts_hca must be true or false")
        values["enroot_mounts_hca"] = data["enroot_mounts_hca"]
    return SiteProfile(path=path, **values)


def under(path: str, mounts: tuple[str, ...]) -> str | None:
    """The mount of ``mounts`` that holds ``path`` (a path prefix at a ``/`` boundary), or None."""
    for mount in mounts:
        if mount == "/" or path == mount or path.startswith(mount + "/"):
            return mount
    return None
