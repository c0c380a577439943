"""`albert-model`: build an ALBERT encoder from a preset or YAML file and print its parameters.

    albert-model --preset albert_base
    albert-model --config my_model.yaml --override num_layers=6 --override sharing=ffn
    albert-model --preset tiny --forward        # also runs a batch through the real model
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from albert_tf.cli.command import run_command
from albert_tf.config import AlbertConfig
from albert_tf.config.presets import load_preset, preset_names
from albert_tf.io.console import add_verbose_flag


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="albert-model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", help="a model preset name (see --list)")
    source.add_argument("--config", help="a YAML file of AlbertConfig fields")
    source.add_argument("--list", action="store_true", help="list the presets and exit")
    parser.add_argument("--override", action="append", default=[], metavar="FIELD=VALUE",
                        help="change one config field; may be repeated")
    parser.add_argument("--forward", action="store_true",
                        help="build the real model and run one random batch through it")
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--seq_length", type=int, default=16)
    add_verbose_flag(parser)
    return parser


def _describe(config: AlbertConfig) -> str:
    return (f"V={config.vocab_size} E={config.embedding_size} H={config.hidden_size} "
            f"L={config.num_layers} heads={config.num_attention_heads} "
            f"I={config.intermediate_size} sharing={config.sharing} "
            f"groups={config.num_groups} inner={config.inner_group_num}")


def _run_forward(config: AlbertConfig, batch_size: int, seq_length: int) -> None:
    from albert_tf.models.encoder import AlbertEncoder, random_encoder_inputs

    seq_length = min(seq_length, config.max_position_embeddings)
    encoder = AlbertEncoder(config)
    inputs = random_encoder_inputs(config, batch_size, seq_length)
    start = time.perf_counter()
    outputs = encoder(inputs, training=False)
    elapsed = time.perf_counter() - start
    print(f"\nforward pass on a random batch ({batch_size} x {seq_length}) "
          f"in {elapsed * 1000:.0f} ms (first call, includes tracing):")
    for name, tensor in outputs.items():
        print(f"  {name:<16} shape {tuple(tensor.shape)} dtype {tensor.dtype.name}")


def main(argv: Sequence[str] | None = None) -> int:
    return run_command("albert-model", _parser(), _run, argv)


def _run(args) -> int:
    if args.list:
        print("\n".join(preset_names()))
        return 0
    if args.preset:
        config, title = load_preset(args.preset, args.override), f"preset {args.preset}"
    else:
        config, title = AlbertConfig.from_yaml(args.config, args.override), args.config

    from albert_tf.models.parameters import count_parameters, format_parameter_table

    print(f"{title}: {_describe(config)}\n")
    print(format_parameter_table(count_parameters(config)))
    if args.forward:
        _run_forward(config, args.batch_size, args.seq_length)
    return 0


if __name__ == "__main__":
    sys.exit(main())
