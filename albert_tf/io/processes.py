"""Python child processes that never import from the folder they were started in.

`python -m module` and `python -c ...` put the working folder first on `sys.path`, so a
`keras_hub.py` or `multiprocessing/` a user keeps in the folder they run a command from would
be imported by the child instead of the real one. Children here run with Python's safe path
(`-P`, or `PYTHONSAFEPATH=1` for the processes `multiprocessing` spawns, whose command line
it builds itself): nothing is put in front of the installed packages.

    subprocess.run(python_module_command("albert_tf.checkpoints.keras_hub_worker", "read", ...))
    with safe_import_path():
        pool = multiprocessing.get_context("spawn").Pool(4)
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

SAFE_PATH_VARIABLE = "PYTHONSAFEPATH"


def python_module_command(module: str, *arguments: str) -> list[str]:
    """The command running `module` as `python -m` with the safe path."""
    return [sys.executable, "-P", "-m", module, *arguments]


@contextlib.contextmanager
def safe_import_path() -> Iterator[None]:
    """Sets `PYTHONSAFEPATH=1` while the block runs, for the Python processes it starts (a
    `multiprocessing` pool's spawned workers); restores the variable after."""
    previous = os.environ.get(SAFE_PATH_VARIABLE)
    os.environ[SAFE_PATH_VARIABLE] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[SAFE_PATH_VARIABLE]
        else:
            os.environ[SAFE_PATH_VARIABLE] = previous
