"""The pyz entry's version check (escalated/pyz.py); the real pyz is exercised in tests/integration/test_zipapp.py."""

from escalated.pyz import mismatch


def test_same_python_and_platform_is_fine():
    assert mismatch((3, 11), "linux-x86_64", running=(3, 11), platform="linux-x86_64") is None


def test_another_minor_version_names_the_one_it_was_built_for():
    problem = mismatch((3, 11), "linux-x86_64", running=(3, 12), platform="linux-x86_64")
    assert problem and "built for Python 3.11 on linux-x86_64" in problem and "this is Python 3.12" in problem


def test_another_platform_is_refused_too():
    problem = mismatch((3, 11), "linux-x86_64", running=(3, 11), platform="linux-aarch64")
    assert problem and "linux-aarch64" in problem
