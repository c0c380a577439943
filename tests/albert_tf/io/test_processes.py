"""Child Python processes do not import from the folder they start in."""

import multiprocessing
import os
import subprocess
import sys

from albert_tf.io.processes import python_module_command, safe_import_path


def test_a_module_planted_in_the_working_folder_is_not_imported(tmp_path):
    (tmp_path / "planted.py").write_text("print('the planted module ran')")
    plain = subprocess.run([sys.executable, "-m", "planted"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert "the planted module ran" in plain.stdout  # what -m alone does
    safe = subprocess.run(python_module_command("planted"), cwd=tmp_path,
                          capture_output=True, text=True)
    assert safe.returncode != 0 and "No module named planted" in safe.stderr


def test_spawned_workers_start_with_the_safe_path_and_the_variable_is_restored():
    before = os.environ.get("PYTHONSAFEPATH")
    with safe_import_path():
        pool = multiprocessing.get_context("spawn").Pool(1)
    with pool:
        assert pool.apply(eval, ("__import__('sys').flags.safe_path",)) is True
    assert os.environ.get("PYTHONSAFEPATH") == before
