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
# Random starts of the mini tables' stickiest sizes (Table 10's H 256 at 3 layers, Table 7's
# 12 layers at H 64) on BBC News, seeds 1-3, with and without bias correction (the rest of
# the recipe as small_model_v2, at the quickstart's tokenizer and sequences of 64).
recipe=(--override optimizer.learning_rate=5e-4 --override optimizer.warmup_steps=60
        --override train.global_batch_size=32 --override train.train_steps=600
        --override train.eval_every_steps=200 --override train.verbose=0
        --override model.classifier_dropout=0.1 --override data.max_seq_length=64)
for model in h256_l3 h64_l12; do
  for correction in true false; do
    for seed in 1 2 3; do
      $B/albert-finetune --task classify --data_dir runs/tasks/bbc-news \
        --model_config experiments/results/finetune_recipe/models/$model.yaml \
        --spm_model quickstart/spm/albert.model "${recipe[@]}" \
        --override optimizer.bias_correction=$correction --override train.seed=$seed \
        --model_dir runs/recipe_sizes/$model/bias_correction_$correction/seed$seed
    done
  done
done
