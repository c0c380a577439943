"""Names that select a file inside a folder, read from a file or a flag, checked to stay there.

A shard name in a transformers index file, `files.train` in a task folder's `source.json`,
`albert-data build --prefix` and an ablation table's `name` each pick a file in a folder the
reader already trusts. Taken as they are, `../../home/me/.ssh/id_rsa` or an absolute path
would read or write anywhere. Local paths only: a remote name (`gs://...`) is never a name
inside a folder.

Example:
    path = path_inside(task_dir, description["files"]["train"], f"{source_json}: files.train")
"""

from __future__ import annotations

import os


def plain_name(name: object, what: str, error: type[Exception] = ValueError) -> str:
    """`name` if it is one file or folder name: not empty, no path separator, not `.` or
    `..`, no NUL. Raises `error` naming `what` (the file and field, or the flag) otherwise."""
    if (not isinstance(name, str) or name in ("", ".", "..")
            or any(character in name for character in ("/", "\\", "\0"))):
        raise error(f"{what}: {name!r} is not a plain file name (one name without '/', "
                    f"not '.' or '..')")
    return name


def path_inside(folder: str, name: object, what: str,
                error: type[Exception] = ValueError) -> str:
    """`folder`/`name` if `name` is a relative path that stays inside `folder`, symbolic
    links followed (a link inside the folder that points out of it is refused too).
    Raises `error` naming `what` (the file and field) otherwise."""
    if not isinstance(name, str) or not name or "\0" in name or "://" in name:
        raise error(f"{what}: {name!r} is not a path inside {folder}")
    if os.path.isabs(name):
        raise error(f"{what}: {name!r} is an absolute path; it must name a file inside "
                    f"{folder}")
    path = os.path.join(folder, name)
    root = os.path.realpath(folder)
    resolved = os.path.realpath(path)
    if resolved == root or os.path.commonpath([root, resolved]) != root:
        raise error(f"{what}: {name!r} leads out of {folder}; it must name a file inside it")
    return path
