#!/usr/bin/env bash
# The fine-tuning recipe study on the quickstart's run (scripts/quickstart.sh made
# quickstart/run: H 64, E 32, 4 all-shared layers, sequences of 64) and the four suite tasks
# (albert-data task --source bbc-news|rotten-tomatoes|fine-foods|lee-pairs --output runs/tasks/<name>):
# the recipe in use (small_model_v2: Adam with bias correction) and, as a suite of its own,
# the same recipe without bias correction (= the earlier small_model recipe), five seeds each.
set -euo pipefail
cd "$(dirname "$0")/../../.."
B=.venv/bin
$B/albert-experiment downstream quickstart/run --tasks_dir runs/tasks
$B/albert-experiment downstream quickstart/run --tasks_dir runs/tasks --override optimizer.bias_correction=false
# The quickstart's own check (BBC News, 300 steps, warm-up 30) from the quickstart run, with
# and without bias correction, seeds 1-3, then where each run sits (stuck_anatomy.py).
for correction in false true; do
  for seed in 1 2 3; do
    $B/albert-finetune --task classify --data_dir quickstart/tasks/bbc-news --init_checkpoint quickstart/run \
      --override optimizer.learning_rate=5e-4 --override optimizer.warmup_steps=30 \
      --override train.global_batch_size=32 --override train.train_steps=300 \
      --override train.eval_every_steps=300 --override train.verbose=0 \
      --override model.classifier_dropout=0.1 --override data.max_seq_length=64 \
      --override optimizer.bias_correction=$correction --override train.seed=$seed \
      --model_dir runs/check_recipe/bias_correction_$correction/seed$seed
  done
done
$B/python -m albert_lab.studies.finetune_recipe.stuck_anatomy runs/check_recipe \
  --output experiments/results/finetune_recipe/anatomy_check.json
