"""The pretraining optimizer of the original ALBERT: LAMB without bias correction, and its schedule.

LAMB (You et al., 2019, "Large Batch Optimization for Deep Learning") as the original ALBERT
code implements it keeps Adam's moments m and v but applies **no bias correction**:

    update = m / (sqrt(v) + epsilon) + weight_decay * w
    w <- w - lr * (||w|| / ||update||) * update

The trust ratio ||w|| / ||update|| uses Frobenius norms over the whole variable, falls back to
1.0 when either norm is zero and is not clipped. Variables whose name matches LayerNorm,
layer_norm or bias get neither the weight decay nor the trust ratio; embeddings get both.
Fine-tuning uses the same update without the trust ratio (the original `AdamWeightDecay`).

Neither ready-made LAMB is this one:
- Keras 3's `keras.optimizers.Lamb` bias-corrects m and v, applies the trust ratio to every
  variable (no exclusion), decays weights decoupled from the update (outside the trust ratio,
  via the base optimizer) and runs on Keras 3, not tf_keras.
- Model Garden's `official.modeling.optimization.lamb.LAMB` (the TF-Addons one) bias-corrects
  m and v, which changes the early steps of every run. It stays selectable as
  `type: lamb_model_garden` for comparisons.

`bias_correction: true` divides m and v by (1 - beta_1^t) and (1 - beta_2^t), as Adam does.
Without it (the original), the first updates are larger than the schedule says: the ratio
m / sqrt(v) of a steady gradient is (1 - beta_1^t) / sqrt(1 - beta_2^t) of its corrected
value, 3.2x at step 100, 1.6x at step 500 and 1.3x at step 1,000 with the default betas. The
paper's 3,125 warm-up steps hide that; a short CPU run with a few hundred does not.

The learning rate warms up linearly from 0 and then decays polynomially from the peak on the
unshifted step, as the original `optimization.py` does (so the decay has already used up
warmup_steps / decay_steps of its range when warm-up ends).
"""

from __future__ import annotations

import numbers
import re

import tensorflow as tf
import tf_keras

