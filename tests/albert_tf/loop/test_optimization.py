"""LAMB, AdamW and the warm-up schedule against a plain numpy LAMB written here."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras
from thresholds import above, below

from albert_tf.config import ConfigError
from albert_tf.config.schema import dataclass_from_mapping
from albert_tf.loop.optimization import (
    AdamWeightDecay,
    Lamb,
    OptimizerConfig,
    WarmupPolynomialDecay,
    create_optimizer,
    trust_ratio,
)

B1, B2, EPS, WD = 0.9, 0.999, 1e-6, 0.01
SHAPES = {"encoder/layer_norm/gamma": (4,), "encoder/dense/bias": (4,),
          "encoder/dense/kernel": (3, 4), "encoder/embeddings": (6, 4)}
EXCLUDED = {"encoder/layer_norm/gamma", "encoder/dense/bias"}


def numpy_lr(step, peak, warmup, decay, end=0.0, power=1.0):
    if step < warmup:
        return peak * step / warmup
    return end + (peak - end) * (1.0 - min(step, decay) / decay) ** power


def numpy_lamb(weights, grads_per_step, lrs, layer_adaptation=True, bias_correction=False):
    """The original ALBERT LAMB in float64: no bias correction (unless asked for, as Adam
    does it), decay inside the update."""
    w = {k: np.asarray(v, np.float64).copy() for k, v in weights.items()}
    m = {k: np.zeros_like(v) for k, v in w.items()}
    v = {k: np.zeros_like(x) for k, x in w.items()}
    for step, (grads, lr) in enumerate(zip(grads_per_step, lrs), start=1):
        for name, g in grads.items():
            m[name] = B1 * m[name] + (1 - B1) * g
            v[name] = B2 * v[name] + (1 - B2) * g * g
            m_used, v_used = m[name], v[name]
            if bias_correction:
                m_used, v_used = m_used / (1 - B1 ** step), v_used / (1 - B2 ** step)
            update = m_used / (np.sqrt(v_used) + EPS)
            ratio = 1.0
            if name not in EXCLUDED:
                update = update + WD * w[name]
                w_norm, u_norm = np.linalg.norm(w[name]), np.linalg.norm(update)
                if layer_adaptation and w_norm > 0 and u_norm > 0:
                    ratio = w_norm / u_norm
            w[name] = w[name] - lr * ratio * update
    return w


def random_weights(seed=0):
    rng = np.random.default_rng(seed)
    weights = {name: rng.standard_normal(shape).astype(np.float32)
               for name, shape in SHAPES.items()}
    weights["encoder/layer_norm/gamma"] += 1.0
    return weights


def random_grads(steps, seed=1):
    rng = np.random.default_rng(seed)
    return [{name: rng.standard_normal(shape).astype(np.float32)
             for name, shape in SHAPES.items()} for _ in range(steps)]


def run(optimizer, weights, grads_per_step):
    variables = {name: tf.Variable(value, name=name) for name, value in weights.items()}
    for grads in grads_per_step:
        optimizer.apply_gradients([(tf.constant(grads[n]), variables[n]) for n in variables])
    return {name: var.numpy() for name, var in variables.items()}


def assert_weights_close(actual, expected):
    for name in expected:
        np.testing.assert_allclose(actual[name], expected[name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@pytest.mark.parametrize("bias_correction", [False, True])
@pytest.mark.parametrize("optimizer_class,layer_adaptation",
                         [(Lamb, True), (AdamWeightDecay, False)])
def test_matches_numpy_reference_with_warmup(optimizer_class, layer_adaptation,
                                             bias_correction):
    weights, grads = random_weights(), random_grads(5)
    schedule = WarmupPolynomialDecay(0.1, warmup_steps=3, decay_steps=10)
    optimizer = optimizer_class(learning_rate=schedule, weight_decay_rate=WD, epsilon=EPS,
                                bias_correction=bias_correction)
    lrs = [numpy_lr(step, 0.1, 3, 10) for step in range(5)]
    expected = numpy_lamb(weights, grads, lrs, layer_adaptation=layer_adaptation,
                          bias_correction=bias_correction)
    assert_weights_close(run(optimizer, weights, grads), expected)
    assert optimizer.iterations.numpy() == 5


def test_excluded_variables_get_plain_adam_and_kernels_the_trust_ratio(seed, record_property):
    weights, grads = random_weights(2 * seed), random_grads(1, seed=2 * seed + 1)
    lr = 0.1
    result = run(Lamb(learning_rate=lr), weights, grads)
    ratios = []
    for name in SHAPES:
        g = grads[0][name].astype(np.float64)
        adam = ((1 - B1) * g) / (np.sqrt((1 - B2) * g * g) + EPS)  # no bias correction
        delta = result[name] - weights[name]
        if name in EXCLUDED:
            np.testing.assert_allclose(delta, -lr * adam, rtol=1e-4, atol=1e-6, err_msg=name)
        else:
            with_decay = adam + WD * weights[name]
            ratio = np.linalg.norm(weights[name]) / np.linalg.norm(with_decay)
            ratios.append(ratio)
            np.testing.assert_allclose(delta, -lr * ratio * with_decay, rtol=1e-4, atol=1e-6)
            assert not np.allclose(delta, -lr * with_decay, rtol=1e-2)
    # A trust ratio near 1 would let a missing one pass.
    above(record_property, "smallest |trust ratio - 1|", np.min(np.abs(np.subtract(ratios, 1))),
          0.1)


def test_trust_ratio_is_one_for_zero_norms():
    assert float(trust_ratio(tf.zeros([3, 2]), tf.ones([3, 2]))) == 1.0
    assert float(trust_ratio(tf.ones([3, 2]), tf.zeros([3, 2]))) == 1.0
    assert float(trust_ratio(tf.fill([2, 2], 3.0), tf.ones([2, 2]))) == pytest.approx(3.0)
    grad = np.array([[0.5, -2.0], [1.0, 3.0]], np.float32)
    kernel = tf.Variable(tf.zeros([2, 2]), name="dense/kernel")
    Lamb(learning_rate=0.1).apply_gradients([(tf.constant(grad), kernel)])
    adam = (1 - B1) * grad / (np.sqrt((1 - B2) * grad * grad) + EPS)
    np.testing.assert_allclose(kernel.numpy(), -0.1 * adam, rtol=1e-5)


def test_schedule_at_hand_computed_points():
    schedule = WarmupPolynomialDecay(0.002, warmup_steps=4, decay_steps=20)
    expected = {0: 0.0, 2: 0.001, 4: 0.002 * (1 - 4 / 20), 12: 0.002 * (1 - 12 / 20),
                20: 0.0, 30: 0.0}
    for step, value in expected.items():
        assert float(schedule(step)) == pytest.approx(value, abs=1e-9), step
        assert schedule(tf.constant(step, tf.int64)).dtype == tf.float32
    curved = WarmupPolynomialDecay(0.002, 0, 20, end_learning_rate=1e-4, power=2.0)
    assert float(curved(0)) == pytest.approx(0.002)
    assert float(curved(10)) == pytest.approx(1e-4 + (0.002 - 1e-4) * 0.25)
    assert float(curved(25)) == pytest.approx(1e-4)


def test_global_norm_clipping_applies_to_the_clipped_gradients(seed, record_property):
    weights = random_weights(2 * seed)
    huge, small = random_grads(2, seed=2 * seed + 3)
    huge = {name: g * 1e4 for name, g in huge.items()}
    small = {name: g * 0.05 for name, g in small.items()}
    norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in huge.values()))
    clipped = {name: (g / norm).astype(np.float32) for name, g in huge.items()}
    below(record_property, "second gradient's norm (left unclipped)",
          np.sqrt(sum(np.sum(g ** 2) for g in small.values())), 1.0)
    result = run(Lamb(learning_rate=0.1, global_clipnorm=1.0), weights, [huge, small])
    assert_weights_close(result, run(Lamb(learning_rate=0.1), weights, [clipped, small]))
    unclipped = run(Lamb(learning_rate=0.1), weights, [huge, small])
    assert not np.allclose(unclipped["encoder/dense/kernel"], result["encoder/dense/kernel"])


def test_sparse_gradient_equals_dense():
    table = random_weights()["encoder/embeddings"]
    ids = tf.constant([1, 3, 3, 5])  # a repeated id: the clip norm must see |a + b|, not |a|, |b|
    scale = tf.constant(np.random.default_rng(4).standard_normal((4, 4)), tf.float32)
    sparse_var = tf.Variable(table, name="embeddings/word")
    dense_var = tf.Variable(table, name="embeddings/word")
    sparse_opt = Lamb(learning_rate=0.1, global_clipnorm=1.0)
    dense_opt = Lamb(learning_rate=0.1, global_clipnorm=1.0)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(sparse_var, ids) * scale) * 10.0
        grad = tape.gradient(loss, sparse_var)
        assert isinstance(grad, tf.IndexedSlices)
        sparse_opt.apply_gradients([(grad, sparse_var)])
        dense_opt.apply_gradients([(tf.convert_to_tensor(grad), dense_var)])
    np.testing.assert_allclose(sparse_var.numpy(), dense_var.numpy(), rtol=1e-6)
    assert not np.allclose(sparse_var.numpy()[0], table[0])  # untouched rows decay too


def test_replica_gradients_are_summed_before_clipping(two_cpu_strategy):
    init = random_weights()["encoder/dense/kernel"]
    per_replica = [g["encoder/dense/kernel"] * 100.0 for g in random_grads(2, seed=5)]
    strategy = two_cpu_strategy
    with strategy.scope():
        kernel = tf.Variable(init, name="dense/kernel")
        optimizer = Lamb(learning_rate=0.1, global_clipnorm=1.0)

    @tf.function
    def step():
        def replica_fn():
            first = tf.distribute.get_replica_context().replica_id_in_sync_group == 0
            grad = tf.where(first, per_replica[0], per_replica[1])
            optimizer.apply_gradients([(grad, kernel)])
        strategy.run(replica_fn)

    step()
    single = tf.Variable(init, name="dense/kernel")
    total = tf.constant(per_replica[0] + per_replica[1])
    Lamb(learning_rate=0.1, global_clipnorm=1.0).apply_gradients([(total, single)])
    np.testing.assert_allclose(kernel.numpy(), single.numpy(), rtol=1e-5)


def toy_model():
    inputs = tf_keras.Input((4,))
    hidden = tf_keras.layers.Dense(8, name="dense")(inputs)
    outputs = tf_keras.layers.LayerNormalization(name="layer_norm")(hidden)
    return tf_keras.Model(inputs, tf_keras.layers.Dense(1, name="out")(outputs))


@pytest.mark.parametrize("kind", ["lamb", "adamw", "lamb_model_garden"])
def test_create_optimizer_types_and_fit(kind):
    optimizer = create_optimizer(OptimizerConfig(type=kind, warmup_steps=0), decay_steps=10)
    if kind == "lamb_model_garden":
        from official.modeling.optimization.lamb import LAMB
        assert isinstance(optimizer, LAMB)
        assert optimizer.exclude_from_layer_adaptation == ["LayerNorm", "layer_norm", "bias"]
    else:
        expected = {"lamb": Lamb, "adamw": AdamWeightDecay}[kind]
        assert type(optimizer) is expected
        assert optimizer.layer_adaptation == (kind == "lamb")
    assert optimizer.global_clipnorm == 1.0
    model = toy_model()
    before = model.get_layer("dense").kernel.numpy()
    model.compile(optimizer, loss="mse")
    x = np.random.default_rng(6).standard_normal((8, 4)).astype(np.float32)
    history = model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert not np.allclose(model.get_layer("dense").kernel.numpy(), before)


@pytest.mark.parametrize("kind", ["lamb", "adamw"])
def test_create_optimizer_passes_bias_correction(kind):
    assert not create_optimizer(OptimizerConfig(type=kind), 5000).bias_correction
    assert create_optimizer(OptimizerConfig(type=kind, bias_correction=True), 5000).bias_correction
    with pytest.raises(ConfigError, match="bias_correction"):
        dataclass_from_mapping(OptimizerConfig, {"bias_correction": "yes"})


def test_create_optimizer_without_clipping_and_bad_decay_steps():
    assert create_optimizer(OptimizerConfig(clip_norm=0.0), 5000).global_clipnorm is None
    with pytest.raises(ConfigError, match="warmup_steps"):
        create_optimizer(OptimizerConfig(warmup_steps=100), decay_steps=100)


def test_lamb_and_schedule_config_round_trip():
    schedule = WarmupPolynomialDecay(0.002, 4, 20, end_learning_rate=1e-5, power=0.5)
    restored_schedule = WarmupPolynomialDecay.from_config(schedule.get_config())
    for step in (0, 3, 11, 25):
        assert float(restored_schedule(step)) == pytest.approx(float(schedule(step)))
    optimizer = Lamb(learning_rate=schedule, beta_1=0.8, weight_decay_rate=0.02,
                     layer_adaptation=False, bias_correction=True,
                     exclude_from_weight_decay=["bias"], global_clipnorm=2.0)
    restored = tf_keras.optimizers.deserialize(tf_keras.optimizers.serialize(optimizer))
    assert type(restored) is Lamb and restored.bias_correction
    assert restored.get_config() == optimizer.get_config()
    assert isinstance(restored._learning_rate, WarmupPolynomialDecay)
    adamw = AdamWeightDecay(learning_rate=0.01)
    assert AdamWeightDecay.from_config(adamw.get_config()).get_config() == adamw.get_config()


def test_optimizer_config_from_mapping_and_errors():
    config = dataclass_from_mapping(OptimizerConfig, {
        "type": "adamw", "learning_rate": 1, "exclude_from_weight_decay": ["LayerNorm", "bias"]})
    assert config.learning_rate == 1.0
    assert config.exclude_from_weight_decay == ("LayerNorm", "bias")
    with pytest.raises(ConfigError, match="'type'"):
        OptimizerConfig(type="sgd")
    with pytest.raises(ConfigError, match="'learning_rate'"):
        dataclass_from_mapping(OptimizerConfig, {"learning_rate": -0.1})
    with pytest.raises(ConfigError, match="'exclude_from_weight_decay'"):
        OptimizerConfig(exclude_from_weight_decay="bias")
    with pytest.raises(ConfigError, match="'warmup_steps'"):
        dataclass_from_mapping(OptimizerConfig, {"warmup_steps": 1.5})
