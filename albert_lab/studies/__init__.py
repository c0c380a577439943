"""Studies that ran on top of the library and the comparison, each a module run with
`python -m albert_lab.studies.<name>` from the repository's root; their results are under
`experiments/results/`: `recipe_study` (what small-budget pretraining buys downstream) and
`finetune_recipe` (how the small models are fine-tuned: stuck runs, learning rates,
patience)."""
