"""Does pretraining make a better start? The pretrained-versus-random comparison that
`albert-pretrain`'s downstream check, `albert-experiment downstream` and the ablation tables
share, on top of fine-tuning:

    recipes      the small-model fine-tuning recipes, as data
    starts       fine-tuning reduced to dev and test scores, from a run or a random start
    seed_loop    one start on one task, once per seed, in worker processes side by side
    gain         the two starts' scores paired by seed: gain, 95% interval, verdict
    bag_of_words the baseline that needs no model
    check        a pretraining run's own check on one task
    suite        every task folder, both starts, the baseline, and the report
    probe        a linear model on frozen encoder outputs: what the features hold before
                 any fine-tuning, pretrained against random
"""
