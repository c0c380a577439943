"""AlbertConfig: validation errors name the field, YAML/JSON loading, overrides, presets."""

import json

import pytest

from albert_tf.checkpoints.original_config import read_original_config, to_original_config
from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.config.presets import load_preset, preset_names
from albert_tf.config.schema import apply_overrides, load_yaml_mapping, setting_differences


@pytest.mark.parametrize("changes, field", [
    (dict(hidden_size=100, num_attention_heads=12), "num_attention_heads"),
    (dict(num_groups=13), "num_groups"),
    (dict(sharing="some"), "sharing"),
    (dict(sharing="none", num_groups=2), "num_groups"),
    (dict(vocab_size=-5), "vocab_size"),
    (dict(embedding_size=0), "embedding_size"),
    (dict(inner_group_num=0), "inner_group_num"),
    (dict(hidden_dropout=1.0), "hidden_dropout"),
    (dict(attention_dropout=-0.1), "attention_dropout"),
    (dict(layer_norm_epsilon=0.0), "layer_norm_epsilon"),
    (dict(hidden_activation="swish"), "hidden_activation"),
    (dict(num_layers=True), "num_layers"),
    (dict(hidden_size="768"), "hidden_size"),
])
def test_invalid_values_name_the_field(changes, field):
    with pytest.raises(ConfigError, match=f"'{field}'"):
        AlbertConfig(**changes)


def test_gelu_is_rejected_as_ambiguous_with_a_hint():
    with pytest.raises(ConfigError, match="gelu_tanh"):
        AlbertConfig(hidden_activation="gelu")


def test_unknown_key_names_the_key_and_the_source():
    with pytest.raises(ConfigError, match=r"my.yaml: field 'num_heads' is not a field"):
        AlbertConfig.from_dict({"num_heads": 12}, source="my.yaml")


def test_ints_are_accepted_for_floats():
    assert AlbertConfig.from_dict({"hidden_dropout": 0}).hidden_dropout == 0.0


def test_defaults_are_albert_base():
    assert AlbertConfig() == load_preset("albert_base")


