"""`albert_tf.io.names`: names read from files stay inside their folder."""

import os

import pytest

from albert_tf.io.names import path_inside, plain_name


@pytest.mark.parametrize("name", ["train", "table-4_e", "a.b"])
def test_a_plain_name_passes(name):
    assert plain_name(name, "--prefix") == name


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "../x", "a\\b", "x\0y", None, 3])
def test_a_name_with_a_path_in_it_is_refused(name):
    with pytest.raises(ValueError, match=r"^--prefix: .* is not a plain file name"):
        plain_name(name, "--prefix")


def test_a_path_inside_the_folder_passes_and_one_out_of_it_is_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    assert path_inside(str(tmp_path), "sub/a.tsv", "f") == os.path.join(str(tmp_path),
                                                                        "sub/a.tsv")
    assert path_inside(str(tmp_path), "sub/../a.tsv", "f").endswith("sub/../a.tsv")
    for name, message in [("../a.tsv", "leads out of"), ("sub/../../a.tsv", "leads out of"),
                          (".", "leads out of"), ("/etc/passwd", "is an absolute path"),
                          ("gs://bucket/a", "is not a path inside"), ("", "is not a path")]:
        with pytest.raises(KeyError, match=f"index.json: weight_map.*{message}"):
            path_inside(str(tmp_path), name, "index.json: weight_map", KeyError)


def test_a_link_that_leads_out_of_the_folder_is_refused(tmp_path):
    inside, outside = tmp_path / "folder", tmp_path / "secret"
    inside.mkdir()
    outside.write_text("x")
    (inside / "link").symlink_to(outside)
    with pytest.raises(ValueError, match="'link' leads out of"):
        path_inside(str(inside), "link", "f")
