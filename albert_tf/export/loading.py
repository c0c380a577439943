"""Loading an exported SavedModel, with the error users need when tensorflow-text is missing.

The raw-text signatures run tensorflow-text ops (SentencePiece, trimming), which TensorFlow
only knows once `tensorflow_text` is imported (or, in TF Serving, in a build that links
them). Without them `tf.saved_model.load` fails with "Op type not registered
'SentencepieceOp'"; `load_saved_model` registers them first and explains when it cannot.
"""

from __future__ import annotations

import tensorflow as tf

TEXT_OPS_HINT = (
    "this SavedModel tokenizes in the graph with tensorflow-text ops (SentencepieceOp, "
    "RoundRobin trimming), which must be registered before loading: `pip install "
    "tensorflow-text==<your TensorFlow version>` and `import tensorflow_text` before "
    "tf.saved_model.load; TensorFlow Serving needs a build with the tensorflow-text ops "
    "(e.g. the tensorflow/serving images with TF Text, or a custom op build)")


class ExportError(RuntimeError):
    """An export or a load of an exported SavedModel cannot proceed; the message says why."""


def register_text_ops() -> None:
    """Imports tensorflow_text, which registers its ops with TensorFlow."""
    try:
        import tensorflow_text  # noqa: F401
    except ImportError as error:
        raise ExportError(f"cannot import tensorflow_text ({error}); {TEXT_OPS_HINT}") from None


def load_saved_model(path: str):
    """`tf.saved_model.load(path)` after registering the tensorflow-text ops."""
    register_text_ops()
    try:
        return tf.saved_model.load(path)
    except tf.errors.NotFoundError as error:
        if "Op type not registered" in str(error):
            raise ExportError(f"{path}: {TEXT_OPS_HINT} ({error.message.splitlines()[0]})") \
                from None
        raise
