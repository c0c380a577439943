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
