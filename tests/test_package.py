"""Package-level contracts: cheap import, lazy exports, version."""

import subprocess
import sys

import pytest

import citekit


def test_version_is_a_string():
    assert isinstance(citekit.__version__, str) and citekit.__version__.count(".") >= 1


def test_import_does_not_import_numba_or_optional_libraries():
    code = (
        "import sys, citekit; "
        "heavy = [m for m in ('numba', 'scipy', 'transformers', 'tokenizers', 'tiktoken', "
        "'pandas', 'dask', 'matplotlib') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_name_resolves():
    for name in citekit.__all__:
        assert getattr(citekit, name) is not None, name


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        citekit.no_such_name  # noqa: B018
