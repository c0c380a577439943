"""Helpers for the tests that kill a training process and resume it."""

from __future__ import annotations

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
