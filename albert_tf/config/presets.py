"""Named model presets: the YAML files of `configs/models/` (Table 2 sizes and `tiny`).

Presets are data, not code: each is one YAML file of `AlbertConfig` fields. They are read
from `albert_tf/config/yaml/models/` (a link to the repository's `configs/` that wheels
copy), or from the folder named by the environment variable `ALBERT_TF_CONFIG_DIR` (holding
`models/`).
"""

from __future__ import annotations

import os
import pathlib
from typing import Sequence

from albert_tf.config.model import AlbertConfig, ConfigError

CONFIG_DIR_ENV = "ALBERT_TF_CONFIG_DIR"


def config_dir() -> pathlib.Path:
    """The `configs/` folder: $ALBERT_TF_CONFIG_DIR, else the one inside the package."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return pathlib.Path(override)
    return pathlib.Path(__file__).parent / "yaml"


def preset_names() -> list[str]:
    return sorted(path.stem for path in (config_dir() / "models").glob("*.yaml"))


def preset_path(name: str) -> pathlib.Path:
    path = config_dir() / "models" / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(preset_names()) or f"none found in {path.parent}"
        raise ConfigError(f"unknown model preset '{name}' (known: {known})")
    return path


def load_preset(name: str, overrides: Sequence[str] = ()) -> AlbertConfig:
    """The AlbertConfig of preset `name`, with `field=value` overrides applied."""
    return AlbertConfig.from_yaml(preset_path(name), overrides)
