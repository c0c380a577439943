"""Helpers for the tests that kill a training process and resume it."""

from __future__ import annotations

import os
import subprocess
import time

import tensorflow as tf


def wait_for_backup(folder, process: subprocess.Popen, timeout: float = 300.0) -> None:
    """Waits until the Keras BackupAndRestore folder holds a complete checkpoint, the process
    ends or `timeout` seconds pass.

    A checkpoint is complete once TF's `checkpoint` state file names it: the state file is
    written (atomically) after the `.index` and `.data` files, so a process killed between
    the two leaves no checkpoint a resumed run could find.
    """
    deadline = time.time() + timeout
    while process.poll() is None and time.time() < deadline:
        if tf.io.gfile.isdir(str(folder)) and tf.train.latest_checkpoint(str(folder)):
            return
        time.sleep(0.05)


def child_environment(tmp_path) -> dict[str, str]:
    """The environment for a training process a test starts: quiet, CPU only, and with its
    temporary folder inside the test's own. TensorFlow's autograph writes a module file per
    converted function to the temporary folder and deletes them at exit; a process the test
    kills never exits normally, so its files would stay in /tmp for good."""
    folder = os.path.join(tmp_path, "process-tmp")
    os.makedirs(folder, exist_ok=True)
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "",
            "TMPDIR": folder}
