"""Where a stuck fine-tune sits: for each finished fine-tuning run under the given folders,
its dev evaluations, and on the dev split at the checkpoint dev chose, the spread of the
pooled output across examples (`albert_tf.training.collapse.spread`: 0 when every example
gets the same vector), the spread of the encoder's token outputs, the share of examples
given the most frequent answer, and the mean probability of the answer given.

    python -m albert_lab.studies.finetune_recipe.stuck_anatomy quickstart/run/downstream* \\
        --output experiments/results/finetune_recipe/anatomy.json

A run that learned nothing but whose pooled outputs still spread apart had its classifier
settle on one class; one whose pooled outputs collapsed lost its encoder's information
first.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def anatomy(run_dir: str) -> dict:
    import tf_keras

    from albert_tf.finetuning.restore import load_finetuned
    from albert_tf.finetuning.runner import SplitPreparer
    from albert_tf.finetuning.task_kinds import get_task
    from albert_tf.models.encoder import INPUT_NAMES
    from albert_tf.tokenization import AlbertTokenizer
    from albert_tf.training.collapse import spread

    tf_keras.backend.clear_session()
    found = load_finetuned(run_dir)
    config = found.config
    task = get_task(config)
    tokenizer = AlbertTokenizer(config.model.spm_model, config.model.lower_case)
    dev = SplitPreparer(task, tokenizer, os.path.join(run_dir, "features"))("dev")
    arrays = dev.arrays
    pooled, tokens, answers, confidence = [], [], [], []
    for begin in range(0, len(arrays["label"]), 64):
        batch = {name: arrays[name][begin:begin + 64] for name in INPUT_NAMES}
        outputs = found.model(batch, training=False)
        pooled.append(np.asarray(outputs["pooled_output"]))
        mask = batch["input_mask"].astype(bool)
        tokens.append(np.asarray(outputs["sequence_output"])[mask])
        if "probabilities" in outputs:
            probabilities = np.asarray(outputs["probabilities"])
            answers.append(probabilities.argmax(-1))
            confidence.append(probabilities.max(-1))
    with open(os.path.join(run_dir, "eval_results.json"), encoding="utf-8") as f:
        result = json.load(f)
    with open(os.path.join(run_dir, "eval_history.jsonl"), encoding="utf-8") as f:
        history = [json.loads(line) for line in f]
    record = {"run": run_dir, "metric": result["metric"],
              "dev": result["dev_metrics"]["dev"][result["metric"]],
              "constant": result["constant_scores"].get("dev"),
              "history": [entry["dev"][result["metric"]] for entry in history],
              "pooled_spread": spread(np.concatenate(pooled)),
              "token_spread": spread(np.concatenate(tokens))}
    if answers:
        given = np.concatenate(answers)
        record["top_answer_share"] = float(np.bincount(given).max() / len(given))
        record["mean_confidence"] = float(np.concatenate(confidence).mean())
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="folders holding fine-tuning runs")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    runs = sorted({os.path.dirname(path) for folder in args.folders for path in glob.glob(
        os.path.join(folder, "**", "eval_results.json"), recursive=True)})
    records = [anatomy(run) for run in runs]
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1)
    print("| run | dev | floor | evaluations | pooled spread | token spread | top answer |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for record in records:
        floor = record["constant"]
        print(f"| {record['run']} | {100 * record['dev']:.1f} | "
              f"{'–' if floor is None else f'{100 * floor:.1f}'} | "
              f"{', '.join(f'{100 * value:.1f}' for value in record['history'])} | "
              f"{record['pooled_spread']:.3f} | {record['token_spread']:.3f} | "
              f"{100 * record.get('top_answer_share', float('nan')):.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
