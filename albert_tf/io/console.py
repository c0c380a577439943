"""What the command-line tools show on the terminal: TensorFlow's start-up chatter hidden.

Every TensorFlow process on a machine without a GPU writes lines such as

    E external/local_xla/.../cuda_platform.cc:51] failed call to cuInit: ... UNKNOWN ERROR (303)
    WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
    I0000 00:00:1795602341.601071 6606 device_compiler.h:196] Compiled cluster using XLA! ...

straight to file descriptor 2, from C++, whatever Python does. `quiet_tensorflow()` hides
them while a command runs: it raises TensorFlow's C++ log threshold to errors
(`TF_CPP_MIN_LOG_LEVEL=2`, unless the user set it) and passes descriptor 2 through a filter
that drops only the lines of `CHATTER`. Everything else written to standard error, Python
tracebacks, warnings, TensorFlow's real errors and progress bars included, goes through
unchanged and in order. Each tool's `--verbose` flag turns all of this off.

For a program that must not import this package (`scripts/serve_text.py` shows serving with
TensorFlow alone), the same filter runs as a pipe: `program 2> >(python -m
albert_tf.io.console >&2)` copies its standard input to standard output without the chatter.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import select
import sys
import threading
from typing import Iterator

# Lines TensorFlow prints on every start or first compile that say nothing about the job.
CHATTER = re.compile("|".join((
    r"failed call to cuInit",  # no GPU driver (logged as an error)
    r"Could not find cuda drivers on your machine",
    r"Unable to register cu(DNN|FFT|BLAS) factory",
    r"oneDNN custom operations are on",
    r"oneDNN supports DT_INT64 only on platforms with AVX-512",  # an error line, a fallback
    r"cpu_feature_guard\.cc",
    r"^To enable the following instructions: .* rebuild TensorFlow",
    r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",
    r"^I\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] ",  # absl's INFO lines (XLA's compile notices)
    # The LiteRT converter (albert-export --format tflite), on every conversion and on every
    # int8 calibration: options it was not given, and its settings.
    r"tf_tfl_flatbuffer_helpers\.cc:\d+\] Ignored (output_format|drop_control_dependency)\.$",
    r"^fully_quantize: \d+, inference_type: \d+, input_inference_type: \w+, "
    r"output_inference_type: \w+$",
)).encode())

# A line without its end yet (a progress bar redrawn with \r) is held this long for the rest
# of it before it is shown as it is.
PARTIAL_LINE_SECONDS = 0.05


def add_verbose_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", action="store_true",
                        help="show TensorFlow's start-up and compiler log lines (hidden by "
                             "default; its errors and warnings from Python always show)")


@contextlib.contextmanager
def quiet_tensorflow(verbose: bool = False) -> Iterator[None]:
    """Hides TensorFlow's chatter on standard error while the block runs (not if `verbose`)."""
    if verbose:
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.name != "posix":  # select() on pipes is POSIX only; the log level still applies
        yield
        return
    with _filtered_descriptor(2):
        yield


@contextlib.contextmanager
def _filtered_descriptor(descriptor: int) -> Iterator[None]:
    """Routes `descriptor` through a pipe to a thread that drops the `CHATTER` lines.

    Child processes started inside the block write to the same pipe, so their chatter is
    filtered too. On leaving, the descriptor is restored and the thread drains the pipe.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    original = os.dup(descriptor)
    read_end, write_end = os.pipe()
    os.dup2(write_end, descriptor)
    os.close(write_end)
    forwarder = threading.Thread(target=_forward, args=(read_end, original), daemon=True,
                                 name="tensorflow-chatter-filter")
    forwarder.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(original, descriptor)  # closes our write end: the thread reads to the end
        forwarder.join(timeout=2.0)  # a child still alive keeps the pipe open; don't wait
        if not forwarder.is_alive():
            os.close(original)


def _forward(read_end: int, destination: int) -> None:
    """Copies `read_end` to `destination` line by line, without the `CHATTER` lines."""
    pending = b""
    while True:
        ready, _, _ = select.select([read_end], [], [], PARTIAL_LINE_SECONDS if pending else None)
        if not ready:  # an unfinished line (a progress bar): show it now
            _write_all(destination, pending)
            pending = b""
            continue
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        *lines, pending = re.split(rb"(?<=[\r\n])", pending + chunk)
        shown = b"".join(line for line in lines if not CHATTER.search(line))
        _write_all(destination, shown)
    if not CHATTER.search(pending):
        _write_all(destination, pending)
    os.close(read_end)


def _write_all(destination: int, data: bytes) -> None:
    while data:
        data = data[os.write(destination, data):]


if __name__ == "__main__":
    _forward(sys.stdin.fileno(), sys.stdout.fileno())
