"""Sphinx configuration for the citekit documentation.

Build (no network needed)::

    pip install ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys

# Document the citekit of this checkout, not another installed copy.
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import citekit  # noqa: E402

project = "citekit"
author = "citekit developers"
copyright = "citekit developers, MIT licence"
release = citekit.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.viewcode",
    "numpydoc",
]

# No network at build time: no intersphinx, no remote images.
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []
html_static_path: list[str] = []
html_theme = "alabaster"
html_theme_options = {
    "description": "Exact, fast character-level citations for generated answers",
    "fixed_sidebar": False,
}
html_show_sourcelink = False

default_role = "literal"
pygments_style = "sphinx"

# autodoc: members in source order, signatures as written, no import of optional
# libraries (transformers, tiktoken, pandas, dask are imported inside functions).
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# show defaults as written in the source (DEFAULT_STOP_WORDS, not its contents)
autodoc_preserve_defaults = True
autodoc_default_options = {"exclude-members": "__init__, __new__, __post_init__"}
autoclass_content = "class"

# numpydoc renders the docstrings; the reference pages list members themselves.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
