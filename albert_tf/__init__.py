"""albert-tf: ALBERT (Lan et al., 2019) in TensorFlow 2 / tf_keras."""

from albert_tf.config import AlbertConfig, ConfigError

__version__ = "0.1.0"
__all__ = ["AlbertConfig", "ConfigError", "__version__"]
