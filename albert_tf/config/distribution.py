"""`DistributionConfig`: which devices a run uses (TensorFlow-free, so run configs load
without it; `albert_tf.loop.distribute` builds the strategy)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from albert_tf.config.schema import require, require_one_of

STRATEGIES = ("default", "cpu", "mirrored", "multi_worker", "tpu")


@dataclasses.dataclass(frozen=True)
class DistributionConfig:
    """Which devices a run uses.

    Attributes:
        strategy: one of `default`, `cpu`, `mirrored`, `multi_worker`, `tpu`.
        devices: for `mirrored`, device names such as `/gpu:0` (empty: all local GPUs).
        tpu: for `tpu`, the TPU name or `grpc://host:port` (empty: the local TPU VM).
        all_reduce: for `mirrored`, `nccl` (GPUs), `hierarchical_copy` or `reduce_to_one`.
    """

    strategy: str = "default"
    devices: Sequence[str] = ()
    tpu: str = ""
    all_reduce: str = ""

    def __post_init__(self):
        require_one_of(self.strategy, STRATEGIES, "distribution.strategy")
        require(self.all_reduce in ("", "nccl", "hierarchical_copy", "reduce_to_one"),
                "distribution.all_reduce", "nccl, hierarchical_copy or reduce_to_one",
                self.all_reduce)
