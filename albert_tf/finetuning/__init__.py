"""Fine-tuning ALBERT on GLUE, SQuAD and RACE: configuration, cached features, the runner."""
