"""Console entry points: thin wrappers that parse flags and call library code."""
