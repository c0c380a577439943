"""Console entry points: thin wrappers that parse flags and call library code.

Each hides TensorFlow's start-up chatter unless given `--verbose`
(`albert_tf.io.console`)."""
