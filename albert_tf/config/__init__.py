"""Settings, without TensorFlow: every config dataclass of albert-tf and its YAML reader, one
module a concern, each readable by every other layer of the package.

    schema              the framework: dataclasses from mappings, overrides, `ConfigError`
    model               `AlbertConfig`, the paper's V, E, H, L, sharing and groups
    masking             `MaskingRecipe`: how the masked-LM objective chooses and replaces pieces
    presets             named model sizes (`yaml/models/`; `yaml` is a link to `configs/`)
    optimizer           `OptimizerConfig`: LAMB or AdamW, warm-up and polynomial decay
    distribution        `DistributionConfig`: which devices a run uses
    precision           the precision policies (applied with TensorFlow, imported on use)
    loop                `TrainingLoopConfig`: what both runs' `model.fit` loops share
    pretraining         `PretrainConfig`: a pretraining run's file, with its sections
    finetuning          `FinetuneConfig`: a fine-tuning run's file, the task names
    checkpoint_formats  the checkpoint layouts a run can start from
    run_folder          the layout of a run folder: what is written where
"""

from albert_tf.config.model import (
    SENTENCE_OBJECTIVES,
    SENTENCE_POOLINGS,
    SHARING_STRATEGIES,
    AlbertConfig,
)
from albert_tf.config.schema import ConfigError

__all__ = ["SENTENCE_OBJECTIVES", "SENTENCE_POOLINGS", "SHARING_STRATEGIES", "AlbertConfig",
           "ConfigError"]
