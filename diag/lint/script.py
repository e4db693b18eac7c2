"""Read an sbatch script the way sbatch and bash would, as far as a static reading can go.

What it keeps: the ``#SBATCH`` directives (those before the first command, as sbatch reads them),
overridden by command-line options (the command line wins, as in sbatch); variable assignments
(``export X=...``, ``X=...``); and every launcher command (``srun``, ``torchrun``, ``mpirun``,
``python -m torch.distributed.run``), tokenised with :mod:`shlex` after joining ``\\``
continuations. A value that depends on something not written literally in the script
(``$SLURM_NNODES``, ``$(hostname)``) is *unknown* (None): a check never guesses it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

# sbatch/srun options that take a value as the next word when not written ``--opt=value``.
_SHORT_WITH_VALUE = set("NncptoeJwxAqGdDCLbiSmBM")
_LONG_WITH_VALUE = {
    "nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "partition", "time", "output", "error", "job-name",
    "nodelist", "exclude", "account", "qos", "gpus", "gpus-per-node", "gpus-per-task", "gres", "dependency",
    "chdir", "constraint", "licenses", "begin", "signal", "mem", "mem-per-cpu", "mem-per-gpu", "mpi",
    "container-image", "container-mounts", "container-workdir", "container-name", "container-env",
    "export", "distribution", "cpu-bind", "gpu-bind", "reservation", "array", "time-min", "switches",
    "network", "comment", "wckey", "open-mode", "input", "kill-on-bad-exit", "wait", "het-group",
}  # fmt: skip
_SHORT_ALIASES = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "p": "partition", "t": "time", "o": "output",
                  "e": "error", "J": "job-name", "w": "nodelist", "x": "exclude", "A": "account", "q": "qos",
                  "G": "gpus", "d": "dependency", "D": "chdir", "C": "constraint", "i": "input"}  # fmt: skip
_ASSIGN = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.S)
_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*(?P<q>['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)(?P=q)")
_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_WRAPPERS = {"exec", "time", "nohup", "command", "builtin", "then", "do", "else", "{"}
LAUNCHERS = ("srun", "torchrun", "mpirun", "mpiexec", "torch.distributed.run", "torch.distributed.launch")


@dataclass
class Value:
    """A word of the script: as written, and its literal value where the script fixes it."""

    raw: str
    line: int
    value: str | None  # None: depends on something the script does not fix

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass
class Command:
    """One launcher invocation: ``srun``, ``torchrun`` (or ``python -m torch.distributed.run``) or
    ``mpirun``; ``options`` by long name (short ones translated), ``program`` the words after them."""

    launcher: str  # srun | torchrun | mpirun
    line: int
    options: dict[str, Value] = field(default_factory=dict)
    program: list[Value] = field(default_factory=list)
    env: dict[str, Value] = field(default_factory=dict)  # VAR=value words before the launcher
    inner: Command | None = None  # torchrun/mpirun started by this srun


@dataclass
class Script:
    path: str
    lines: list[str]
    directives: dict[str, Value] = field(default_factory=dict)  # sbatch options, command line applied
    env: dict[str, list[Value]] = field(default_factory=dict)  # every assignment of a variable, in order
    commands: list[Command] = field(default_factory=list)
    traps: list[Value] = field(default_factory=list)  # `trap ... SIG` lines (checkpoint/requeue hooks)
    cut_directives: list[Value] = field(default_factory=list)  # #SBATCH lines sbatch cuts at a '#'

    def option(self, name: str) -> Value | None:
        return self.directives.get(name)

    def variable(self, name: str) -> Value | None:
        """The variable's last literal assignment in the script (None when never assigned)."""
        values = self.env.get(name)
        return values[-1] if values else None


def _expand(word: str, env: dict[str, list[Value]]) -> str | None:
    """``word`` with ``$VAR``/``${VAR}`` replaced where the script set VAR literally; None when a
    variable, a command substitution or arithmetic is not known."""
    if "$(" in word or "`" in word:
        return None
    missing = False

    def sub(m: re.Match) -> str:
        nonlocal missing
        name = m["braced"] or m["plain"]
        values = env.get(name)
        if m["rest"] or not values or values[-1].value is None:
            missing = True
            return ""
        return values[-1].value

    out = _VAR.sub(sub, word)
    return None if missing else out


def _logical_lines(text: str) -> list[tuple[int, int, str]]:
    """Lines with backslash-newline continuations joined: (first line, last line, text)."""
    out: list[tuple[int, int, str]] = []
    pending: list[str] = []
    start = number = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        out.append((start, number, " ".join(pending)))
        pending = []
    if pending:
        out.append((start, number, " ".join(pending)))
    return out


