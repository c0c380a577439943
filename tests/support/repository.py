"""Where the repository is, for tests that read its configs, results or source."""

import os

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
