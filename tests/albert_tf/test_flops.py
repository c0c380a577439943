"""FLOP counts against figures computed by hand from the layer shapes."""

from albert_tf.config.presets import load_preset
from albert_tf.flops import (
    encoder_forward_flops_per_token,
    encoder_training_flops,
    masked_lm_forward_flops_per_prediction,
    pretraining_step_flops,
)


def test_albert_base_matches_the_design_note():
    config = load_preset("albert_base")
    per_token = encoder_forward_flops_per_token(config, seq_length=128)
    # 12 x (8 x 768^2 + 4 x 128 x 768 + 4 x 768 x 3072) + 2 x 128 x 768
    assert per_token == 12 * (4_718_592 + 393_216 + 9_437_184) + 196_608 == 174_784_512
    # "about 67 GFLOP per training example"
    assert round(encoder_training_flops(config, 1, 128) / 1e9) == 67


def test_sharing_does_not_change_compute_but_inner_groups_and_e_do():
    base = load_preset("albert_base")
    per_token = encoder_forward_flops_per_token(base, 128)
    assert encoder_forward_flops_per_token(base.replace(sharing="none"), 128) == per_token
    doubled = encoder_forward_flops_per_token(base.replace(inner_group_num=2), 128)
    assert doubled == 2 * per_token - 196_608
    assert encoder_forward_flops_per_token(base.replace(embedding_size=768), 128) == (
        per_token - 196_608)


def test_pretraining_step_of_the_tiny_preset_by_hand():
    config = load_preset("tiny")  # V 384, E 16, H 32, I 64, L 3
    # per token: 3 x (8 x 32^2 + 4 x 8 x 32 + 4 x 32 x 64) + 2 x 16 x 32, at seq_length 8
    assert encoder_forward_flops_per_token(config, 8) == 3 * (8192 + 1024 + 8192) + 1024
    # per masked position: 2 x 32 x 16 (transform) + 2 x 16 x 384 (tied logits)
    assert masked_lm_forward_flops_per_prediction(config) == 1024 + 12288 == 13312
    # batch 2, seq 8, 2 predictions: 3 x (2 x 8 x 53,248 + 2 x 2 x 13,312)
    assert pretraining_step_flops(config, 2, 8, 2) == 3 * (851_968 + 53_248) == 2_715_648


def test_albert_base_mlm_head_matches_the_design_note():
    config = load_preset("albert_base")
    # "about 0.5 GFLOP for its MLM head" per training example with 20 masked positions
    head = pretraining_step_flops(config, 1, 128, 20) - encoder_training_flops(config, 1, 128)
    assert head == 3 * 20 * (2 * 768 * 128 + 2 * 128 * 30000) == 472_596_480
