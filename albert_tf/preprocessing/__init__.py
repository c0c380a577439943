"""In-graph text preprocessing for ALBERT: raw strings -> normalized text -> SentencePiece ids
-> packed model inputs, as tf_keras layers built on tensorflow-text ops.

The layers give the ids the Python tokenizer (`albert_tf.tokenization.AlbertTokenizer`) gives,
so a SavedModel (or a `tf.data` pipeline) can take raw text. They run on the host: the
tensorflow-text ops cannot be compiled by XLA, so keep them outside `jit_compile` functions.
"""

from albert_tf.preprocessing.graph_tokenizer import AlbertTextTokenizer
from albert_tf.preprocessing.packing import AlbertInputPacker

__all__ = ["AlbertInputPacker", "AlbertTextTokenizer"]
