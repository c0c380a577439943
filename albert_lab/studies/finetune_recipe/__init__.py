"""The fine-tuning recipe study's tools (`experiments/results/finetune_recipe/`), each run
with `python -m albert_lab.studies.finetune_recipe.<name>`."""
