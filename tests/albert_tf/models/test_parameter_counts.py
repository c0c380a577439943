"""Parameter counts of really built encoders against the paper's Tables 2, 4, 5, 7 and 8.

The paper rounds to whole millions, so a count must land within max(0.5M, 2.5%) of its figure
(paper.md). The one exception is H = 4096: Table 2 says 235M, Table 8 says 225M, and the
architecture gives 222.6M; we check it against Table 8's figure.
"""

import functools

import pytest

from albert_tf.config import AlbertConfig
from albert_tf.config.presets import load_preset
from albert_tf.models.encoder import AlbertEncoder
from albert_tf.models.parameters import count_parameters, format_parameter_table, parameter_counts

M = 1_000_000


@functools.lru_cache(maxsize=None)
def _total(config: AlbertConfig) -> int:
    return count_parameters(config).total


def _preset(name, **changes):
    return load_preset(name).replace(**changes)


def _assert_close_to_paper(config, paper_millions):
    count = _total(config)
    tolerance = max(0.5 * M, 0.025 * paper_millions * M)
    assert abs(count - paper_millions * M) <= tolerance, (
        f"{count / M:.2f}M vs the paper's {paper_millions}M")


@pytest.mark.parametrize("preset, paper_millions", [
    ("bert_base", 108), ("bert_large", 334), ("bert_xlarge", 1270),
    ("albert_base", 12), ("albert_large", 18), ("albert_xlarge", 60),
    ("albert_xxlarge", 225),  # Table 2 says 235M; see the module docstring
])
def test_table_2(preset, paper_millions):
    _assert_close_to_paper(load_preset(preset), paper_millions)


def test_table_2_xxlarge_figure_is_the_papers_inconsistency():
    # Pins the documented discrepancy: 235M is more than 2.5% away from what the
    # architecture gives, 225M (Table 8) is not.
    count = _total(load_preset("albert_xxlarge"))
    assert abs(count - 235 * M) > 0.025 * 235 * M
    assert 222 * M < count < 223 * M


@pytest.mark.parametrize("embedding_size, not_shared, all_shared", [
    (64, 87, 10), (128, 89, 12), (256, 93, 16), (768, 108, 31)])
def test_table_4_embedding_size(embedding_size, not_shared, all_shared):
    _assert_close_to_paper(_preset("albert_base", embedding_size=embedding_size,
                                   sharing="none"), not_shared)
    _assert_close_to_paper(_preset("albert_base", embedding_size=embedding_size,
                                   sharing="all"), all_shared)


@pytest.mark.parametrize("embedding_size, sharing, paper_millions", [
    (768, "all", 31), (768, "attention", 83), (768, "ffn", 57), (768, "none", 108),
    (128, "all", 12), (128, "attention", 64), (128, "ffn", 38), (128, "none", 89)])
def test_table_5_sharing(embedding_size, sharing, paper_millions):
    _assert_close_to_paper(_preset("albert_base", embedding_size=embedding_size,
                                   sharing=sharing), paper_millions)


@pytest.mark.parametrize("num_layers", [1, 3, 6, 12, 24, 48])
def test_table_7_depth_costs_no_parameters(num_layers):
    _assert_close_to_paper(_preset("albert_large", num_layers=num_layers), 18)


@pytest.mark.parametrize("hidden_size, paper_millions", [
    (1024, 18), (2048, 60), (4096, 225), (6144, 499)])
def test_table_8_width(hidden_size, paper_millions):
    config = _preset("albert_large", num_layers=3, hidden_size=hidden_size,
                     num_attention_heads=hidden_size // 64, intermediate_size=4 * hidden_size)
    _assert_close_to_paper(config, paper_millions)


def test_albert_base_breakdown_by_hand():
    counts = count_parameters(load_preset("albert_base"))
    vocab, emb, hidden, inner, positions = 30000, 128, 768, 3072, 512
    assert counts.embedding == vocab * emb + positions * emb + 2 * emb + 2 * emb
    assert counts.projection == emb * hidden + hidden
    assert counts.attention == 4 * (hidden * hidden + hidden) + 2 * hidden
    assert counts.feed_forward == hidden * inner + inner + inner * hidden + hidden + 2 * hidden
    assert counts.pooler == hidden * hidden + hidden
    table = format_parameter_table(counts)
    assert "11,683,584" in table and "projection" in table


def test_counting_without_allocation_matches_a_real_model(tiny_config):
    config = tiny_config.replace(sharing="ffn", num_groups=2, inner_group_num=2)
    real = AlbertEncoder(config)
    assert parameter_counts(real).total == real.count_params() == count_parameters(config).total
