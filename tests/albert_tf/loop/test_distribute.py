"""Strategies by name, and when XLA can be used with them."""

import pytest
import tensorflow as tf

from albert_tf.config import ConfigError
from albert_tf.config.pretraining import pretrain_config_from_mapping
from albert_tf.loop.distribute import (
    DistributionConfig,
    create_strategy,
    is_chief,
    resolve_jit_compile,
    xla_supported,
)


def test_default_strategy_is_one_replica_and_can_use_xla():
    strategy = create_strategy(DistributionConfig("cpu"))
    assert strategy.num_replicas_in_sync == 1
    assert xla_supported(strategy) and is_chief(strategy)


def test_auto_xla_is_off_on_cpus_and_an_explicit_value_is_kept():
    """Null means off on a CPU (the small models CPUs train run as fast or faster without
    XLA, and it compiles first); true asks for it where it works."""
    strategy = create_strategy(DistributionConfig("cpu"))
    assert not tf.config.list_logical_devices("GPU")  # this suite runs on CPUs
    auto = pretrain_config_from_mapping({}, "test")
    assert resolve_jit_compile(auto, strategy) is False
    forced = pretrain_config_from_mapping(
        {"model": {"max_position_embeddings": 512}, "train": {"jit_compile": True}}, "test")
    assert resolve_jit_compile(forced, strategy) is True


def test_mirrored_over_two_cpus_has_two_replicas_and_no_xla():
    # Built by name here but never run: a second running MirroredStrategy would collide
    # with conftest's (see two_cpu_strategy).
    cpus = [device.name for device in tf.config.list_logical_devices("CPU")[:2]]
    strategy = create_strategy(DistributionConfig("mirrored", devices=cpus))
    assert strategy.num_replicas_in_sync == 2
    assert not xla_supported(strategy)
    config = pretrain_config_from_mapping(
        {"model": {"max_position_embeddings": 512}, "train": {"jit_compile": True}}, "test")
    with pytest.raises(ConfigError, match="train.jit_compile"):
        resolve_jit_compile(config, strategy)
    auto = pretrain_config_from_mapping({}, "test")
    assert resolve_jit_compile(auto, strategy) is False


def test_unknown_strategy_and_missing_tf_config_are_clear_errors(monkeypatch):
    with pytest.raises(ConfigError, match="distribution.strategy.*got 'gpus'"):
        DistributionConfig("gpus")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="TF_CONFIG"):
        create_strategy(DistributionConfig("multi_worker"))
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ConfigError, match="TF_CONFIG is not valid JSON"):
        create_strategy(DistributionConfig("multi_worker"))
