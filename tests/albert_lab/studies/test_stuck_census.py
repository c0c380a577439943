"""The census of stuck fine-tunes by model shape (`python -m
albert_lab.studies.finetune_recipe.stuck_census --shapes`), on result files written by hand."""

import json

import pytest

from albert_lab.studies.finetune_recipe import stuck_census


@pytest.fixture(scope="module")
def census():
    return stuck_census


def seed_run(value, stuck=False):
    return {"metric": "accuracy", "value": value, "test": value - 0.01, "stuck": stuck}


def model(hidden, layers):
    return {"hidden_size": hidden, "num_layers": layers, "embedding_size": 16}


def table_report(recipe, variant_model, random_model, stuck_seed=None):
    def downstream(offset):
        return {"bbc-news": {"settings": {"recipe": recipe}, "seeds": {
            str(seed): seed_run(0.5 + offset + seed / 100, stuck=seed == stuck_seed)
            for seed in (1, 2)}}}
    return {"variants": [{"name": "a", "settings": {"model": variant_model},
                          "downstream": downstream(0.2)}],
            "random_start": {"name": "random_start", "model": random_model,
                             "downstream": downstream(0.0)}}


def suite_report(corrected, offset=0.0):
    return {"recipe": ["optimizer.learning_rate=5e-4",
                       f"optimizer.bias_correction={'true' if corrected else 'false'}"],
            "seeds": [1, 2, 3],
            "tasks": {"rotten-tomatoes": {"seeds": {
                start: {str(seed): seed_run(0.7 + offset + seed / 100) for seed in (1, 2, 3)}
                for start in ("pretrained", "random")}}}}


def write(path, record):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


@pytest.fixture
def results(tmp_path):
    write(tmp_path / "table5_sharing" / "small" / "results.json",
          table_report("small_model_v2", model(64, 2), model(64, 2), stuck_seed=2))
    # Made before the correction: left out of the shape view.
    write(tmp_path / "table5_sharing" / "mini" / "results.json",
          table_report("small_model", model(256, 12), model(256, 12)))
    for folder, corrected in (("grid/h128_l4", True), ("levers/old", False)):
        write(tmp_path / folder / "pretraining.json", {"hidden_size": 128, "num_layers": 4})
        write(tmp_path / folder / "downstream.json", suite_report(corrected, 0.05))
    # A second report reading the same runs again (a lever sharing a random start).
    write(tmp_path / "levers" / "again" / "pretraining.json",
          {"hidden_size": 128, "num_layers": 4})
    write(tmp_path / "levers" / "again" / "downstream.json", suite_report(True, 0.05))
    return tmp_path


def test_shapes_count_each_corrected_fine_tune_once_by_shape_and_start(census, results):
    runs = census.shaped_runs({}, str(results))
    rows = {(row["hidden_size"], row["num_layers"], row["start"]): row
            for row in census.shape_table(runs)}
    assert len(rows) == 18  # the nine target shapes, two starts each, nothing else here
    assert rows[64, 2, "pretrained"]["fine_tunes"] == 2
    assert rows[64, 2, "pretrained"]["stuck"] == 1
    assert rows[64, 2, "random"]["stuck"] == 1
    assert rows[128, 4, "random"]["fine_tunes"] == 3  # read twice, counted once
    assert rows[128, 4, "random"]["tasks"] == ["rotten-tomatoes"]
    assert rows[256, 12, "pretrained"]["fine_tunes"] == 0  # only the uncorrected mini run
    summary = census.shape_markdown(list(rows.values())).splitlines()[-1]
    assert summary == "Of the nine shapes, 2 have fine-tunes and 2 have both starts fine-tuned."


def test_a_shape_outside_the_nine_is_listed_but_not_counted_as_one(census, tmp_path):
    write(tmp_path / "table8_width" / "small" / "results.json",
          table_report("small_model_v2", model(32, 3), model(32, 3)))
    rows = census.shape_table(census.shaped_runs({}, str(tmp_path)))
    extra = [row for row in rows if (row["hidden_size"], row["num_layers"]) == (32, 3)]
    assert [row["target"] for row in extra] == [False, False]
    assert census.shape_markdown(rows).endswith("0 have both starts fine-tuned.")


def test_the_stuck_section_is_put_before_the_verdicts_once_and_replaced_when_remade(census):
    report = "# Table\n\n## Downstream\n\nrows\n\n## Verdicts\n\nclaims\n"
    first = census.with_stuck_section(report, "2 of 10 stuck")
    assert first == ("# Table\n\n## Downstream\n\nrows\n\n## Stuck fine-tunes\n\n"
                     "2 of 10 stuck\n\n## Verdicts\n\nclaims\n")
    again = census.with_stuck_section(first, "2 of 10 stuck; recipe v4 in use")
    assert again == first.replace("2 of 10 stuck", "2 of 10 stuck; recipe v4 in use")
    assert census.with_stuck_section(first, "") == first
    last = census.with_stuck_section("# Table\n\n## Stuck fine-tunes\n\nold\n", "new")
    assert last == "# Table\n\n## Stuck fine-tunes\n\nnew\n\n"
    assert census.with_stuck_section("# Table\n", "new") == (
        "# Table\n## Stuck fine-tunes\n\nnew\n\n")
