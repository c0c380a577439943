"""Fine-tuning tasks: readers for GLUE, SQuAD and RACE files, feature conversion, metrics,
post-processing and leaderboard prediction files."""
