"""What every benchmark records about the machine, and how it writes its JSON (atomically)."""

from __future__ import annotations

import json
import os
import pathlib
import platform
import socket

RESULTS = pathlib.Path(__file__).parent / "results"


def cpu_name() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine() -> dict:
    return {"host": socket.gethostname(), "cpu": cpu_name(), "logical_cpus": os.cpu_count()}


def write_result(result: dict, name: str, output: str | None = None) -> pathlib.Path:
    """Writes `result` to `output` or results/<name>-<host>.json; returns the path."""
    path = pathlib.Path(output or RESULTS / f"{name}-{result['host']}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(result, indent=2) + "\n")
    temporary.replace(path)
    return path
