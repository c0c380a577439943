"""FLOP counts against the hand-computed figures of flops.md."""

from albert_tf.flops import encoder_forward_flops_per_token, encoder_training_flops
from albert_tf.presets import load_preset


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
