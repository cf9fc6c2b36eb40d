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


def test_readme_is_valid_restructuredtext():
    # a malformed table or list renders as an error block on the package's page
    import io
    import os

    docutils_core = pytest.importorskip("docutils.core")
    from docutils.writers.null import Writer
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.rst")
    if not os.path.exists(readme):
        pytest.skip("no README next to the tests (installed package)")
    warnings = io.StringIO()
    with open(readme, encoding="utf-8") as handle:
        docutils_core.publish_string(
            handle.read(),
            writer=Writer(),
            settings_overrides={"warning_stream": warnings, "report_level": 2, "halt_level": 5},
        )
    assert warnings.getvalue() == ""
