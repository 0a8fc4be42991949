"""The course's experiments, not part of the model or the translator pipeline.

``ablation``: notebook 07's recipe with one thing changed at a time (the paper's Table 3 at
toy scale), run live by notebook 08 and in full by ``benchmarks/ablations.py``. It may use
anything in the library, ``reference.TorchTransformer`` (PyTorch's stack) included; nothing
outside ``studies`` and the exercises of notebook 08 imports it.

``compare``: the one place that decides whether one variant is better than another from
one score per seed (the course's rule, every seed beyond every seed), and prints the
sentence that says so; notebooks 07 and 08 state their comparisons through it.

``labels``: the names of the studies, their variants and scores as a student reads them,
translated in the Chinese edition (a name stays English in the code and the stored rows).
"""
