"""`slurmdiag rules` and `slurmdiag explain`: the catalogue, without the scanner."""

from __future__ import annotations

import re

import click

from diag.commands.common import (
    fail,
    rules_or_exit,
    write_stdout,
)  # fmt: skip


@click.command("rules")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True)
@click.option("--export-patterns", is_flag=True, help="Print every signature regex, one per line (for grep/rg -f).")
def list_rules(rule_dirs, fmt, export_patterns) -> None:
    """List the rules: id, severity, role, title (json: each rule's fields, for scripts)."""
    from diag.catalog.docs import rules_json, rules_table

    rules = rules_or_exit(rule_dirs, (), analyzers=False)
    if export_patterns:
        from diag.scan.facts import FACT_SIGNATURES

        sigs = [s for r in rules.rules for s in r.signatures] + list(FACT_SIGNATURES)
        write_stdout("".join(f"{p}\n" for p in dict.fromkeys(exported_pattern(s) for s in sigs)))
        return
    write_stdout(rules_json(rules) if fmt == "json" else rules_table(rules, fmt))


def exported_pattern(sig) -> str:
    """What a signature matches, as one regex a raw-line tool (rg, grep) can run: its regex, led by its
    level word where the regex does not itself spell it (an NCCL WARN's or UCX ERROR's level is in the
    prefix framing peels, before the payload the regex reads), with non-ASCII text as UTF-8 bytes (``rg --no-unicode`` refuses it)."""
    pattern = sig.pattern
    if sig.levels and sig.literal not in _GROUP_SYNTAX.sub("", pattern).replace("\\", ""):
        pattern = f"{_escape_metacharacters(sig.literal)}.*(?:{pattern.removeprefix('^')})"
    return "".join(c if c.isascii() else "".join(f"\\x{b:02X}" for b in c.encode()) for c in pattern)


_GROUP_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?:|(?<!\\)[()]")
_METACHARACTER = re.compile(r"([.^$*+?()\[\]{}|\\])")


def _escape_metacharacters(text: str) -> str:
    """``re.escape`` also escapes spaces and dashes, which rg rejects as unknown escapes."""
    return _METACHARACTER.sub(r"\\\1", text)


def _complete_rule_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of rule ids (built-in, $SLURMDIAG_RULES and any --rules given so far)."""
    from click.shell_completion import CompletionItem

    from diag.catalog.load import load_rules

    try:
        rules = load_rules(ctx.params.get("rule_dirs") or ())
    except Exception:  # noqa: BLE001 - a completion must never print a traceback into the shell
        return []
    low = incomplete.lower()
    return [CompletionItem(r.id, help=r.title) for r in sorted(rules.rules, key=lambda r: r.id) if r.id.startswith(low)]


@click.command()
@click.argument("rule_id", shell_complete=_complete_rule_id)
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
def explain(rule_id, rule_dirs) -> None:
    """Print one rule in full: what it means, what it matches, how to fix it. Ids are
    case-insensitive; a near miss gets a did-you-mean."""
    import difflib

    from diag.catalog.docs import explain_rule

    rules = rules_or_exit(rule_dirs, (), analyzers=False).by_id()
    wanted = rule_id.strip().lower()
    if wanted not in rules:
        close = difflib.get_close_matches(wanted, list(rules), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        fail(f"no rule has the id {rule_id!r}{hint} (see 'slurmdiag rules')")
    write_stdout(explain_rule(rules[wanted]))
