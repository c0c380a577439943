"""Where the repository is, for tests that read its configs, results, scripts or source."""

import contextlib
import importlib.util
import os
import sys

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@contextlib.contextmanager
def script_module(*path: str, name: str):
    """The repository script at `path` (parts under the repository) imported as module
    `name`, registered in sys.modules while in use (dataclasses look their module up by
    name) and removed after."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPOSITORY, *path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]
