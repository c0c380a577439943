"""Writing checkpoints the way the original ALBERT code leaves them, from numpy arrays."""

import json
import os

import numpy as np
import numpy_reference as ref
import tensorflow as tf

# An all-shared ALBERT with several groups and inner groups and E != H, as in the released
# albert_config.json format (including the keys the model ignores).
ORIGINAL_CONFIG = {
    "attention_probs_dropout_prob": 0.0, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
    "embedding_size": 12, "hidden_size": 24, "initializer_range": 0.02,
    "intermediate_size": 40, "max_position_embeddings": 20, "num_attention_heads": 4,
    "num_hidden_layers": 3, "num_hidden_groups": 2, "net_structure_type": 0, "gap_size": 0,
    "num_memory_blocks": 0, "inner_group_num": 2, "down_scale_factor": 1,
    "type_vocab_size": 2, "vocab_size": 61}
GLOBAL_STEP = 12345


def original_arrays_from_numpy(config, seed=0, heads=True):
    """{original name: array} at a trained-model scale (not the 0.02 init, under which every
    layer is nearly linear and activation mistakes hide)."""
    rng = np.random.default_rng(seed)
    vocab, emb, hidden = config["vocab_size"], config["embedding_size"], config["hidden_size"]
    inter = config["intermediate_size"]

    def kernel(rows, cols):
        return rng.standard_normal((rows, cols)) / np.sqrt(rows)

    def vector(size, center=0.0):
        return center + 0.2 * rng.standard_normal(size)

    arrays = {
        "bert/embeddings/word_embeddings": 0.5 * rng.standard_normal((vocab, emb)),
        "bert/embeddings/token_type_embeddings": 0.5 * rng.standard_normal((2, emb)),
        "bert/embeddings/position_embeddings": 0.5 * rng.standard_normal(
            (config["max_position_embeddings"], emb)),
        "bert/embeddings/LayerNorm/gamma": vector(emb, 1.0),
        "bert/embeddings/LayerNorm/beta": vector(emb),
        "bert/encoder/embedding_hidden_mapping_in/kernel": kernel(emb, hidden),
        "bert/encoder/embedding_hidden_mapping_in/bias": vector(hidden),
        "bert/pooler/dense/kernel": kernel(hidden, hidden),
        "bert/pooler/dense/bias": vector(hidden),
    }
    for group in range(config["num_hidden_groups"]):
        for inner in range(config["inner_group_num"]):
            prefix = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"
            for part in ("self/query", "self/key", "self/value", "output/dense"):
                arrays[f"{prefix}attention_1/{part}/kernel"] = kernel(hidden, hidden)
                arrays[f"{prefix}attention_1/{part}/bias"] = vector(hidden)
            arrays[f"{prefix}ffn_1/intermediate/dense/kernel"] = kernel(hidden, inter)
            arrays[f"{prefix}ffn_1/intermediate/dense/bias"] = vector(inter)
            arrays[f"{prefix}ffn_1/intermediate/output/dense/kernel"] = kernel(inter, hidden)
            arrays[f"{prefix}ffn_1/intermediate/output/dense/bias"] = vector(hidden)
            for norm in ("LayerNorm", "LayerNorm_1"):
                arrays[f"{prefix}{norm}/gamma"] = vector(hidden, 1.0)
                arrays[f"{prefix}{norm}/beta"] = vector(hidden)
    if heads:
        arrays.update({
            "cls/predictions/transform/dense/kernel": kernel(hidden, emb),
            "cls/predictions/transform/dense/bias": vector(emb),
            "cls/predictions/transform/LayerNorm/gamma": vector(emb, 1.0),
            "cls/predictions/transform/LayerNorm/beta": vector(emb),
            "cls/predictions/output_bias": vector(vocab),
            "cls/seq_relationship/output_weights": kernel(2, hidden),
            "cls/seq_relationship/output_bias": vector(2),
        })
    return {name: value.astype(np.float32) for name, value in arrays.items()}


