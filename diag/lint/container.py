"""Checks of how the job asks pyxis for its container."""

from __future__ import annotations

from diag.lint.context import Hit, LintContext


def image_cut_at_hash(ctx: LintContext) -> list[Hit]:
    """``#SBATCH --container-image=nvcr.io#nvidia/pytorch:...``: sbatch ends the directive at the
    '#', so pyxis is asked for the registry alone and the import fails (or sbatch, without pyxis,
    rejects the option)."""
    hits = []
    for value in ctx.script.cut_directives:
        if "container-image" in value.value:
            hits.append(Hit(
                f"sbatch reads only '{value.value}' of this #SBATCH line (a '#' starts a comment there): "
                "the image name after the '#' is lost", [value.line],
            ))  # fmt: skip
    return hits