def _tokens(line: str) -> list[str] | None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex would end a word at '#' (nvcr.io#image); bash only starts a comment with it
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: a heredoc body or something bash-only; not ours to read
        return None
    for i, word in enumerate(words):
        if word.startswith("#"):
            return words[:i]
    return words


def _split_commands(tokens: list[str]) -> list[list[str]]:
    out, current = [], []
    for tok in tokens:
        if tok in _SEPARATORS:
            if current:
                out.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        out.append(current)
    return out


def parse_options(words: list[str], start: int = 0) -> tuple[dict[str, str], int]:
    """sbatch/srun-style options from ``words[start:]`` up to the first non-option word; their
    long names (``-N 2`` is ``nodes``) and the index where the program begins."""
    options: dict[str, str] = {}
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return options, i + 1
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word[2:].partition("=")
            if not eq and name in _LONG_WITH_VALUE and i + 1 < len(words):
                value = words[i + 1]
                i += 1
            options[name] = value
        elif word.startswith("-") and len(word) > 1 and word[1] != "-":
            letter = word[1]
            name = _SHORT_ALIASES.get(letter, letter)
            if letter in _SHORT_WITH_VALUE:
                value = word[2:]
                if value.startswith("="):
                    value = value[1:]
                if not value and i + 1 < len(words):
                    value = words[i + 1]
                    i += 1
                options[name] = value
            else:
                for flag in word[1:]:
                    options[_SHORT_ALIASES.get(flag, flag)] = ""
        else:
            return options, i
        i += 1
    return options, i


def _torchrun_options(words: list[str], start: int) -> tuple[dict[str, str], int]:
    """torchrun's options (``--nproc_per_node`` is ``nproc-per-node``) up to the training script."""
    options: dict[str, str] = {}
    i = start
    flags = {"standalone", "no-python", "no_python", "module", "m", "run-path", "run_path"}
    while i < len(words) and words[i].startswith("-"):
        name, eq, value = words[i].lstrip("-").partition("=")
        name = name.replace("_", "-")
        if not eq and name not in flags and i + 1 < len(words):
            value = words[i + 1]
            i += 1
        options[name] = value
        i += 1
    return options, i


def _launcher_at(words: list[str]) -> tuple[str, int] | None:
    """Which launcher the command runs and the index of the word after it."""
    for i, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        if base == "srun":
            return "srun", i + 1
        if base == "torchrun":
            return "torchrun", i + 1
        if base in ("mpirun", "mpiexec"):
            return "mpirun", i + 1
        if re.fullmatch(r"python[\d.]*", base) and i + 2 < len(words) and words[i + 1] == "-m":
            if words[i + 2] in ("torch.distributed.run", "torch.distributed.launch"):
                return "torchrun", i + 3
            return None
        if _ASSIGN.match(word) or base in _WRAPPERS or base == "env" or word.startswith("-"):
            continue  # VAR=x cmd, env/exec/time wrappers and their flags
        return None
    return None


class _Reader:
    def __init__(self, path: str, text: str):
        self.script = Script(path=path, lines=text.splitlines())
        self.last_line = 0  # the last physical line of the statement being read

    def value(self, raw: str, line: int) -> Value:
        return Value(raw, self.physical(raw, line), _expand(raw, self.script.env))

    def physical(self, raw: str, line: int) -> int:
        """The physical line of a continued command that holds ``raw`` (evidence points there)."""
        if self.last_line > line:
            probe = raw.partition("=")[0] if raw.startswith("-") else raw
            for number in range(line, self.last_line + 1):
                if probe and probe in self.script.lines[number - 1]:
                    return number
        return line

    def command(self, words: list[str], line: int, env: dict[str, Value]) -> Command | None:
        found = _launcher_at(words)
        if found is None:
            return None
        launcher, start = found
        if launcher == "torchrun":
            opts, prog = _torchrun_options(words, start)
        elif launcher == "mpirun":
            opts, prog = _torchrun_options(words, start)  # mpirun's own syntax; only the program matters
        else:
            opts, prog = parse_options(words, start)
        cmd = Command(launcher, line, {k: self.value(v, line) for k, v in opts.items()},
                      [self.value(w, line) for w in words[prog:]], env)  # fmt: skip
        inner_words = words[prog:]
        # srun bash -c "torchrun ...": the string is one more command line
        if len(inner_words) >= 3 and inner_words[0].rsplit("/", 1)[-1] in ("bash", "sh") and inner_words[1] == "-c":
            inner_words = _tokens(inner_words[2]) or []
        if launcher == "srun" and inner_words:
            cmd.inner = self.command(inner_words, line, {})
        return cmd

    def statement(self, words: list[str], line: int) -> None:
        if not words:
            return
        if words[0] in ("export", "declare", "local", "readonly"):
            for word in words[1:]:
                m = _ASSIGN.match(word)
                if m:
                    self.assign(m["name"], m["value"], line)
            return
        if words[0] == "trap":
            self.script.traps.append(Value(" ".join(words), line, " ".join(words)))
            return
        env: dict[str, Value] = {}
        i = 0
        while i < len(words) and _ASSIGN.match(words[i]):
            m = _ASSIGN.match(words[i])
            env[m["name"]] = self.value(m["value"], line)
            i += 1
        if i == len(words):  # X=1 Y=2 on their own: shell variables
            for name, value in env.items():
                self.script.env.setdefault(name, []).append(value)
            return
        cmd = self.command(words, line, env)
        if cmd is not None:
            self.script.commands.append(cmd)

    def assign(self, name: str, raw: str, line: int) -> None:
        self.script.env.setdefault(name, []).append(self.value(raw, line))


def parse_script(path: str, text: str, overrides: list[str] = ()) -> Script:
    """The script at ``path`` (its ``text``), with sbatch command-line ``overrides`` applied."""
    reader = _Reader(path, text)
    script = reader.script
    directives: dict[str, Value] = {}
    in_header = True
    heredoc: str | None = None  # the delimiter of the here-document being skipped
    for number, last, line in _logical_lines(text):
        reader.last_line = last
        stripped = line.strip()
        if heredoc is not None:
            if stripped == heredoc:
                heredoc = None
            continue  # a here-document's body is data (a config file, a Python script), not commands
        if in_header:
            if stripped.startswith("#SBATCH"):
                # sbatch ends a directive at '#' (a comment), even inside a word: nvcr.io#image
                body, hash_, _ = stripped[len("#SBATCH") :].partition("#")
                if hash_ and body.strip() and not body[-1].isspace():
                    script.cut_directives.append(Value(stripped, number, body.strip()))
                words = _tokens(body) or []
                opts, _ = parse_options(words)
                for name, value in opts.items():
                    directives[name] = Value(value, number, value if "$" not in value else None)
                continue
            if not stripped or stripped.startswith("#"):
                continue
            in_header = False  # sbatch stops reading directives at the first command
        if stripped.startswith("#"):
            continue
        m = _HEREDOC.search(line)
        if m:
            heredoc = m["word"]
            line = line[: m.start()]
        tokens = _tokens(line)
        if tokens is None:
            continue
        for words in _split_commands(tokens):
            reader.statement(words, number)
    opts, _ = parse_options(list(overrides))
    for name, value in opts.items():
        directives[name] = Value(value, 0, value)  # line 0: the command line
    script.directives = directives
    return script


# --- numbers the checks share -------------------------------------------------------------------


def first_int(value: Value | None) -> int | None:
    """The count a value fixes: ``4``, the minimum of ``2-4`` or ``2:4``; None when unknown."""
    if value is None or value.value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)(?:\s*[-:]\s*\d+)?\s*", value.value)
    return int(m[1]) if m else None


