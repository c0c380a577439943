"""The statistics behind a table's verdicts, apart from running anything:

    intervals           t-intervals paired by seed, proportions, binomial tests
    heldout_outcomes    right or wrong on every held-out prediction (paired held-out
                        intervals) and the unigram plateau a run must leave
    downstream_average  the average over a table's tasks, per seed, and its stuck counts
    task_differences    one variant against another task by task: each against the
                        random start, and the two sides of each downstream claim
    verdicts            a claim of the paper against our rows: shown, not shown, contradicted
"""
