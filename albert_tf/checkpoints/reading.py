"""Reading TensorFlow checkpoints safely: whole files checked, every problem named at once.

Two kinds of checkpoint are read here:

- name-based ones (the original TF1 code's `tf.compat.v1.train.Saver`), whose keys are the
  variable names (`bert/embeddings/word_embeddings`);
- object-based ones (`tf.train.Checkpoint`, Model Garden and our own runs), whose keys are
  paths through the saved object graph (`model/encoder/layer_with_weights-0/...`).
  `trackable_variable_paths` computes those paths for a live Keras object, so a checkpoint can
  be compared with a model before anything is restored into it.

Every read goes through `read_arrays`, which turns TensorFlow's low-level errors on truncated,
corrupted or missing files into a `CheckpointError` naming the file.
"""

from __future__ import annotations

import collections
import os
import re
from typing import Iterable, Mapping

import numpy as np
import tensorflow as tf

from albert_tf.loop.finite import non_finite_message, non_finite_weights

VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_MAX_LISTED = 40  # names listed per kind of problem before "... and N more"
# Keys of training state (optimizer, its slots, counters) that a model restore skips.
_TRAINING_STATE = (r"\.OPTIMIZER_SLOT/", r"(^|/)optimizer/", r"^save_counter(/|$)",
                   r"^global_step$")


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable, or does not fit the model; the message says which
    file and which variables."""


def containing_folder(path: str) -> str:
    """`path` itself if it is a folder, else the folder the file (or prefix) is in."""
    return path if tf.io.gfile.isdir(path) else os.path.dirname(path)


def resolve_checkpoint(path: str, pattern: str = "*.index") -> str:
    """The checkpoint prefix for `path`: a prefix itself (`.../model.ckpt-best`), a `.index`
    file, or a folder holding exactly one checkpoint (or a `checkpoint` state file)."""
    path = os.fspath(path)
    if path.endswith(".index"):
        path = path[: -len(".index")]
    if tf.io.gfile.exists(path + ".index"):
        return path
    if tf.io.gfile.isdir(path):
        # The state file may hold absolute paths from where the folder was written, so only
        # its checkpoint's name is used, looked up in this folder.
        state = tf.train.get_checkpoint_state(path)
        if state and state.model_checkpoint_path:
            named = os.path.join(path, os.path.basename(state.model_checkpoint_path))
            if tf.io.gfile.exists(named + ".index"):
                return named
        indexes = sorted(tf.io.gfile.glob(os.path.join(path, pattern)))
        if len(indexes) == 1:
            return indexes[0][: -len(".index")]
        if not indexes:
            raise CheckpointError(f"{path}: no checkpoint in this folder (no {pattern} file)")
        listed = ", ".join(os.path.basename(name) for name in indexes)
        raise CheckpointError(f"{path}: several checkpoints ({listed}); pass the prefix of "
                              f"one, e.g. {indexes[-1][: -len('.index')]}")
    raise _no_checkpoint(path)


def _no_checkpoint(prefix: str) -> CheckpointError:
    return CheckpointError(f"{prefix}: no such checkpoint ({prefix}.index does not exist)")


def _reader(prefix: str):
    if not tf.io.gfile.exists(prefix + ".index"):
        raise _no_checkpoint(prefix)
    try:
        # Not tf.train.load_checkpoint: it first asks whether the prefix is a folder, which
        # some filesystems (ram://) answer yes for any prefix of a file name.
        return tf.compat.v1.train.NewCheckpointReader(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise CheckpointError(f"{prefix}: cannot read the checkpoint index "
                              f"({_first_line(error)}); the .index file is truncated or "
                              f"corrupted, or not a TensorFlow checkpoint") from None


def _first_line(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error)
    return message.strip().splitlines()[0] if message.strip() else type(error).__name__


def checkpoint_shapes(prefix: str) -> dict[str, tuple[int, ...]]:
    """{key: shape} of every tensor in the checkpoint (the object graph excluded)."""
    shapes = _reader(prefix).get_variable_to_shape_map()
    return {key: tuple(shape) for key, shape in shapes.items() if key != OBJECT_GRAPH_KEY}


def read_arrays(prefix: str, keys: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """{key: array} for `keys` (default: all); each tensor's checksum is verified as it is
    read, so a truncated or corrupted data file fails here, naming the tensor."""
    reader = _reader(prefix)
    if keys is None:
        keys = [key for key in reader.get_variable_to_shape_map() if key != OBJECT_GRAPH_KEY]
    arrays = {}
    for key in keys:
        try:
            arrays[key] = np.asarray(reader.get_tensor(key))
        except Exception as error:  # OpError, or IndexError on a short read
            raise CheckpointError(
                f"{prefix}: cannot read tensor '{key}' ({_first_line(error)}); the "
                f"checkpoint's data file is truncated or corrupted") from None
    return arrays


def check_finite(arrays: Mapping[str, np.ndarray], source: str) -> None:
    """Raises a CheckpointError naming every array of `arrays` (weights about to be loaded)
    that holds NaN or infinity."""
    found = non_finite_weights({_display(name): array for name, array in arrays.items()})
    if found:
        raise CheckpointError(non_finite_message(source, found))


def check_variables(expected: Mapping[str, tuple[int, ...]],
                    found: Mapping[str, tuple[int, ...]], source: str,
                    ignored: Iterable[str] = ()) -> None:
    """Raises a CheckpointError listing every missing, unexpected and mis-shaped variable.

    Args:
        expected: {name: shape} the model needs.
        found: {name: shape} the checkpoint holds.
        source: the checkpoint (or file) named in the message.
        ignored: regular expressions for names the checkpoint may hold that the model does
            not use (optimizer slots, step counters).
    """
    patterns = [re.compile(pattern) for pattern in ignored]
    expected = {_display(name): shape for name, shape in expected.items()}
    found = {_display(name): shape for name, shape in found.items()}
    missing = sorted(name for name in expected if name not in found)
    unexpected = sorted(name for name in found if name not in expected
                        and not any(pattern.search(name) for pattern in patterns))
    misshaped = sorted(f"{name}: checkpoint {list(found[name])}, model {list(shape)}"
                       for name, shape in expected.items()
                       if name in found and tuple(found[name]) != tuple(shape))
    problems = []
    for title, names in (("missing", missing), ("unexpected", unexpected),
                         ("wrong shape", misshaped)):
        if names:
            listed = names[:_MAX_LISTED]
            more = f"\n    ... and {len(names) - len(listed)} more" if len(names) > len(listed) \
                else ""
            problems.append(f"  {title} ({len(names)}):\n    " + "\n    ".join(listed) + more)
    if problems:
        raise CheckpointError(f"{source} does not fit the model; nothing was loaded.\n"
                              + "\n".join(problems))


def _display(key: str) -> str:
    """An object-checkpoint key without its constant suffix, for messages."""
    return key[: -len(VARIABLE_SUFFIX)] if key.endswith(VARIABLE_SUFFIX) else key


def trackable_variable_paths(root) -> dict[str, tf.Variable]:
    """{checkpoint key: variable} for the variables reachable from `root`, keyed as
    `tf.train.Checkpoint` saves them: the breadth-first path of child names, then
    `/.ATTRIBUTES/VARIABLE_VALUE`. A variable reachable twice is saved once, under the
    shorter path."""
    view = tf.train.TrackableView(root)
    paths: dict[str, tf.Variable] = {}
    seen = {id(root)}
    queue = collections.deque([(root, "")])
    while queue:
        parent, parent_path = queue.popleft()
        for name, child in view.children(parent).items():
            if id(child) in seen:
                continue
            seen.add(id(child))
            path = f"{parent_path}/{name}" if parent_path else name
            if isinstance(child, tf.Variable):
                paths[path + VARIABLE_SUFFIX] = child
            queue.append((child, path))
    return paths


def restore_checked(root, prefix: str, variables: Iterable[tf.Variable],
                    ignored: Iterable[str] = ()) -> None:
    """Restores `variables` (all reachable from `root`) from the object checkpoint `prefix`.

    Before any variable changes, the checkpoint is compared with them: a variable it lacks,
    a tensor of another shape, or a model tensor it holds that `root` does not have (other
    than optimizer slots, step counters, `root`'s other variables, such as metrics, and
    keys matching the regular expressions `ignored`)
    raises a CheckpointError listing them all. Then every tensor is read and checksummed,
    and checked for NaN and infinity, and only then assigned: all or nothing.
    """
    wanted = {id(variable) for variable in variables}
    paths = trackable_variable_paths(root)
    targets = {path: variable for path, variable in paths.items() if id(variable) in wanted}
    if len(targets) != len(wanted):
        raise ValueError("restore_checked: some variables are not reachable from root")
    found = {key: shape for key, shape in checkpoint_shapes(prefix).items()
             if key in targets or key not in paths}
    check_variables({path: tuple(variable.shape) for path, variable in targets.items()},
                    found, prefix, ignored=(*_TRAINING_STATE, *ignored))
    arrays = read_arrays(prefix, targets)
    check_finite(arrays, prefix)
    for path, variable in targets.items():
        variable.assign(arrays[path].astype(variable.dtype.as_numpy_dtype))
