"""The package's folders are its layers, and no module imports from a layer above its own.

foundation (``_catalogue``, ``_checks``, ``i18n``, ``fonts``, ``device``) < ``model`` <
``data`` < ``inference`` < ``train`` < ``teaching``; the package's ``__init__`` (the notebooks'
short imports) sits on top and no module of the library imports it. The graph is ``test_imports``' (every import,
wherever it stands).
"""

from __future__ import annotations

from test_imports import import_graph

PACKAGE = "transformer_lib"
LAYERS = ["foundation", "model", "data", "inference", "train", "teaching", "package"]
FOUNDATION = {"_catalogue", "_checks", "i18n", "fonts", "device"}


def layer(module: str) -> str:
    """The layer a module of the package belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return "package"
    if parts[1] in FOUNDATION:
        return "foundation"
    if parts[1] not in LAYERS:
        raise AssertionError(f"{module} lies in no layer: add its folder to LAYERS")
    return parts[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'importer -> imported' for every import of a module from a higher layer."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(
        f"{importer} ({layer(importer)}) -> {target} ({layer(target)})"
        for importer, targets in graph.items()
        for target in targets
        if rank[layer(target)] > rank[layer(importer)]
    )


def test_the_layer_check_finds_an_upward_import():
    graph = {
        "transformer_lib.model.masks": {"transformer_lib._checks"},
        "transformer_lib.data.batching": {"transformer_lib.model.masks"},
        "transformer_lib.model.layers": {"transformer_lib.inference.cache"},
        "transformer_lib.inference.cache": {"transformer_lib"},
    }
    assert upward_imports(graph) == [
        "transformer_lib.inference.cache (inference) -> transformer_lib (package)",
        "transformer_lib.model.layers (model) -> transformer_lib.inference.cache (inference)",
    ]


def test_every_module_lies_in_a_layer_and_imports_only_downwards():
    graph = import_graph()
    assert {layer(name) for name in graph} == set(LAYERS)
    found = upward_imports(graph)
    assert not found, "imports from a higher layer:\n" + "\n".join(found)
