"""The `tf.distribute` strategy a run asks for by name, and facts about it the trainer needs.

- `default` / `cpu`: the default strategy, one device (the GPU if there is one, else the
  CPU); a laptop, one GPU.
- `mirrored`: `MirroredStrategy` over `devices` (all local GPUs when empty); one machine,
  many GPUs.
- `multi_worker`: `MultiWorkerMirroredStrategy`, the cluster from the `TF_CONFIG`
  environment variable; several machines.
- `tpu`: `TPUStrategy` after connecting to `tpu` (a name or grpc:// address; empty: the
  local TPU VM); Cloud TPU.

Everything that creates variables (model, optimizer, metrics) must be built inside
`strategy.scope()`; the global batch is split evenly over `strategy.num_replicas_in_sync`.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

import tensorflow as tf

from albert_tf.config import ConfigError
from albert_tf.config.distribution import STRATEGIES, DistributionConfig  # noqa: F401


def _cross_device_ops(name: str):
    if name == "nccl":
        return tf.distribute.NcclAllReduce()
    if name == "hierarchical_copy":
        return tf.distribute.HierarchicalCopyAllReduce()
    if name == "reduce_to_one":
        return tf.distribute.ReductionToOneDevice()
    return None


def create_strategy(config: DistributionConfig) -> tf.distribute.Strategy:
    """Builds (and for TPUs, connects and initializes) the strategy `config` names."""
    if config.strategy in ("default", "cpu"):
        return tf.distribute.get_strategy()
    if config.strategy == "mirrored":
        return tf.distribute.MirroredStrategy(
            devices=list(config.devices) or None,
            cross_device_ops=_cross_device_ops(config.all_reduce))
    if config.strategy == "multi_worker":
        _check_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=config.tpu or "local")
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def _check_tf_config() -> None:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise ConfigError("distribution.strategy 'multi_worker' needs the TF_CONFIG "
                          "environment variable (cluster worker addresses and this task's "
                          "index); see tf.distribute.MultiWorkerMirroredStrategy")
    try:
        json.loads(raw)
    except json.JSONDecodeError as error:
        raise ConfigError(f"TF_CONFIG is not valid JSON ({error.msg})") from None


def is_chief(strategy: tf.distribute.Strategy) -> bool:
    """Whether this process writes the run's files (worker 0 of a multi-worker cluster)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return True
    return resolver.task_type in (None, "chief") or (
        resolver.task_type == "worker" and resolver.task_id == 0)


def uses_only_cpus(strategy: tf.distribute.Strategy) -> bool:
    """Whether every replica of `strategy` runs on a CPU (the default strategy: whether the
    machine has no GPU, since it would place the run there)."""
    try:
        devices: Sequence[str] = strategy.extended.worker_devices
    except (AttributeError, RuntimeError):  # the default strategy has no device list
        devices = ()
    if not devices:
        return not tf.config.list_logical_devices("GPU")
    return all("CPU" in device.upper() for device in devices)


def xla_supported(strategy: tf.distribute.Strategy) -> bool:
    """Whether `jit_compile` can be used: any single-replica run, or replicas on GPUs/TPUs.

    XLA with a MirroredStrategy over CPU devices fails inside TensorFlow 2.20 itself.
    """
    return strategy.num_replicas_in_sync == 1 or not uses_only_cpus(strategy)


def resolve_jit_compile(config, strategy) -> bool:
    """`config.train.jit_compile` for `strategy` (null: on wherever XLA works and pays, which
    is on GPUs; TPUs compile every step anyway); any run config with `train` and
    `distribution` sections.

    On CPUs null leaves XLA off. Measured with `model.fit` as `albert-pretrain` runs it
    (`albert_lab/benchmarks/small_model_step.py`, `albert_lab/benchmarks/train_step.py`): the
    small models CPUs pretrain take as long or longer with it (H 64 x 4 at sequence 128 on 2
    AVX2 cores: 545 ms a step plain, 609 with XLA; at sequence 64: 206 and 219; on 2 AVX-512
    cores 80 and 81 ms), the base sizes gain at most 7% (albert_base 1%, bert_base 7%), and
    every run pays the compilation first; fine-tuning's batches, cut to their longest row, would
    compile once per length. A CPU fine-tune with `data.static_shapes` may still want `true`
    (`albert_lab/benchmarks/finetune.py`: the tiny preset's full-length step of 8, 17.5 ms with
    XLA against 22.2 without).
    """
    if isinstance(strategy, tf.distribute.TPUStrategy):
        return False  # TPUs compile every step with XLA anyway
    requested = config.train.jit_compile
    if requested is None:
        return xla_supported(strategy) and not uses_only_cpus(strategy)
    if requested and not xla_supported(strategy):
        raise ConfigError("field 'train.jit_compile': XLA with several replicas on CPU devices "
                          "fails inside TensorFlow 2.20; set train.jit_compile=false "
                          "(or null for automatic)")
    return requested


def check_global_batch(config, strategy) -> None:
    """`config.train.global_batch_size` must split evenly over the replicas (and, with
    gradient accumulation, each replica's share into the micro-batches)."""
    replicas = strategy.num_replicas_in_sync
    micro_batches = getattr(config.train, "gradient_accumulation_steps", 1)
    if config.train.global_batch_size % (replicas * micro_batches):
        accumulation = (f" times the {micro_batches} micro-batches of "
                        f"train.gradient_accumulation_steps" if micro_batches > 1 else "")
        raise ConfigError(f"field 'train.global_batch_size' "
                          f"({config.train.global_batch_size}) must be a multiple of the "
                          f"{replicas} replicas of distribution.strategy "
                          f"'{config.distribution.strategy}'{accumulation}")
