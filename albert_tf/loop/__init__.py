"""What the two runs' `model.fit` loops (pretraining and fine-tuning) share, below both:

    distribute       the `tf.distribute` strategy a run names, XLA and batch checks
    optimization     LAMB and AdamW with warm-up and polynomial decay
    backup           step-based backup, and resuming a run after a crash
    step_callbacks   checkpoints named by step; TensorBoard scalars Keras does not log
"""
