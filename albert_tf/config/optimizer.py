"""`OptimizerConfig`: the optimizer and its learning-rate schedule (TensorFlow-free, so run
configs load without it; `albert_tf.loop.optimization` builds the optimizer)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from albert_tf.config.schema import check_field_types, require, require_one_of, require_patterns

OPTIMIZER_TYPES = ("lamb", "adamw", "lamb_model_garden")
DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
    """Optimizer and learning-rate schedule (defaults: the paper's pretraining setup).

    Attributes:
        type: `lamb` (the original ALBERT LAMB), `adamw` (the same without the trust
            ratio, for fine-tuning) or `lamb_model_garden` (Model Garden's bias-corrected LAMB).
        learning_rate: peak learning rate, reached at the end of warm-up.
        warmup_steps: steps of linear warm-up from 0; 0 means none.
        end_learning_rate: learning rate at the end of the polynomial decay.
        power: exponent of the polynomial decay (1.0 is linear).
        weight_decay: rate of the weight decay added to the update of non-excluded variables.
        beta_1: decay rate of the first-moment estimate m.
        beta_2: decay rate of the second-moment estimate v.
        epsilon: added to sqrt(v) in the denominator.
        clip_norm: global gradient-norm clip; 0 disables clipping.
        bias_correction: divide Adam's moments by (1 - beta^t) (`lamb` and `adamw`; the
            original does not; `lamb_model_garden` always does).
        exclude_from_weight_decay: regular expressions; a variable whose name matches any of
            them gets neither weight decay nor the trust ratio.
    """

    type: str = "lamb"
    learning_rate: float = 0.00176
    warmup_steps: int = 3125
    end_learning_rate: float = 0.0
    power: float = 1.0
    weight_decay: float = 0.01
    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-6
    clip_norm: float = 1.0
    bias_correction: bool = False
    exclude_from_weight_decay: Sequence[str] = DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY

    def __post_init__(self):
        check_field_types(self)
        require(not isinstance(self.exclude_from_weight_decay, str),
                "exclude_from_weight_decay", "a list of patterns", self.exclude_from_weight_decay)
        # YAML gives lists; a tuple keeps the frozen config hashable.
        object.__setattr__(self, "exclude_from_weight_decay",
                           tuple(self.exclude_from_weight_decay))
        self.validate()

    def validate(self) -> None:
        """Raises ConfigError naming the first invalid field."""
        require_one_of(self.type, OPTIMIZER_TYPES, "type")
        for name in ("learning_rate", "power", "epsilon"):
            require(getattr(self, name) > 0, name, "positive", getattr(self, name))
        for name in ("warmup_steps", "end_learning_rate", "weight_decay", "clip_norm"):
            require(getattr(self, name) >= 0, name, ">= 0", getattr(self, name))
        for name in ("beta_1", "beta_2"):
            require(0.0 <= getattr(self, name) < 1.0, name, "in [0, 1)", getattr(self, name))
        require_patterns(self.exclude_from_weight_decay, "exclude_from_weight_decay")
