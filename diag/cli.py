"""Command line: a thin layer over the library. The group and its entry point live here; each
command is a small function in diag/commands/, registered below in one table.

Exit codes: 0 no finding at or above ``--fail-on``; 1 at least one; 2 usage, rule or input error
(nothing could be read); 130 interrupted. Reports go to stdout (or ``-o``); messages to stderr.
"""

from __future__ import annotations

import os
import sys

import click

from diag import __version__
from diag.commands import catalog, fleet, harness, preflight, probe, report, slurm
from diag.commands.common import EXIT_CODES, EXIT_ERROR, EXIT_INTERRUPTED


class DefaultGroup(click.Group):
    """``slurmdiag PATH...`` means ``slurmdiag diagnose PATH...``; its --help shows the default
    command's options and the exit codes too (the first thing people type)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V")):
            args = ["diagnose", *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        default = self.commands["diagnose"]
        with click.Context(default, info_name="diagnose", parent=ctx) as sub:
            rows = [
                r
                for p in default.get_params(sub)
                if isinstance(p, click.Option) and p.name != "help" and (r := p.get_help_record(sub)) is not None
            ]
        with formatter.section("Options of the default command (slurmdiag [diagnose] PATHS...)"):
            formatter.write_dl(rows)
        with formatter.section("Exit codes"):
            formatter.write_dl(list(EXIT_CODES))


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="slurmdiag", message="%(prog)s %(version)s")
def cli() -> None:
    """Name the root cause of a failed or slow multi-node GPU job from its logs.

    \b
    slurmdiag /pfs/logs/job-123.err            diagnose (files, dirs, globs, .gz, - for stdin)
    slurmdiag rules                            list the rules
    slurmdiag explain ib-devices-not-mounted   one rule in full
    """


COMMANDS = (
    report.diagnose,
    slurm.job,
    slurm.epilog,
    probe.probe,
    preflight.lint,
    preflight.follow,
    catalog.list_rules,
    catalog.explain,
    harness.evaluate,
    harness.test_rules,
    fleet.fleet,
)
for command in COMMANDS:
    cli.add_command(command)


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (KeyboardInterrupt, click.exceptions.Abort)):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def main() -> None:
    try:
        # The name fixed: usage lines and the completion variable (_SLURMDIAG_COMPLETE) are the same
        # under `python -m diag` as under the installed command.
        cli.main(prog_name="slurmdiag", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("slurmdiag: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("slurmdiag: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - never show a traceback to the user
        if _caused_by_interrupt(exc):
            # Ctrl-C while a worker pool starts or stops: its cleanup raises in place of the interrupt.
            click.echo("slurmdiag: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        if os.environ.get("SLURMDIAG_DEBUG"):
            raise
        click.echo(f"slurmdiag: internal error: {type(exc).__name__}: {exc} (set SLURMDIAG_DEBUG=1 for details)",
                   err=True)  # fmt: skip
        sys.exit(EXIT_ERROR)
