"""`slurmdiag eval` and `slurmdiag test-rules`: labelled logs and a site's rules."""

from __future__ import annotations

import sys

import click

from diag.commands.common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    builtin_dir,
    fail,
    rules_or_exit,
    write_stdout,
)  # fmt: skip


@click.command("eval")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--disable", multiple=True, metavar="ID")
@click.option(
    "--split",
    type=click.Choice(("all", "dev", "holdout", "corpus")),
    default="all",
    show_default=True,
    help="Only the cases of this split (corpus/wild cases are split by a hash of their source URL).",
)
@click.option("--format", "fmt", type=click.Choice(("text", "json", "markdown")), default="text", show_default=True)
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="PERCENT",
              help="Exit 1 when top-1 (failing jobs) or healthy-clean falls below this.")
@click.option("--show-holdout", is_flag=True,
              help="List the holdout split's misses too (by default they are only counted).")
@click.option("--damage", is_flag=True,
              help="Also damage every case that passes as a paste does (terminal cuts, indentation, quotes, ...) "
                   "and count those that still pass.")  # fmt: skip
@click.option("--thin", "arounds", multiple=True, type=click.IntRange(0, 1000), metavar="K",
              help="Also cut every failing case answered right to the lines its first finding cites and K lines "
                   "either side, as a thin paste, and count those still answered right (repeatable).")  # fmt: skip
def evaluate(dirs, rule_dirs, disable, split, fmt, fail_under, show_holdout, damage, arounds) -> None:
    """Diagnose every labelled case under DIRS (folders with expected.yaml or case.yaml) and print
    top-1 / top-3 / healthy-clean per split, a per-cause table and the cases that miss (the
    holdout split's only as a count, unless --show-holdout). With --damage, each case that passes
    is damaged as pastes are (diag.damage) and the cases that still pass are counted; with --thin K,
    each failing case answered right is cut to its evidence and K lines either side."""
    import json

    from diag.harness import (
        CaseError,
        evaluate_cases,
        find_cases,
        render_markdown_summary,
        render_summary,
        summarize,
    )  # fmt: skip

    rules = rules_or_exit(rule_dirs, disable)
    try:
        cases = [c for c in find_cases(dirs) if split == "all" or c.split == split]
    except CaseError as exc:
        fail(str(exc))
    if not cases:
        fail(f"no labelled case (a folder with expected.yaml or case.yaml) under {', '.join(dirs)}")
    results = evaluate_cases(cases, rules)
    summary = summarize(results, show_holdout)
    if damage:
        from diag.harness import check_damage

        found = check_damage(results, rules, show_holdout=show_holdout)
        summary.update(found)
    if arounds:
        from diag.harness import check_thin

        summary.update(check_thin(results, rules, sorted(set(arounds)), show_holdout=show_holdout))
    render = {"json": lambda s: json.dumps(s, indent=2) + "\n", "markdown": render_markdown_summary}.get(fmt, render_summary)
    write_stdout(render(summary))
    if fail_under is not None:
        total = summary["splits"]["all"]
        rates = [r for r in (total["top1"], total["healthy_clean"]) if r is not None]
        sys.exit(EXIT_FINDINGS if any(100 * r < fail_under for r in rates) else EXIT_CLEAN)


@click.command("test-rules")
@click.argument("cases", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False),
              help="The rule directory to test (repeatable); its rules' examples are checked.")  # fmt: skip
def test_rules(cases, rule_dirs) -> None:
    """Check rules the way this project checks its own: every rule's examples through the real
    scanner (the built-in rules, or only those in --rules directories), then every labelled case
    folder under CASES. Exit 1 on the first kind of failure, with one line per failure."""
    from diag.catalog.load import load_rules as load_catalog
    from diag.harness import CaseError, check_case, check_examples, find_cases

    rules = rules_or_exit(rule_dirs, ())
    only = None
    if rule_dirs:
        try:
            only = {r.id for r in load_catalog(rule_dirs).rules if not r.path.startswith(str(builtin_dir()))}
        except Exception as exc:  # noqa: BLE001 - already reported by _load_rules when it matters
            fail(str(exc))
    failures = [f.message() for f in check_examples(rules, only)]
    checked = sum(
        len(r.examples_match) + len(r.examples_no_match) + len(r.examples_cue)
        for r in rules.rules
        if only is None or r.id in only
    )
    try:
        results = [check_case(c, rules) for c in find_cases(cases)]
    except CaseError as exc:
        fail(str(exc))
    failures += [f"{r.case.path}: {p}" for r in results for p in r.problems]
    for line in failures:
        click.echo(line)
    click.echo(f"{checked} example lines, {len(results)} cases: {len(failures)} failure(s)")
    sys.exit(EXIT_FINDINGS if failures else EXIT_CLEAN)
