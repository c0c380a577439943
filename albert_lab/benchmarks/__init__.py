"""Benchmarks: each module measures one thing, prints a table and writes JSON to
`benchmarks/results/` (run from the repository's root); `run_all` runs the suite.

    python -m albert_lab.benchmarks.run_all --quick
    python -m albert_lab.benchmarks.train_step --models tiny

TensorFlow's C++ start-up chatter is hidden here, before any benchmark imports TensorFlow
(importing a module of this package runs this file first).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
