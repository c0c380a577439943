"""Splitting a task's examples by source item, never by sentence: groups that share a text
merged, repeated examples dropped, groups shuffled with the seed and cut at the split
fractions (per label when every group has one)."""

from __future__ import annotations

import collections
import dataclasses
import random
from typing import Iterable, Sequence

from albert_lab.task_folders.examples import Example, clean_text

SPLITS = ("train", "dev", "test")


def _text_key(text: str) -> str:
    """What makes two texts the same: their words, ignoring case and spacing."""
    return clean_text(text).lower()


class _Groups:
    """Union-find over group names: groups that share a text become one group."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, group: str) -> str:
        self.parent.setdefault(group, group)
        while self.parent[group] != group:
            self.parent[group] = self.parent[self.parent[group]]
            group = self.parent[group]
        return group

    def union(self, first: str, second: str) -> None:
        first, second = self.find(first), self.find(second)
        if first != second:
            self.parent[max(first, second)] = min(first, second)

    def names(self) -> dict[str, str]:
        """Each group -> the name of its merged group (members joined by '+')."""
        members = collections.defaultdict(list)
        for group in self.parent:
            members[self.find(group)].append(group)
        return {group: "+".join(sorted(members[self.find(group)])) for group in self.parent}


def prepare_examples(examples: Iterable[Example]) -> tuple[list[Example], dict]:
    """Empty texts dropped; groups that share a text merged; repeated examples dropped (all
    copies when they disagree on the label). Returns the examples (renamed groups) and
    counts of what was dropped."""
    counts = collections.Counter()
    kept, groups, owner = [], _Groups(), {}
    for example in examples:
        counts["read"] += 1
        if len(example.texts) != len(example.groups):
            raise ValueError(f"{example}: one group per text expected")
        if not all(text.strip() for text in example.texts):
            counts["empty_dropped"] += 1
            continue
        for text, group in zip(example.texts, example.groups):
            groups.find(group)
            key = _text_key(text)
            if key in owner:
                groups.union(owner[key], group)
            else:
                owner[key] = group
        kept.append(example)
    names = groups.names()
    labels_by_key = collections.defaultdict(set)
    for example in kept:
        labels_by_key[tuple(_text_key(text) for text in example.texts)].add(example.label)
    unique, seen = [], set()
    for example in kept:
        key = tuple(_text_key(text) for text in example.texts)
        if len(labels_by_key[key]) > 1:
            counts["conflicting_duplicates_dropped"] += 1
            continue
        if key in seen:
            counts["duplicates_dropped"] += 1
            continue
        seen.add(key)
        unique.append(dataclasses.replace(
            example, groups=tuple(names[group] for group in example.groups)))
    sizes = collections.Counter(names.values())
    counts["merged_groups"] = sum(1 for size in sizes.values() if size > 1)
    return unique, dict(counts)


def assign_groups(examples: Sequence[Example], fractions: Sequence[float], seed: int,
                  stratify: bool) -> tuple[dict[str, str], bool]:
    """group -> split. Groups are put in a seeded random order (per label when `stratify`
    and every group has a single label) and cut where the examples they hold reach the
    train and train+dev fractions (a group goes where its middle falls).

    Returns the assignment and whether it was stratified."""
    weight = collections.Counter(group for example in examples for group in set(example.groups))
    labels = collections.defaultdict(set)
    for example in examples:
        for group in example.groups:
            labels[group].add(example.label)
    stratified = stratify and all(len(group_labels) == 1 for group_labels in labels.values())
    strata = collections.defaultdict(list)
    for group in sorted(weight):
        strata[str(next(iter(labels[group]))) if stratified else ""].append(group)
    rng = random.Random(seed)
    bounds = (fractions[0], fractions[0] + fractions[1])
    assignment = {}
    for stratum in sorted(strata):
        order = strata[stratum]
        rng.shuffle(order)
        total, done = sum(weight[group] for group in order), 0
        for group in order:
            middle = (done + weight[group] / 2) / total
            assignment[group] = ("train" if middle < bounds[0] else
                                 "dev" if middle < bounds[1] else "test")
            done += weight[group]
    return assignment, stratified


def split_examples(examples: Sequence[Example], fractions: Sequence[float], seed: int,
                   stratify: bool) -> tuple[dict[str, list[Example]], dict[str, str], dict]:
    """The examples of each split (in a seeded random order), the group assignment and
    facts of the split (stratified, pairs placed across splits).

    A pair whose two groups fall in different splits goes to the later of the two (train,
    then dev, then test): training sees no text of a dev or test group, dev none of a test
    group, and every pair is used. (Keeping only pairs inside one split threw away 781 of
    lee-pairs' 1,225 and left 66 pairs of 12 documents to choose checkpoints on.)"""
    assignment, stratified = assign_groups(examples, fractions, seed, stratify)
    splits = {split: [] for split in SPLITS}
    crossing = 0
    for example in examples:
        places = {assignment[group] for group in example.groups}
        splits[max(places, key=SPLITS.index)].append(example)
        crossing += len(places) > 1
    rng = random.Random(seed + 1)
    for split in SPLITS:
        rng.shuffle(splits[split])
    return splits, assignment, {"stratified_by_label": stratified,
                                "pairs_across_splits": crossing}
