"""Replaying fine-tunes under a shorter patience (`albert_lab.studies.finetune_recipe.patience`),
on dev histories written by hand."""

import json

from albert_lab.studies.finetune_recipe import patience


def history(*values):
    return [{"step": 200 * (index + 1), "dev": {"accuracy": value}}
            for index, value in enumerate(values)]


def test_a_replay_keeps_the_best_so_far_and_stops_after_patience_evaluations():
    # Best at 400; 600 ties it (not better), 800 is lower: two behind at 800.
    runs = history(0.5, 0.7, 0.7, 0.6, 0.8, 0.6, 0.6, 0.6)
    assert patience.replay(runs, "accuracy", 1) == (400, 600)
    assert patience.replay(runs, "accuracy", 2) == (400, 800)
    assert patience.replay(runs, "accuracy", 3) == (1000, 1600)  # 0.8 at 1000, three behind
    assert patience.replay(history(0.1, 0.2, 0.3), "accuracy", 2) == (600, 600)  # never stops


def test_the_table_counts_kept_checkpoints_and_saved_steps(tmp_path):
    for seed, values, best in ((1, (0.5, 0.7, 0.6, 0.6, 0.6), 400),
                               (2, (0.5, 0.6, 0.6, 0.7, 0.6, 0.6, 0.6), 800)):
        run = tmp_path / "bbc-news-0123abcd" / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "eval_history.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in history(*values)))
        (run / "best.json").write_text(json.dumps({"step": best, "metric": "accuracy"}))
    runs = patience.read_runs([str(tmp_path)], "random")
    assert [(run["seed"], run["start"], run["task"]) for run in runs] == [
        (1, "random", "bbc-news"), (2, "random", "bbc-news")]
    text = patience.patience_markdown(runs, [1])
    # Patience 1: seed 1 keeps 400 and stops at 600 (400 steps saved of 1,000); seed 2 stops
    # at 600 with 400 (not its 800), saving 800 of 1,400.
    assert "| bbc-news | random | 2 | 7 | 800 | 1400 | 400 (other), 600 |" in text
    assert "Patience 1: the same checkpoint in 1 of 2 runs, 1,200 steps fewer (50%)." in text
