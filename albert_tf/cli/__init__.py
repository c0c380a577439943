"""Console entry points: thin wrappers that parse flags and call library code."""

import os

# TensorFlow's C++ INFO/WARNING lines (no GPU found, oneDNN notes) drown a CLI's output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
