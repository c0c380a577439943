"""The one wrapper of the console scripts: parse the flags, hide TensorFlow's start-up chatter
unless `--verbose`, run, and turn an error in what the user gave (a config field, a file, a
checkpoint, a task folder) into one line on stderr and exit code 2, as argparse does for a
bad flag:

    def main(argv=None) -> int:
        return run_command("albert-pretrain", _parser(), _run, argv, _user_errors)

`ConfigError` and `FolderError` (a folder that is another run's, or in use) are always such
errors; a command names the others it expects (imported when
one is raised, so the command starts without loading TensorFlow). Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

import yaml

from albert_tf.config import ConfigError
from albert_tf.io.console import quiet_tensorflow
from albert_tf.io.owned_folder import FolderError

USER_ERROR_EXIT = 2


def fail(prog: str, error: Exception | str) -> int:
    """Prints `prog: error: <error>` on stderr and returns the exit code of a user error."""
    print(f"{prog}: error: {error}", file=sys.stderr)
    return USER_ERROR_EXIT


def run_command(prog: str, parser: argparse.ArgumentParser,
                run: Callable[[argparse.Namespace], int], argv: Sequence[str] | None = None,
                user_errors: Callable[[], tuple[type[Exception], ...]] = tuple) -> int:
    """Parses `argv` with `parser` (which has `--verbose`: `add_verbose_flag`) and returns
    `run(args)`; a `ConfigError`, `FolderError` or one of `user_errors()` is reported by
    `fail`."""
    args = parser.parse_args(argv)
    with quiet_tensorflow(args.verbose):
        try:
            return run(args)
        except Exception as error:  # noqa: BLE001 (re-raised unless a user error)
            if isinstance(error, (ConfigError, FolderError, *user_errors())):
                return fail(prog, error)
            raise


def print_config(config, hidden_size: int | None = None) -> int:
    """A resolved run config (`to_dict()`) as YAML on stdout, for `--print_config`, then a
    comment saying what its `train.precision` resolves to on this machine for a model of
    `hidden_size` (None: not known before the checkpoint is read)."""
    from albert_tf.loop.precision import config_precision_note

    print(yaml.safe_dump(config.to_dict(), sort_keys=False), end="")
    print(config_precision_note(config, hidden_size))
    return 0
