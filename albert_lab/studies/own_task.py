"""Your own task both ways, on a real task of the suite: the BBC News topics (five classes)
as CSV files, fine-tuned from the quickstart's pretraining run with `albert-finetune` and
with `TextClassifier.fit`, then predicted with `albert-predict`. Writes the figures (no
weights) to experiments/results/own_task/bbc_news.json, which the README and
docs/finetuning.md quote.

    bash scripts/quickstart.sh                # quickstart/run and quickstart/tasks/bbc-news
    python -m albert_lab.studies.own_task     # work in quickstart/own_task/

Both ways use the same recipe: the downstream suite's small-model one (Adam's bias
correction, 5e-4 after 60 warm-up steps, decayed linearly; the head on the mean of the
sequence output; batches of 32; sequences of 64, the run's length), for 1,200 steps. The
command keeps the checkpoint of its best dev evaluation (every 200 steps); `fit` keeps its
last weights and reports dev after each epoch.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time

import numpy as np

from albert_tf.cli.finetune import main as finetune_main
from albert_tf.cli.predict import main as predict_main
from albert_tf.io.files import atomic_write_bytes
from albert_tf.task_data.table_files import read_table

STEPS, BATCH, LENGTH, RATE, WARMUP = 1200, 32, 64, 5e-4, 60
RECIPE = (f"optimizer.learning_rate={RATE}", "optimizer.bias_correction=true",
          f"optimizer.warmup_steps={WARMUP}", f"train.global_batch_size={BATCH}",
          f"train.train_steps={STEPS}", "train.eval_every_steps=200", "train.verbose=0",
          "model.classifier_dropout=0.1", "model.pooling=mean", f"data.max_seq_length={LENGTH}")


def write_csv_files(task_dir: str, work: str) -> dict[str, str]:
    """The task folder's TSVs as the CSV files a user would have: `text`, `topic` (the test
    split joined with its labels, kept apart in the folder)."""
    os.makedirs(work, exist_ok=True)
    test_labels = {row.values["index"]: row.values["label"]
                   for row in read_table(os.path.join(task_dir, "test_labels.tsv"))}
    files = {}
    for split in ("train", "dev", "test"):
        files[split] = os.path.join(work, f"{split}.csv")
        with open(files[split], "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["text", "topic"])
            for row in read_table(os.path.join(task_dir, f"{split}.tsv")):
                label = test_labels[row.values["index"]] if split == "test" \
                    else row.values["label"]
                writer.writerow([row.values["sentence"], label])
    return files


def columns(path: str) -> tuple[list[str], list[str]]:
    rows = [row.values for row in read_table(path)]
    return [row["text"] for row in rows], [row["topic"] for row in rows]


def the_command(files: dict[str, str], start: str, work: str) -> dict:
    """albert-finetune on the CSV files, then albert-predict over the test file."""
    run = os.path.join(work, "run")
    began = time.time()
    code = finetune_main(["--task", "classify", "--train_file", files["train"], "--dev_file",
                          files["dev"], "--test_file", files["test"], "--text_column", "text",
                          "--label_column", "topic", "--init_checkpoint", start,
                          "--model_dir", run, *[item for override in RECIPE
                                                for item in ("--override", override)]])
    assert code == 0, f"albert-finetune exited {code}"
    seconds = time.time() - began
    predicted = os.path.join(work, "test_predicted.csv")
    assert predict_main(["--model_dir", run, "--input", files["test"], "--output", predicted,
                         "--no_progress"]) == 0
    rows = [row.values for row in read_table(predicted)]
    results = json.load(open(os.path.join(run, "eval_results.json"), encoding="utf-8"))
    return {"dev_accuracy": round(results["dev_metrics"]["dev"]["accuracy"], 4),
            "test_accuracy": round(results["test_metrics"]["test"]["accuracy"], 4),
            "best_step": results["best_step"],
            "albert_predict_test_accuracy": round(float(np.mean(
                [row["prediction"] == row["topic"] for row in rows])), 4),
            "fine_tune_seconds": round(seconds, 1)}


def the_python_way(files: dict[str, str], start: str, work: str) -> dict:
    """TextClassifier.from_checkpoint + fit on the same files; saved and reloaded."""
    import tf_keras

    from albert_tf.loop.optimization import AdamWeightDecay, WarmupPolynomialDecay
    from albert_tf.text_models import TextClassifier

    train, dev, test = (columns(files[split]) for split in ("train", "dev", "test"))
    labels = sorted(set(train[1]))
    tf_keras.utils.set_random_seed(1)
    classifier = TextClassifier.from_checkpoint(start, labels=labels, pooling="mean",
                                                max_seq_length=LENGTH)
    epochs = round(STEPS / -(-len(train[0]) // BATCH))
    steps = epochs * -(-len(train[0]) // BATCH)
    classifier.compile(AdamWeightDecay(WarmupPolynomialDecay(RATE, WARMUP, steps),
                                       bias_correction=True, global_clipnorm=1.0))
    began = time.time()
    history = classifier.fit(*train, batch_size=BATCH, epochs=epochs, validation_data=dev,
                             verbose=0)
    seconds = time.time() - began
    test_scores = classifier.evaluate(*test, return_dict=True, verbose=0)
    path = os.path.join(work, "bbc_news.keras")
    classifier.save(path)
    reloaded = tf_keras.models.load_model(path)
    difference = np.abs(reloaded.predict(test[0], verbose=0)["probabilities"]
                        - classifier.predict(test[0], verbose=0)["probabilities"]).max()
    return {"epochs": epochs, "steps": steps,
            "dev_accuracy_last_epoch": round(history.history["val_accuracy"][-1], 4),
            "dev_accuracy_best_epoch": round(max(history.history["val_accuracy"]), 4),
            "test_accuracy": round(test_scores["accuracy"], 4),
            "reloaded_max_probability_difference": float(difference),
            "fit_seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", default="quickstart/run", help="the pretraining run")
    parser.add_argument("--task_dir", default="quickstart/tasks/bbc-news")
    parser.add_argument("--work", default="quickstart/own_task")
    parser.add_argument("--output", default="experiments/results/own_task/bbc_news.json")
    args = parser.parse_args()
    files = write_csv_files(args.task_dir, args.work)
    test_topics = columns(files["test"])[1]
    majority = max(test_topics.count(topic) for topic in set(test_topics)) / len(test_topics)
    record = {
        "made_by": "python -m albert_lab.studies.own_task (after bash scripts/quickstart.sh)",
        "task": "bbc-news", "start": args.start,
        "rows": {split: len(columns(path)[0]) for split, path in files.items()},
        "recipe": list(RECIPE), "test_majority_class": round(majority, 4),
        "albert_finetune": the_command(files, args.start, args.work),
        "text_classifier_fit": the_python_way(files, args.start, args.work)}
    atomic_write_bytes(args.output, (json.dumps(record, indent=1) + "\n").encode())
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