def gpus_per_node(script: Script, srun: Command | None = None) -> int | None:
    """GPUs per node asked for (``--gpus-per-node`` or ``--gres=gpu[:type]:N``), the step's own first."""
    for options in ((srun.options if srun else {}), script.directives):
        gpn = options.get("gpus-per-node")
        if gpn is not None and gpn.value is not None:
            m = re.search(r"(\d+)\s*$", gpn.value)
            if m:
                return int(m[1])
        gres = options.get("gres")
        if gres is not None and gres.value is not None:
            m = re.search(r"(?:^|,)gpu(?::[\w.-]+)?:(\d+)", gres.value)
            if m:
                return int(m[1])
    return None


def time_minutes(value: str) -> float | None:
    """Slurm's time formats (``min``, ``min:sec``, ``h:min:sec``, ``d-h``, ``d-h:min``,
    ``d-h:min:sec``) in minutes; ``UNLIMITED`` is infinite; None when unreadable."""
    text = value.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return float("inf")
    days = 0
    if "-" in text:
        d, _, text = text.partition("-")
        if not d.isdigit():
            return None
        days = int(d)
        parts = text.split(":")
        if not all(p.isdigit() for p in parts) or len(parts) > 3:
            return None
        h, m, s = ([int(p) for p in parts] + [0, 0])[:3]
        return days * 1440 + h * 60 + m + s / 60
    parts = text.split(":")
    if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3:
        return None
    nums = [int(p) for p in parts]
    if len(nums) == 1:
        return float(nums[0])
    if len(nums) == 2:
        return nums[0] + nums[1] / 60
    return nums[0] * 60 + nums[1] + nums[2] / 60
