"""`pkctl completion bash|zsh|fish`: the shell script that completes pkctl's commands and flags.

Use it as with kubectl: `source <(pkctl completion bash)`. The script calls pkctl back with
`_PKCTL_COMPLETE` set, and pkctl answers with the commands and flags that fit.
"""

from __future__ import annotations

from typing import Annotated

import typer
from typer.completion import get_completion_script  # type: ignore[attr-defined]

from kubectl.context import CommandError, emit

__all__ = ["completion"]

SHELLS = ("bash", "zsh", "fish")


def completion(shell: Annotated[str, typer.Argument(help="bash, zsh or fish")]) -> None:
    """Output shell completion code for the specified shell (bash, zsh or fish)."""
    if shell not in SHELLS:
        raise CommandError(f'Unsupported shell type "{shell}".')
    emit(get_completion_script(prog_name="pkctl", complete_var="_PKCTL_COMPLETE", shell=shell) + "\n")
