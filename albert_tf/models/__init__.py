"""The Keras models: the encoder, the pretrainer with its heads, and the fine-tuning task
models (each takes an encoder object or a config).

    from albert_tf.models import AlbertEncoder, AlbertPretrainer, AlbertClassifier
"""

from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder
from albert_tf.models.pretrainer import AlbertPretrainer, built_pretrainer
from albert_tf.models.task_models import (
    AlbertAnswerabilitySpanLabeler,
    AlbertClassifier,
    AlbertMultipleChoice,
    AlbertSpanLabeler,
)

__all__ = ["INPUT_NAMES", "AlbertEncoder", "AlbertPretrainer", "built_pretrainer",
           "AlbertClassifier", "AlbertSpanLabeler", "AlbertAnswerabilitySpanLabeler",
           "AlbertMultipleChoice"]
