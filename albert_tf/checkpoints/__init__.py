"""Checkpoints in and out: the original TF1 layout, Model Garden, Hugging Face, our folders.

All conversions pass through the original ALBERT variable names (`original.py`), which name
every group and inner group; each other format maps its names onto them in its own module.
"""

__all__ = ["CheckpointError"]


def __getattr__(name):
    # Imported on first use: `albert_tf.checkpoints.formats` is read by the run configs,
    # which must not load TensorFlow.
    if name == "CheckpointError":
        from albert_tf.checkpoints.reading import CheckpointError
        return CheckpointError
    raise AttributeError(f"module 'albert_tf.checkpoints' has no attribute '{name}'")
