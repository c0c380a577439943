"""Checkpoints in and out: the original TF1 layout, Model Garden, Hugging Face, keras-hub, our
folders.

All conversions pass through the original ALBERT variable names (`original.py`), which name
every group and inner group; each other format maps its names onto them in its own module.

    from albert_tf.checkpoints import load_model, save_model, load_encoder, load_pretrainer

The names below are imported on first use: `albert_tf.config.checkpoint_formats` (read by the run
configs) must not load TensorFlow.
"""

_EXPORTS = {
    "CheckpointError": "albert_tf.checkpoints.reading",
    "load_model": "albert_tf.checkpoints.convert",
    "save_model": "albert_tf.checkpoints.convert",
    "read_model_config": "albert_tf.checkpoints.convert",
    "load_encoder": "albert_tf.checkpoints.model_folder",
    "load_pretrainer": "albert_tf.checkpoints.model_folder",
    "save_model_folder": "albert_tf.checkpoints.model_folder",
    "load_original": "albert_tf.checkpoints.original",
    "save_original": "albert_tf.checkpoints.original",
    "copy_weights": "albert_tf.checkpoints.transfer",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert_tf.checkpoints' has no attribute '{name}'")
