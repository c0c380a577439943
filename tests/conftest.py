"""Shared fixtures: tiny configs and built models (TensorFlow on 2 CPU cores is slow), and the
seed of every random draw.

Determinism: before every fixture's setup and every test's call, Python's `random`, numpy's
global generator and tf_keras's initializer seeds are seeded from the fixture's or the
test's name (`seeding.seed_draws`), so no initial weight or data draw depends on which tests
ran before in the same worker. TensorFlow's own global seed is set once, here, before any
test: setting it clears TensorFlow's kernel cache (`tests/support/seeding.py`). A test whose
assertion is a threshold on a random quantity takes the `seed` fixture and draws from it;
`--seeds FIRST:STOP` runs each such test once per seed in that range, which is how
`scripts/check_thresholds.py` measures each threshold's margin over 50 seeds.
"""

import os
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from seeding import seed_draws  # noqa: E402

from albert_tf.config import AlbertConfig  # noqa: E402

DEFAULT_SEED = 0
tf.random.set_seed(DEFAULT_SEED)


def pytest_addoption(parser):
    parser.addoption("--seeds", default=None, metavar="FIRST:STOP",
                     help="run every test that takes the `seed` fixture once per seed in "
                          "range(FIRST, STOP) (default: once, with seed 0)")


def pytest_generate_tests(metafunc):
    seeds = metafunc.config.getoption("--seeds")
    if seeds and _takes_the_seed_fixture(metafunc.definition):
        first, stop = (int(bound) for bound in seeds.split(":"))
        metafunc.parametrize("seed", range(first, stop), indirect=True, scope="module")


def _takes_the_seed_fixture(function) -> bool:
    """Whether test `function` takes the `seed` fixture (not seeds of its own parametrize)."""
    def argnames(marker) -> list[str]:
        names = marker.args[0] if marker.args else marker.kwargs["argnames"]
        return [name.strip() for name in names.split(",")] if isinstance(names, str) else names
    return "seed" in getattr(function, "fixturenames", ()) and not any(
        "seed" in argnames(marker) for marker in function.iter_markers("parametrize"))


def pytest_collection_modifyitems(config, items):
    """With `--seeds`, only the tests that take the seed run (the others do not vary), each
    run's seed a property of its report."""
    if config.getoption("--seeds"):
        kept = [item for item in items if _takes_the_seed_fixture(item)]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
        for item in kept:  # the report names each run's seed (scripts/check_thresholds.py)
            item.user_properties.append(("seed", str(item.callspec.params["seed"])))


@pytest.fixture(scope="session")
def seed(request) -> int:
    """The seed of a test's random draws (initial weights, data): 0, or with `--seeds`
    each seed of the range in turn."""
    return getattr(request, "param", DEFAULT_SEED)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    seed_draws(zlib.crc32(f"fixture {fixturedef.argname}".encode()))
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    seed_draws(zlib.crc32(f"test {item.name}".encode()))
    yield


# Two logical CPU devices for tf.distribute tests; must happen before TensorFlow initializes
# its devices, so here, at collection time, and once for the whole session.
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])

# Tiny but not degenerate: E != H (projection present), several heads, several layers.
TINY = AlbertConfig(vocab_size=97, embedding_size=16, hidden_size=32, num_layers=3,
                    num_attention_heads=4, intermediate_size=64, max_position_embeddings=32,
                    hidden_dropout=0.0, attention_dropout=0.0)


@pytest.fixture(scope="session")
def tiny_config() -> AlbertConfig:
    return TINY


@pytest.fixture(scope="session")
def tiny_encoder(tiny_config):
    """A built tiny all-shared encoder with weights at a realistic scale. Do not mutate."""
    from helpers import randomize_weights

    from albert_tf.models.encoder import AlbertEncoder

    encoder = AlbertEncoder(tiny_config)
    randomize_weights(encoder, seed=0)
    return encoder


@pytest.fixture(scope="session")
def two_cpu_strategy():
    """One MirroredStrategy over the two logical CPUs for every test that needs one.

    Separate MirroredStrategy instances in one process hand out the same collective instance
    keys, so a second instance's all-reduce can meet the first one's in TensorFlow's
    collective executor ("Shape mismatch in the collective instance"); sharing one avoids it.
    """
    devices = [device.name for device in tf.config.list_logical_devices("CPU")][:2]
    assert len(devices) == 2, "two logical CPU devices are set up above"
    return tf.distribute.MirroredStrategy(devices)




@pytest.fixture(scope="session")
def released_style_model(tmp_path_factory):
    """A stand-in for the released `30k-clean.model` (which cannot be downloaded here),
    trained with the flags the ALBERT authors published for it: pad 0, unk 1, no BOS/EOS,
    [CLS]/[SEP]/[MASK] as control symbols, their user-defined symbols, plus "5," as a
    user-defined piece to exercise the original's digit-comma rule."""
    import io

    import sentencepiece as spm
    from helpers import RELEASED_USER_SYMBOLS

    words = ("the cafe deja vu of and in to was he for on as with by his at from that is it an "
             "were which are this be year month").split()
    lines = [" ".join(words[(i * 7 + j) % len(words)] for j in range(9))
             + f" in {1990 + i % 9}, a ({words[i % len(words)]}) \"x\" - \u00a35 \u20ac3."
             for i in range(2000)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=56,
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        user_defined_symbols=RELEASED_USER_SYMBOLS + ["5,"], character_coverage=0.99995,
        hard_vocab_limit=False, minloglevel=2)
    path = tmp_path_factory.mktemp("spm") / "30k-clean.model"
    path.write_bytes(model.getvalue())
    return str(path)


@pytest.fixture
def fine_tunes_here(monkeypatch):
    """`install(scores)`: from then on the seed loops (`albert_lab.comparison.seed_loop`) run
    `scores(task, overrides, metric=None, label=None)` in place of each fine-tune, one at a
    time in this process (a thread stands in for the worker process, so runs finish in the
    order they were queued)."""
    import concurrent.futures

    from albert_lab.comparison import seed_loop

    class InThisProcess:
        def __init__(self, threads=None, runs_per_process=None):
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

        def submit(self, function, *args):
            return self.pool.submit(function, *args)

        def close(self):
            self.pool.shutdown()

    def install(scores):
        monkeypatch.setenv(seed_loop.WORKERS_VARIABLE, "1")
        monkeypatch.setattr(seed_loop, "WorkerProcess", InThisProcess)
        monkeypatch.setattr(seed_loop, "fine_tune_scores", scores)
    return install
