"""Running a reader on hostile input in a child process whose memory and CPU time are capped.

A reader that trusted a length in the file, held a whole line or decompressed a bomb would
need far more than the cap: the child then dies (MemoryError, or SIGXCPU/SIGKILL past the
CPU limit) instead of printing its refusal, and the test sees it. The readers tested this way
import no TensorFlow, whose start-up alone reserves gigabytes of address space.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_bounded(code: str, memory_mb: int = 96, cpu_seconds: int = 30
                ) -> subprocess.CompletedProcess:
    """Runs `code` (dedented) in a new Python whose address space is capped at `memory_mb`
    and CPU time at `cpu_seconds`; returns the finished process (stdout and stderr as text).
    """
    def limit():
        memory = memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPOSITORY,
                          env=environment, preexec_fn=limit, capture_output=True, text=True,
                          timeout=10 * cpu_seconds)


def refusal(code: str, **limits) -> str:
    """What `code` printed, after checking it ran to its end within the limits (it prints
    the refusal it caught)."""
    process = run_bounded(code, **limits)
    assert process.returncode == 0, (
        f"the child failed (exit {process.returncode}): {process.stderr[-2000:]}")
    return process.stdout.strip()


def write_in_chunks(path, chunks) -> str:
    """Writes the byte strings `chunks` one after the other to `path` (a hostile file of many
    megabytes without holding it whole); returns the path as a string."""
    with open(path, "wb") as file:
        for chunk in chunks:
            file.write(chunk)
    return str(path)


def long_line_table(path, header: bytes, megabytes: int = 100) -> str:
    """A table file at `path`: `header`, one ordinary row, then a row of `megabytes` million
    bytes and 3 (a text field of words, then a tab and a label) on line 3."""
    return write_in_chunks(path, [header, b"A fine line.\t1\n",
                                  *[b"word " * 200_000] * megabytes, b"\t0\n"])
