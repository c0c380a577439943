"""`TrainingLoopConfig`: the `train` section every run has, pretraining and fine-tuning alike
(where it writes, how large and how many its steps are, how they run). `TrainConfig` and
`FinetuneTrainConfig` extend it with their own schedule of checkpoints and evaluations.
No TensorFlow here."""

from __future__ import annotations

import dataclasses

from albert_tf.config.precision import PRECISION_SETTINGS
from albert_tf.config.schema import require, require_one_of, require_positive


@dataclasses.dataclass(frozen=True)
class TrainingLoopConfig:
    """How a run trains.

    Attributes:
        model_dir: the run folder: checkpoints, logs, the resolved config.
        global_batch_size: examples per step (one optimizer update) over all replicas.
        gradient_accumulation_steps: N; each replica runs its share of a step's batch as N
            micro-batches and the update uses their summed gradients, exactly the gradient
            of the whole batch (memory for one micro-batch of activations).
        train_steps: optimizer steps in total (also the learning-rate decay length).
        steps_per_execution: steps run inside one `tf.function` call (host overhead / N).
        jit_compile: XLA; null (auto): on GPUs, off on CPUs, where the small models a
            CPU trains run as fast or faster without it and each new batch shape costs
            seconds of compilation (`loop.distribute.resolve_jit_compile`); TPUs compile
            with XLA whatever it says.
        precision: `auto` (the policy the device runs fastest for the model's size:
            `albert_tf.config.precision`), `float32`, `mixed_float16` (GPU) or
            `mixed_bfloat16` (TPU, GPU, CPUs with AVX512-BF16 or AMX). Variables stay
            float32 under every policy.
        seed: weight initialization, dropout and data order.
        log_every_steps: steps between TensorBoard scalars.
        verbose: Keras progress output (0 silent, 1 progress bar, 2 one line per epoch).
    """

    model_dir: str = "runs/run"
    global_batch_size: int = 32
    gradient_accumulation_steps: int = 1
    train_steps: int = 1000
    steps_per_execution: int = 1
    jit_compile: bool | None = None
    precision: str = "auto"
    seed: int = 12345
    log_every_steps: int = 100
    verbose: int = 1

    def __post_init__(self):
        require_positive("train", self, ("global_batch_size", "gradient_accumulation_steps",
                                         "train_steps", "steps_per_execution",
                                         "log_every_steps"))
        require_one_of(self.precision, PRECISION_SETTINGS, "train.precision")

    def require_multiple_of_execution(self, name: str) -> None:
        """Field `name` must be a whole number of `steps_per_execution` calls."""
        value = getattr(self, name)
        require(value % self.steps_per_execution == 0, f"train.{name}",
                f"a multiple of train.steps_per_execution ({self.steps_per_execution})", value)
