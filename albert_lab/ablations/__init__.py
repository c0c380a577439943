"""The paper's ablation tables as runnable experiments: `experiments/*.yaml` read at a scale
(spec), the data they train on (data), a runner that pretrains and scores each variant
(runner), and the report with its plots (report, plots, curves)."""
