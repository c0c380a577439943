"""Pretraining runs: the run configuration, `model.fit` with its callbacks, resume, evaluation."""
