"""The masking recipe has one home: `albert_tf.config.masking.MaskingRecipe` declares its fields
and their defaults, and the writer's options, a run's `data` section and the reader's settings
take it from there rather than declaring the fields again."""

from __future__ import annotations

import ast
import dataclasses
import os

from repository import REPOSITORY

from albert_tf.config.masking import MaskingRecipe
from albert_tf.config.pretraining import DataConfig
from albert_tf.data.pretraining import PretrainingDataConfig
from albert_tf.text.options import DataPrepOptions

RECIPE_FIELDS = {field.name for field in dataclasses.fields(MaskingRecipe)}
HOME = os.path.join("albert_tf", "config", "masking.py")


def _declared_fields(path: str) -> list[tuple[str, str, int]]:
    """(class, field, line) of every annotated class attribute in the module at `path`."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return [(node.name, statement.target.id, statement.lineno)
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for statement in node.body
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)]


def test_the_recipe_fields_are_declared_once_in_the_source():
    assert {"masked_lm_prob", "ngram", "favor_shorter_ngram", "whole_word_mask",
            "mask_token_rate", "random_token_rate", "random_from_ordinary"} <= RECIPE_FIELDS
    declared = []
    for package in ("albert_tf", "data_prep", "albert_lab"):
        for folder, _, names in os.walk(os.path.join(REPOSITORY, package)):
            for name in names:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    declared += [(os.path.relpath(path, REPOSITORY), *found)
                                 for found in _declared_fields(path) if found[1] in RECIPE_FIELDS]
    assert sorted({path for path, *_ in declared}) == [HOME], declared
    assert len(declared) == len(RECIPE_FIELDS)


def test_the_writer_the_run_and_the_reader_take_the_recipe_with_its_defaults():
    for settings in (DataPrepOptions, DataConfig):
        assert issubclass(settings, MaskingRecipe), settings
    masking = {field.name: field for field in dataclasses.fields(PretrainingDataConfig)}
    assert masking["masking"].type in (MaskingRecipe, "MaskingRecipe")
    defaults = dataclasses.asdict(MaskingRecipe())
    assert defaults["masked_lm_prob"] == 0.15 and defaults["ngram"] == 3  # the paper's
    for recipe in (DataPrepOptions(), DataConfig(),
                   PretrainingDataConfig(file_patterns=["x"], max_seq_length=8,
                                         max_predictions_per_seq=2,
                                         global_batch_size=2).masking):
        assert {name: getattr(recipe, name) for name in RECIPE_FIELDS} == defaults