def test_yaml_with_overrides(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("hidden_size: 64\nnum_attention_heads: 4\nintermediate_size: 256\n"
                    "layer_norm_epsilon: 1e-6\n")  # YAML 1.1 alone would read a string
    config = AlbertConfig.from_yaml(path, ["num_layers=3", "sharing=ffn", "hidden_dropout=0.1",
                                           "initializer_range=2e-2"])
    assert config.layer_norm_epsilon == 1e-6 and config.initializer_range == 0.02
    assert (config.hidden_size, config.num_layers, config.sharing) == (64, 3, "ffn")
    assert config.hidden_dropout == 0.1
    assert config.embedding_size == 128  # untouched defaults stay


def test_override_error_says_it_came_from_an_override(tmp_path):
    path = tmp_path / "model.yaml"
    path.write_text("num_layers: 4\n")
    with pytest.raises(ConfigError, match=r"model.yaml with overrides num_groups=9.*'num_groups'"):
        AlbertConfig.from_yaml(path, ["num_groups=9"])


def test_invalid_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("hidden_size: 64\nnum_layers: [3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:\d+: invalid YAML"):
        AlbertConfig.from_yaml(path)


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    """PyYAML alone keeps the second value silently; the first is the one a reader sees."""
    path = tmp_path / "twice.yaml"
    path.write_text("hidden_size: 64\nnum_layers: 3\nhidden_size: 128\n")
    with pytest.raises(ConfigError, match=r"twice.yaml:3: invalid YAML \(key 'hidden_size' "
                                          r"is given twice \(first on line 1\)"):
        AlbertConfig.from_yaml(path)
    # The same key in two different mappings is not a repeat.
    path.write_text("train: {steps: 1}\neval: {steps: 2}\n")
    assert load_yaml_mapping(path) == {"train": {"steps": 1}, "eval": {"steps": 2}}


def test_yaml_top_level_must_be_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="list.yaml: the top level must be a mapping"):
        AlbertConfig.from_yaml(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        AlbertConfig.from_yaml(tmp_path / "absent.yaml")


def test_apply_overrides_nested_and_malformed():
    result = apply_overrides({"model": {"hidden_size": 8}}, ["model.num_layers=2", "lr=1e-3"])
    assert result == {"model": {"hidden_size": 8, "num_layers": 2}, "lr": 1e-3}
    with pytest.raises(ConfigError, match="must look like"):
        apply_overrides({}, ["num_layers"])
    with pytest.raises(ConfigError, match="'lr' is a value, not a section"):
        apply_overrides({"lr": 1.0}, ["lr.x=1"])


# The released albert_base v2 config, field for field.
ORIGINAL_BASE_V2 = {
    "attention_probs_dropout_prob": 0, "hidden_act": "gelu", "hidden_dropout_prob": 0,
    "embedding_size": 128, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "max_position_embeddings": 512, "num_attention_heads": 12,
    "num_hidden_layers": 12, "num_hidden_groups": 1, "net_structure_type": 0, "gap_size": 0,
    "num_memory_blocks": 0, "inner_group_num": 1, "down_scale_factor": 1,
    "type_vocab_size": 2, "vocab_size": 30000}


def test_setting_differences_name_each_changed_leaf_by_its_dotted_path():
    old = {"optimizer": {"learning_rate": 0.001, "beta_1": 0.9}, "task": "sst2", "gone": 1}
    new = {"optimizer": {"learning_rate": 0.002, "beta_1": 0.9}, "task": "sst2", "added": [1]}
    assert setting_differences(old, new) == ["added: None -> [1]", "gone: 1 -> None",
                                             "optimizer.learning_rate: 0.001 -> 0.002"]
    assert setting_differences(old, old) == []
    assert setting_differences({"a": {"b": 1}}, {"a": 1}) == ["a: {'b': 1} -> 1"]


def test_original_albert_config_json(tmp_path):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(ORIGINAL_BASE_V2))
    config = read_original_config(path)
    assert config == load_preset("albert_base")
    # ... and back, as the converter writes it next to an original checkpoint.
    assert to_original_config(config) == ORIGINAL_BASE_V2
    with pytest.raises(ConfigError, match="'gelu_exact' has no original ALBERT name"):
        to_original_config(config.replace(hidden_activation="gelu_exact"))
    assert config.hidden_activation == "gelu_tanh"  # the original "gelu" is the tanh form


def test_original_json_groups_and_errors(tmp_path):
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(dict(ORIGINAL_BASE_V2, num_hidden_groups=4, inner_group_num=2)))
    config = read_original_config(path)
    assert (config.sharing, config.num_groups, config.inner_group_num) == ("all", 4, 2)

    path.write_text(json.dumps(dict(ORIGINAL_BASE_V2, hidden_layers=3)))
    with pytest.raises(ConfigError, match="albert_config.json: unknown key 'hidden_layers'"):
        read_original_config(path)
    path.write_text(json.dumps(dict(ORIGINAL_BASE_V2, hidden_act="tanh")))
    with pytest.raises(ConfigError, match="'hidden_act'"):
        read_original_config(path)
    path.write_text('{"hidden_size": 768,\n "vocab_size": }')
    with pytest.raises(ConfigError, match=r"albert_config.json:2: not valid JSON"):
        read_original_config(path)


def test_every_table_2_preset_and_tiny_loads():
    names = preset_names()
    for name in ("albert_base", "albert_large", "albert_xlarge", "albert_xxlarge",
                 "bert_base", "bert_large", "bert_xlarge", "tiny"):
        assert name in names
        load_preset(name)
    with pytest.raises(ConfigError, match="unknown model preset 'albert_huge'"):
        load_preset("albert_huge")


def test_config_dir_environment_variable(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine.yaml").write_text("num_layers: 2\n")
    monkeypatch.setenv("ALBERT_TF_CONFIG_DIR", str(tmp_path))
    assert preset_names() == ["mine"]
    assert load_preset("mine").num_layers == 2
