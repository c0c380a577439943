"""The shards the pretraining tests train on, built once per test process."""

import pytest
from pretraining_runs import build_shards


@pytest.fixture(scope="session")
def shards(tmp_path_factory):
    """SOP training shards, SOP and NSP held-out shards of ordered_documents (vocab 48)."""
    return build_shards(tmp_path_factory.mktemp("training_shards"))
