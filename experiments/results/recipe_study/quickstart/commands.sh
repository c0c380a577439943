#!/usr/bin/env bash
# The quickstart's levers (README.md beside this file): tiny_cpu.yaml on the quickstart's
# docstrings, with and without BBC News's training texts, at 1,200 and 3,600 steps.
# Run from the repository root after `bash scripts/quickstart.sh` (its corpus, shards, task).
# The corpus of the task-text runs was made by concatenating the docstring corpus and the
# task's train.tsv texts (a regex sentence split), held-out documents from the docstrings
# only; `albert-data corpus --source stdlib-docstrings --task_text quickstart/tasks/bbc-news`
# makes the same kind of corpus (interleaved, its held-out 1 in 20 of both).
set -euo pipefail
B=.venv/bin; o=runs/quickstart_levers; t=$o/task_text
mkdir -p $t/corpus
$B/python - <<'PY'
import csv, re
csv.field_size_limit(10**9)
with open("runs/quickstart_levers/task_text/corpus/bbc_train.txt", "w") as out, \
        open("quickstart/tasks/bbc-news/train.tsv") as f:
    rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
    next(rows)
    for row in rows:
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'])", row[0].strip())
        out.write("\n".join(s for s in sentences if s) + "\n\n")
PY
cat quickstart/corpus/train.txt $t/corpus/bbc_train.txt > $t/corpus/train.txt
$B/albert-data train-spm --input $t/corpus/train.txt --model_prefix $t/spm/albert --vocab_size 1000 --max_sentences 200000
for part in train heldout_sop; do
  input=$t/corpus/train.txt; dupe=3
  if [ $part = heldout_sop ]; then input=quickstart/corpus/heldout.txt; dupe=1; fi
  $B/albert-data build --input $input --spm_model $t/spm/albert.model --output_dir $t/shards/$part \
    --sentence_objective sop --dupe_factor $dupe --max_seq_length 64 --max_predictions_per_seq 10 \
    --num_shards 4 --num_workers 2 --no_progress
done
check=(--override downstream_check.num_seeds=5 --override downstream_check.train_steps=600)
task_text=(--override model.vocab_size=1000 --override "data.train_files=[$t/shards/train/*.tfrecord]"
           --override "data.eval_files=[$t/shards/heldout_sop/*.tfrecord]")
longer=(--override train.train_steps=3600 --override optimizer.learning_rate=0.002
        --override data.dynamic_masking=true)
$B/albert-pretrain --config configs/pretrain/tiny_cpu.yaml --override train.model_dir=$o/task_text_1x \
  "${task_text[@]}" "${check[@]}"
$B/albert-pretrain --config configs/pretrain/tiny_cpu.yaml --override train.model_dir=$o/task_text_x3_lr2 \
  "${task_text[@]}" "${longer[@]}" "${check[@]}"
$B/albert-pretrain --config configs/pretrain/tiny_cpu.yaml --override train.model_dir=$o/docstrings_x3_lr2 \
  "${longer[@]}" --override downstream_check.task_dir=
for run in quickstart/run $o/task_text_1x $o/task_text_x3_lr2 $o/docstrings_x3_lr2; do
  $B/albert-experiment probe $run --tasks_dir quickstart/tasks --output_dir $run
done
