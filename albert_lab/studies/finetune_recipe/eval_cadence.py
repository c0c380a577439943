"""One task fine-tuned from a pretrained and a random start with dev evaluations every
`--every` steps instead of the suite's 200, five seeds each, through the suite's seed loop:
is a start's best checkpoint one the suite's cadence never sees?

    T6=runs/experiments/table6_sentence_objective/small
    python -m albert_lab.studies.finetune_recipe.eval_cadence --pretrained $T6/none \
        --random_config $T6/random_start/model-a4e57ee6/model_config.yaml \
        --spm_model $T6/none/debian-prose-8000-64e3cf2e0a.model \
        --task stsb --data_dir runs/tasks/lee-pairs --every 25 --work runs/eval_cadence \
        --output experiments/results/finetune_recipe/lee_pairs_cadence/summary.json

Writes each start's seed records (`albert_lab.comparison.seed_loop`: dev score, the test
score at the checkpoint dev chose, best step) and their paired difference on test.
"""

from __future__ import annotations

import argparse
import json
import os

from albert_lab.comparison.gain import paired_difference
from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE
from albert_lab.comparison.seed_loop import DEFAULT_SEEDS, fine_tune_seeds
from albert_tf.io.files import atomic_write_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pretrained", required=True, help="the pretraining run folder")
    parser.add_argument("--random_config", required=True, help="its model_config.yaml")
    parser.add_argument("--spm_model", required=True, help="its SentencePiece model")
    parser.add_argument("--task", required=True, help="albert-finetune's task name")
    parser.add_argument("--data_dir", required=True, help="the task folder")
    parser.add_argument("--every", type=int, default=25, help="steps between dev evaluations")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--work", required=True, help="where the fine-tunes run")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    common = [*SMALL_MODEL_RECIPE, f"data.data_dir={args.data_dir}",
              f"data.max_seq_length={args.max_seq_length}",
              f"train.eval_every_steps={args.every}"]
    starts = {"pretrained": [f"model.init_checkpoint={args.pretrained}"],
              "random": ["model.init_checkpoint=", f"model.config={args.random_config}",
                         f"model.spm_model={args.spm_model}"]}
    records = {start: fine_tune_seeds(args.task, [*common, *extra], DEFAULT_SEEDS,
                                      os.path.join(args.work, start))
               for start, extra in starts.items()}
    seeds = [str(seed) for seed in DEFAULT_SEEDS]
    gain = paired_difference([records["pretrained"][seed]["test"] for seed in seeds],
                             [records["random"][seed]["test"] for seed in seeds])
    summary = {"recipe": SMALL_MODEL, "eval_every_steps": args.every, "task": args.task,
               "data_dir": args.data_dir, "pretrained": args.pretrained,
               "seeds": records, "test_gain": gain}
    atomic_write_bytes(args.output, json.dumps(summary, indent=1).encode())
    print(json.dumps(gain))


if __name__ == "__main__":
    main()