def write_tf1_checkpoint(folder, arrays, config, global_step=GLOBAL_STEP, slots=True):
    """What the original code leaves behind: a TF1 Saver checkpoint (with LAMB/Adam slots
    and global_step), its `checkpoint` file and albert_config.json."""
    os.makedirs(folder, exist_ok=True)
    with tf.Graph().as_default():
        variables = {name: tf.compat.v1.Variable(value, name=name)
                     for name, value in arrays.items()}
        if slots:
            for name, value in arrays.items():
                for slot in ("adam_m", "adam_v"):
                    variables[f"{name}/{slot}"] = tf.compat.v1.Variable(
                        np.abs(value) * 0.01, name=f"{name}/{slot}")
        variables["global_step"] = tf.compat.v1.Variable(
            np.int64(global_step), name="global_step")
        saver = tf.compat.v1.train.Saver(var_list=variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            prefix = saver.save(session, os.path.join(folder, "model.ckpt"),
                                global_step=global_step)
    with open(os.path.join(folder, "albert_config.json"), "w") as f:
        json.dump(config, f)
    return prefix


def restore_with_tf1_saver(prefix, shapes):
    """{name: value} restored the way the original code restores: graph variables with the
    original names and `tf.compat.v1.train.Saver.restore`."""
    with tf.Graph().as_default():
        variables = {name: tf.compat.v1.Variable(tf.zeros(shape, dtype), name=name)
                     for name, (shape, dtype) in shapes.items()}
        saver = tf.compat.v1.train.Saver(var_list=variables)
        with tf.compat.v1.Session() as session:
            saver.restore(session, prefix)
            return session.run(variables)


def numpy_forward(arrays, config, inputs, positions):
    """The independent reference: (sequence, pooled, MLM log-probs, sentence logits)."""
    weights = {
        "embeddings": {
            "word": arrays["bert/embeddings/word_embeddings"],
            "position": arrays["bert/embeddings/position_embeddings"],
            "token_type": arrays["bert/embeddings/token_type_embeddings"],
            "ln_gamma": arrays["bert/embeddings/LayerNorm/gamma"],
            "ln_beta": arrays["bert/embeddings/LayerNorm/beta"]},
        "projection": (arrays["bert/encoder/embedding_hidden_mapping_in/kernel"],
                       arrays["bert/encoder/embedding_hidden_mapping_in/bias"]),
        "pooler": (arrays["bert/pooler/dense/kernel"], arrays["bert/pooler/dense/bias"]),
        "groups": []}
    for group in range(config["num_hidden_groups"]):
        blocks = []
        for inner in range(config["inner_group_num"]):
            p = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/"

            def pair(name, p=p):
                return arrays[f"{p}{name}/kernel"], arrays[f"{p}{name}/bias"]

            blocks.append({
                "q": pair("attention_1/self/query"), "k": pair("attention_1/self/key"),
                "v": pair("attention_1/self/value"), "o": pair("attention_1/output/dense"),
                "ln1": (arrays[f"{p}LayerNorm/gamma"], arrays[f"{p}LayerNorm/beta"]),
                "ffn_in": pair("ffn_1/intermediate/dense"),
                "ffn_out": pair("ffn_1/intermediate/output/dense"),
                "ln2": (arrays[f"{p}LayerNorm_1/gamma"], arrays[f"{p}LayerNorm_1/beta"])})
        weights["groups"].append(blocks)
    weights = {key: _float64(value) for key, value in weights.items()}
    sequence, pooled, _ = ref.albert_forward(
        weights, inputs["input_word_ids"].numpy(), inputs["input_mask"].numpy(),
        inputs["input_type_ids"].numpy(), config["num_hidden_layers"],
        config["num_attention_heads"])
    head = _float64({"dense": (arrays["cls/predictions/transform/dense/kernel"],
                               arrays["cls/predictions/transform/dense/bias"]),
                     "ln": (arrays["cls/predictions/transform/LayerNorm/gamma"],
                            arrays["cls/predictions/transform/LayerNorm/beta"]),
                     "output_bias": arrays["cls/predictions/output_bias"]})
    log_probs = ref.masked_lm_log_probs(
        sequence, positions, head, arrays["bert/embeddings/word_embeddings"].astype(np.float64))
    logits = ref.sentence_logits(pooled, arrays["cls/seq_relationship/output_weights"],
                                 arrays["cls/seq_relationship/output_bias"])
    return sequence, pooled, log_probs, logits


def _float64(value):
    if isinstance(value, dict):
        return {key: _float64(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_float64(item) for item in value)
    return np.asarray(value, np.float64)