from albert_tf.config import ConfigError
from albert_tf.config.optimizer import (  # noqa: F401
    DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY,
    OPTIMIZER_TYPES,
    OptimizerConfig,
)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class WarmupPolynomialDecay(tf_keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up from 0 to the peak, then polynomial decay on the unshifted step.

    lr(step) = peak * step / warmup_steps                                 if step < warmup_steps
             = end + (peak - end) * (1 - min(step, decay_steps) / decay_steps) ** power  else

    Args:
        peak_learning_rate: float, the learning rate at the end of warm-up.
        warmup_steps: int, steps of warm-up; 0 means none.
        decay_steps: int, the step at which the decay reaches `end_learning_rate`.
        end_learning_rate: float, defaults to 0.0.
        power: float, the decay's exponent; defaults to 1.0 (linear).
        name: optional name scope.

    Example:
        >>> schedule = WarmupPolynomialDecay(1e-3, warmup_steps=10, decay_steps=100)
        >>> round(float(schedule(5)), 8)  # half-way through warm-up
        0.0005
    """

    def __init__(self, peak_learning_rate, warmup_steps, decay_steps,
                 end_learning_rate=0.0, power=1.0, name=None):
        super().__init__()
        if warmup_steps < 0 or decay_steps <= 0:
            raise ValueError(f"WarmupPolynomialDecay needs warmup_steps >= 0 and "
                             f"decay_steps > 0, got {warmup_steps} and {decay_steps}")
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = int(warmup_steps)
        self.decay_steps = int(decay_steps)
        self.end_learning_rate = float(end_learning_rate)
        self.power = float(power)
        self.name = name

    def __call__(self, step):
        with tf.name_scope(self.name or "WarmupPolynomialDecay"):
            step = tf.cast(step, tf.float32)
            peak = tf.constant(self.peak_learning_rate, tf.float32)
            end = tf.constant(self.end_learning_rate, tf.float32)
            decay_steps = tf.constant(self.decay_steps, tf.float32)
            remaining = 1.0 - tf.minimum(step, decay_steps) / decay_steps
            decayed = end + (peak - end) * tf.pow(remaining, self.power)
            if self.warmup_steps == 0:
                return decayed
            warmup_steps = tf.constant(self.warmup_steps, tf.float32)
            return tf.where(step < warmup_steps, peak * step / warmup_steps, decayed)

    def get_config(self):
        return {"peak_learning_rate": self.peak_learning_rate,
                "warmup_steps": self.warmup_steps, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power,
                "name": self.name}


def trust_ratio(weight, update):
    """||weight|| / ||update|| (Frobenius), or 1.0 if either norm is zero; not clipped."""
    weight_norm = tf.norm(weight)
    update_norm = tf.norm(update)
    both_positive = tf.logical_and(weight_norm > 0, update_norm > 0)
    return tf.where(both_positive, tf.math.divide_no_nan(weight_norm, update_norm),
                    tf.ones_like(weight_norm))


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class Lamb(tf_keras.optimizers.Optimizer):
    """The original ALBERT LAMB: Adam moments without bias correction, weight decay inside
    the update, a per-variable trust ratio (see the module docstring).

    Args:
        learning_rate: float or a `LearningRateSchedule`; defaults to 0.001.
        beta_1: float, decay rate of m; defaults to 0.9.
        beta_2: float, decay rate of v; defaults to 0.999.
        epsilon: float, added to sqrt(v); defaults to 1e-6.
        weight_decay_rate: float, rate of the decay added to the update; defaults to 0.01.
        layer_adaptation: bool, apply the trust ratio; False gives AdamW. Defaults to True.
        bias_correction: bool, divide m and v by (1 - beta_1^t) and (1 - beta_2^t) at step t
            (as Adam does); defaults to False, as in the original.
        exclude_from_weight_decay: regular expressions searched in `variable.name`; matching
            variables get neither weight decay nor the trust ratio. Variables excluded with
            the base class's `exclude_from_weight_decay()` method are excluded too.
        global_clipnorm: float or None, clip the (replica-summed) gradients to this global
            norm before the update.
        name: defaults to "Lamb".
        **kwargs: other base-optimizer arguments (`jit_compile`, `use_ema`, ...). The base's
            decoupled `weight_decay` is refused: use `weight_decay_rate`.

    Example:
        >>> optimizer = Lamb(learning_rate=1e-3, global_clipnorm=1.0)
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 weight_decay_rate=0.01, layer_adaptation=True, bias_correction=False,
                 exclude_from_weight_decay=DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY,
                 global_clipnorm=None, name="Lamb", **kwargs):
        if kwargs.pop("weight_decay", None) is not None:
            raise ValueError(f"{type(self).__name__} decays weights inside the update: "
                             f"pass weight_decay_rate, not weight_decay")
        super().__init__(name=name, weight_decay=None, global_clipnorm=global_clipnorm,
                         **kwargs)
        self._learning_rate = self._build_learning_rate(learning_rate)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.weight_decay_rate = weight_decay_rate
        self.layer_adaptation = bool(layer_adaptation)
        self.bias_correction = bool(bias_correction)
        # Not `self.exclude_from_weight_decay`: that name is a method of the base class.
        self.exclude_patterns = tuple(exclude_from_weight_decay or ())

    # The underscored base methods used here (`_build_learning_rate`, `_var_key`,
    # `_index_dict`, `_use_weight_decay`, `_clip_gradients`, `_deduplicate_sparse_grad`,
    # `_serialize_hyperparameter`) are tf_keras's hooks for optimizer subclasses, as its
    # own Adam uses them; there is no public alternative.
    # tests/albert_tf/loop/test_optimization.py pins the behaviour against a numpy LAMB.

    def _is_decayed(self, variable) -> bool:
        """Whether `variable` gets weight decay and (with layer adaptation) the trust ratio."""
        if any(re.search(pattern, variable.name) for pattern in self.exclude_patterns):
            return False
        return self._use_weight_decay(variable)

    def build(self, var_list):
        super().build(var_list)
        if getattr(self, "_built", False):
            return
        self._built = True
        self._momentums = [self.add_variable_from_reference(var, "m") for var in var_list]
        self._velocities = [self.add_variable_from_reference(var, "v") for var in var_list]
        # Decided once per model variable, so every replica's copy is treated alike.
        self._decayed = tuple(self._is_decayed(var) for var in var_list)

    def _clip_gradients(self, grads):
        # tf.clip_by_global_norm measures an IndexedSlices by its values, so an id gathered
        # twice counts as |a|^2 + |b|^2 instead of |a + b|^2. Summing duplicates first (as the
        # base does anyway, but after clipping) makes the norm that of the dense gradient.
        return super()._clip_gradients(self._deduplicate_sparse_grad(grads))

    def update_step(self, gradient, variable):
        index = self._index_dict[self._var_key(variable)]
        dtype = variable.dtype
        lr = tf.cast(self.learning_rate, dtype)
        beta_1 = tf.cast(self.beta_1, dtype)
        beta_2 = tf.cast(self.beta_2, dtype)
        # 1 - beta in Python double, then cast: in float32, 1 - 0.999 is off by 1.3e-5.
        one_minus_beta_1 = tf.cast(1.0 - self.beta_1, dtype)
        one_minus_beta_2 = tf.cast(1.0 - self.beta_2, dtype)
        # Sparse gradients (tf.IndexedSlices from gathers) go dense: the original decays
        # every row of m and v each step, and the norms need the whole update anyway.
        gradient = tf.convert_to_tensor(gradient, dtype=dtype)
        m, v = self._momentums[index], self._velocities[index]
        next_m = beta_1 * m + one_minus_beta_1 * gradient
        next_v = beta_2 * v + one_minus_beta_2 * tf.square(gradient)
        m.assign(next_m)
        v.assign(next_v)
        if self.bias_correction:
            step = tf.cast(self.iterations + 1, dtype)
            next_m = next_m / (1.0 - tf.pow(beta_1, step))
            next_v = next_v / (1.0 - tf.pow(beta_2, step))
        update = next_m / (tf.sqrt(next_v) + tf.cast(self.epsilon, dtype))
        ratio = tf.ones([], dtype)
        if self._decayed[index]:
            update += tf.cast(self.weight_decay_rate, dtype) * variable
            if self.layer_adaptation:
                ratio = trust_ratio(variable, update)
        variable.assign_sub(lr * ratio * update)

    def get_config(self):
        config = super().get_config()
        del config["weight_decay"]  # always None here; see __init__
        config.update({
            "learning_rate": self._serialize_hyperparameter(self._learning_rate),
            "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
            "weight_decay_rate": self.weight_decay_rate,
            "layer_adaptation": self.layer_adaptation,
            "bias_correction": self.bias_correction,
            "exclude_from_weight_decay": list(self.exclude_patterns),
        })
        return config


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AdamWeightDecay(Lamb):
    """The original BERT/ALBERT fine-tuning optimizer: `Lamb` without the trust ratio.

    Takes `Lamb`'s arguments except `layer_adaptation`; defaults to the name "AdamWeightDecay".
    """

    def __init__(self, learning_rate=0.001, name="AdamWeightDecay", **kwargs):
        super().__init__(learning_rate=learning_rate, layer_adaptation=False, name=name,
                         **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["layer_adaptation"]
        return config


def create_optimizer(config: OptimizerConfig, decay_steps: int):
    """The optimizer of `config.type` with the warm-up/decay schedule over `decay_steps`.

    Args:
        config: an `OptimizerConfig`.
        decay_steps: int, total training steps (the decay reaches `end_learning_rate` there);
            must exceed `config.warmup_steps`.

    Returns:
        A tf_keras optimizer: `Lamb`, `AdamWeightDecay` or Model Garden's `LAMB` (a legacy
        tf_keras optimizer), clipping gradients to global norm `config.clip_norm` if > 0.
    """
    if isinstance(decay_steps, bool) or not isinstance(decay_steps, numbers.Integral):
        raise ConfigError(f"decay_steps (the total training steps) must be an int, "
                          f"got {decay_steps!r}")
    if decay_steps <= config.warmup_steps:
        raise ConfigError(f"decay_steps ({decay_steps}, the total training steps) must exceed "
                          f"field 'warmup_steps' ({config.warmup_steps})")
    schedule = WarmupPolynomialDecay(config.learning_rate, config.warmup_steps, int(decay_steps),
                                     config.end_learning_rate, config.power)
    arguments = dict(learning_rate=schedule, beta_1=config.beta_1, beta_2=config.beta_2,
                     epsilon=config.epsilon, weight_decay_rate=config.weight_decay,
                     exclude_from_weight_decay=list(config.exclude_from_weight_decay),
                     global_clipnorm=config.clip_norm if config.clip_norm > 0 else None)
    if config.type == "lamb":
        return Lamb(bias_correction=config.bias_correction, **arguments)
    if config.type == "adamw":
        return AdamWeightDecay(bias_correction=config.bias_correction, **arguments)
    # Imported here: tf-models-official is slow to import and only this choice needs it.
    from official.modeling.optimization.lamb import LAMB
    return LAMB(exclude_from_layer_adaptation=arguments["exclude_from_weight_decay"],
                **arguments)
