#!/usr/bin/env bash
# tiny_cpu on the whole Debian prose corpus (8,000 pieces, sequences of 128, dupe factor 1:
# 2,400 steps x 64 read 0.79 passes, so no example is seen twice), then the downstream suite.
# The SentencePiece model is the one trained on the corpus's first 10 MB for prose_8k.
set -euo pipefail
cd "$(dirname "$0")/../../../.."; B=.venv/bin; o=runs/prose_full
mkdir -p $o
[ -f runs/prose/spm/albert.model ] || { $B/albert-data corpus --source debian-prose --output runs/prose/corpus/train.txt --heldout_output runs/prose/corpus/heldout.txt --heldout_every 20 --max_mb 10 && $B/albert-data train-spm --input runs/prose/corpus/train.txt --model_prefix runs/prose/spm/albert --vocab_size 8000 --max_sentences 300000; }
[ -f $o/corpus/train.txt ] || $B/albert-data corpus --source debian-prose --output $o/corpus/train.txt --heldout_output $o/corpus/heldout.txt --heldout_every 50
[ -f $o/shards/train/manifest.json ] || $B/albert-data build --input $o/corpus/train.txt --spm_model runs/prose/spm/albert.model --output_dir $o/shards/train --sentence_objective sop --dupe_factor 1 --max_seq_length 128 --max_predictions_per_seq 20 --num_workers 2 --no_progress
[ -f $o/shards/heldout/manifest.json ] || $B/albert-data build --input $o/corpus/heldout.txt --spm_model runs/prose/spm/albert.model --output_dir $o/shards/heldout --sentence_objective sop --dupe_factor 1 --max_seq_length 128 --max_predictions_per_seq 20 --num_workers 2 --no_progress
$B/albert-pretrain --config configs/pretrain/tiny_cpu.yaml --override model.vocab_size=8000 \
  --override "data.train_files=[$o/shards/train/*.tfrecord]" --override "data.eval_files=[$o/shards/heldout/*.tfrecord]" \
  --override data.max_seq_length=128 --override data.max_predictions_per_seq=20 --override model.max_position_embeddings=128 \
  --override train.model_dir=$o/run --override train.train_steps=2400 --override train.steps_per_epoch=400
# runs/tasks: albert-data task --source bbc-news|rotten-tomatoes|fine-foods|lee-pairs --output runs/tasks/<name>
$B/albert-experiment downstream $o/run --tasks_dir runs/tasks
