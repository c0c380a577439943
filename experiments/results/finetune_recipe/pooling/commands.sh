#!/usr/bin/env bash
# What the sentence head reads: the pooled [CLS] output (the suite's recipe, small_model_v2)
# against the sequence output's mean over the real pieces (model.pooling=mean), from the
# recipe study's reference run and from its random start, five seeds on the four suite tasks
# (albert-data task --source bbc-news|rotten-tomatoes|fine-foods|lee-pairs --output runs/tasks/<name>).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
B=.venv/bin
# The reference run: tiny_cpu.yaml at H 64 x 4 on the whole Debian prose corpus, 2,400 steps
# (experiments/results/downstream/prose_full_8k/commands.sh makes the corpus and shards).
$B/python -m albert_lab.studies.recipe_study h64_l4 --pretrain_only
# Its pooled-[CLS] suite is experiments/results/recipe_study/shape_grid/h64_l4/downstream.json.
$B/albert-experiment downstream runs/shape_grid/h64_l4/run --tasks_dir runs/tasks \
  --random_records experiments/results/recipe_study/random_starts --override model.pooling=mean
cp runs/shape_grid/h64_l4/run/downstream-d2332be2.json experiments/results/finetune_recipe/pooling/downstream-mean.json
cp runs/shape_grid/h64_l4/run/downstream-d2332be2.md experiments/results/finetune_recipe/pooling/downstream-mean.md
# The head's bias started at the labels' prior, on lee-pairs (runs/tasks_lee holds only it).
$B/albert-experiment downstream runs/shape_grid/h64_l4/run --tasks_dir runs/tasks_lee \
  --random_starts runs/tasks/random_starts \
  --random_records experiments/results/recipe_study/random_starts --override model.head_bias_prior=true
