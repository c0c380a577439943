"""Texts every export test feeds its format (singles, pairs, truncated, empty, non-ASCII), and
the environment of a fresh serving process that cannot import albert_tf from the checkout."""

import os

MAX_SEQ_LENGTH = 24
LONG = " ".join(f"the cafe in {1990 + i % 9}, was he" for i in range(40))
TEXTS = ["The cafe was open.", "", "  \t ", "In 1995, a (deja) vu \"x\" - \u00a35.", LONG,
         "CAF\u00c9 ``DEJA''"]
PAIRS = [("the year", "he was in the cafe"), ("a month", ""), (LONG, "of and in to"),
         ("which are", LONG), (LONG, LONG), ("", "the")]
MASKED = ["the [MASK] was he.", "[MASK]. of [MASK]the cafe", "no mask", LONG + " [MASK]",
          "[MASK][MASK] in 1990,"]


def env_without_repo():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env
