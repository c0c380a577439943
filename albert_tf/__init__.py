"""albert-tf: ALBERT (Lan et al., 2019) in TensorFlow 2 / tf_keras.

The names below are imported on first use, so `import albert_tf.text` (the TensorFlow-free
bottom layer the data-prep workers use) loads nothing else of the package.
"""

__version__ = "0.1.0"
__all__ = ["AlbertConfig", "ConfigError", "__version__"]


def __getattr__(name):
    if name in ("AlbertConfig", "ConfigError"):
        from albert_tf import config

        return getattr(config, name)
    raise AttributeError(f"module 'albert_tf' has no attribute '{name}'")
