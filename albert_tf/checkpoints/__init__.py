"""Checkpoints in and out: the original TF1 layout, Model Garden, Hugging Face, our folders.

All conversions pass through the original ALBERT variable names (`original.py`), which name
every group and inner group; each other format maps its names onto them in its own module.
"""

from albert_tf.checkpoints.reading import CheckpointError

__all__ = ["CheckpointError"]
