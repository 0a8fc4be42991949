"""The library stands on its own: its wheel, installed into a fresh virtual environment,
loads the bundled corpus and its Chinese messages from any folder, far from this checkout.

The fresh environment sees the course's packages (torch, numpy, ...) through a ``.pth``
line, so nothing is downloaded; a plain path in a ``.pth`` file is not a site folder, so
the course's editable install of ``transformer_lib`` (which points here) stays out of it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md", "transformer_lib")  # what setuptools reads

pytestmark = pytest.mark.slow


def _run(*command, cwd: Path, env: dict | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, command))}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(out: Path) -> Path:
    """The wheel of a copy of the sources (a build writes build/ and *.egg-info beside them)."""
    source = out / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(
        *pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", out, source, cwd=out
    )
    (wheel,) = out.glob("transformer_lib-*.whl")
    return wheel


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new environment holding the wheel, with the course's packages visible behind it."""
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=where
        ).strip()
    )
    (site / "course_packages.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(*pip, "install", "--no-deps", "--no-index", "--target", site, wheel, cwd=where)
    return python


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The Python of a fresh environment that holds the wheel and nothing of this checkout."""
    where = tmp_path_factory.mktemp("wheel")
    return fresh_venv(where / "venv", build_wheel(where / "dist"))


def _run_elsewhere(python: Path, code: str, tmp_path: Path, **env_vars) -> str:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return _run(python, "-c", code, cwd=tmp_path, env={**env, **env_vars}).strip()


def test_the_installed_wheel_loads_the_corpus_outside_the_checkout(installed, tmp_path):
    code = "from transformer_lib.data import load_split; print(len(load_split('train')))"
    assert _run_elsewhere(installed, code, tmp_path) == "24000"
    where = _run_elsewhere(
        installed, "import transformer_lib; print(transformer_lib.__file__)", tmp_path
    )
    assert Path(where).is_relative_to(installed.parents[1]), where


def test_the_installed_wheel_speaks_chinese_outside_the_checkout(installed, tmp_path):
    code = "from transformer_lib.i18n import _; print(_('German: {text}').format(text='Hund'))"
    assert _run_elsewhere(installed, code, tmp_path, COURSE_LANG="zh_CN") == "德语：Hund"
