"""The inference layer: running a trained model of the ``model`` layer.

``cache`` (one key/value cache and one cached step per layer kind, for every model that
generates), ``decode`` (greedy and beam search, paper §6.1), ``beam`` (beam search's
bookkeeping), ``generation`` (a language model's greedy and sampled continuations) and
``translate`` (sentences in, sentences out). Imports only the model and data layers.
"""
