"""The teaching floor: what the notebooks show and check, built on the layers below.

``exercises`` (the self-checking exercises and their grading), ``viz`` (figures),
``widgets`` (ipywidgets), ``playground`` (notebook 07's translation playground) and
``studies`` (notebooks 08 and 09's experiments). Nothing below imports from here.
"""
