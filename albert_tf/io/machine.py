"""What a measurement records about the machine it ran on: the host, the CPU's model name
and feature flags (from /proc/cpuinfo where there is one) and the logical CPUs.

    machine()  # {"host": "vm", "cpu": "Intel(R) Xeon(R) ...", "logical_cpus": 2}
"""

from __future__ import annotations

import os
import pathlib
import platform
import socket

CPUINFO = "/proc/cpuinfo"


def _cpuinfo_field(name: str) -> str | None:
    """The first `name : value` line's value in /proc/cpuinfo, None without one."""
    try:
        for line in pathlib.Path(CPUINFO).read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_name() -> str:
    """The CPU's model name (the platform's processor string off Linux)."""
    return _cpuinfo_field("model name") or platform.processor()


def cpu_flags() -> set[str]:
    """The CPU's feature flags (`avx512f`, `amx_bf16`, ...); empty off Linux."""
    return set((_cpuinfo_field("flags") or "").split())


def usable_cpus() -> int:
    """The logical CPUs this process may run on (its affinity mask where the platform has
    one: a container's share, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine() -> dict:
    """{"host", "cpu", "logical_cpus"} of this machine."""
    return {"host": socket.gethostname(), "cpu": cpu_name(), "logical_cpus": os.cpu_count()}
