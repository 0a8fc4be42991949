"""Keep the three ways of installing the course in step.

`make lab` / `make test` (Makefile), conda and Binder (environment.yml) must install
the same package, with the same extras, under the same pins (constraints.txt), and
the pins must satisfy what pyproject.toml declares. The library's own dependencies are
what it imports; the course's tools are an extra.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
TORCH_VERSION = "2.13.0"  # the CPU wheel the course is tested with; see constraints.txt


# --- readers ---------------------------------------------------------------------------


def load_pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the test extra installs tomli on Python 3.10
        import tomli as tomllib
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def load_environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def env_conda_deps(env: dict) -> list[str]:
    return [d for d in env["dependencies"] if isinstance(d, str)]


def env_pip_lines(env: dict) -> list[str]:
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, f"environment.yml must have one `- pip:` section; got {sections}"
    return [" ".join(str(line).split()) for line in sections[0]]


def load_constraints() -> dict[str, Requirement]:
    pins = {}
    for raw in (ROOT / "constraints.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            name = canonicalize_name(req.name)
            assert name not in pins, f"constraints.txt pins {name} twice"
            pins[name] = req
    return pins


def pinned_version(req: Requirement) -> Version:
    exact = [s for s in req.specifier if s.operator == "=="]
    assert len(exact) == 1, f"constraints.txt must pin {req.name} with `==`; got {req}"
    return Version(exact[0].version)


def declared_requirements() -> list[Requirement]:
    project = load_pyproject()["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return reqs


# --- environment.yml -------------------------------------------------------------------


def test_env_installs_the_package_editable_with_the_course_and_test_extras():
    lines = [line.replace('"', "").replace("'", "") for line in env_pip_lines(load_environment())]
    assert "-e .[course,test]" in lines, (
        f"environment.yml's pip section must hold `-e .[course,test]`: {lines}"
    )


def test_env_pip_section_uses_the_constraints_file():
    lines = env_pip_lines(load_environment())
    used = [
        line.split(maxsplit=1)[1]
        for line in lines
        if line.split()[0] in ("-c", "--constraint") and len(line.split()) == 2
    ]
    assert used == ["constraints.txt"], f"expected `-c constraints.txt` in {lines}"
    assert (ROOT / "constraints.txt").is_file()


def test_env_python_satisfies_requires_python():
    requires = SpecifierSet(load_pyproject()["project"]["requires-python"])
    pythons = [d for d in env_conda_deps(load_environment()) if re.match(r"python\s*[=<>!]", d)]
    assert len(pythons) == 1, f"environment.yml must pin python once; got {pythons}"
    version = re.sub(r"^python\s*=*\s*", "", pythons[0]).rstrip(".*")
    assert requires.contains(version), f"python {version} does not satisfy {requires}"


def test_env_gets_python_packages_from_pip_only():
    # Mixing conda and pip copies of the same package breaks in confusing ways.
    conda = {re.split(r"[=<>!\s]", d)[0] for d in env_conda_deps(load_environment())}
    assert conda == {"python", "pip"}, f"conda dependencies besides python and pip: {conda}"


def test_the_makefile_installs_like_environment_yml_plus_nbgrader():
    # environment.yml serves students (Binder); `make` also installs the `instructor` extra,
    # so that `make test` and CI test the grading tools.
    makefile = (ROOT / "Makefile").read_text()
    pattern = r"\$\(PIP\) install -c constraints\.txt -e '\.\[course,test,instructor\]'"
    assert re.search(pattern, makefile), (
        "the Makefile must run `$(PIP) install -c constraints.txt -e '.[course,test,instructor]'`"
    )
    extras = set(load_pyproject()["project"]["optional-dependencies"])
    assert extras == {"course", "test", "instructor"}


def _makefile_variable(name: str) -> list[str]:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    match = re.search(rf"^{name} := (.*)$", text, re.MULTILINE)
    assert match, f"no {name} in the Makefile"
    prefix = re.match(r"\$\(addprefix ([^,]+),(.*)\)$", match.group(1).strip())
    return [prefix.group(1) + word for word in prefix.group(2).split()] if prefix else []


def test_nbgrader_extensions_are_off_in_the_course_jupyterlab():
    # `make` switches off nbgrader's server extensions and its JupyterLab menu: they need
    # a course on a JupyterHub, and would only clutter the students' JupyterLab.
    nbgrader = pytest.importorskip("nbgrader")
    config = Path(sys.prefix) / "etc" / "jupyter"
    enabled = {}
    for path in sorted((config / "jupyter_server_config.d").glob("*.json")):
        server = json.loads(path.read_text()).get("ServerApp", {})
        enabled.update(server.get("jpserver_extensions", {}))
    ours = {name for name in enabled if name.startswith("nbgrader.")}
    assert ours and ours == set(_makefile_variable("NBGRADER_SERVER_EXTENSIONS"))
    assert not any(enabled[name] for name in ours), "run `make install` (or see the Makefile)"
    (lab,) = [path["dest"] for path in nbgrader._jupyter_labextension_paths()]
    page_config = json.loads((config / "labconfig" / "page_config.json").read_text())
    assert page_config["disabledExtensions"].get(lab) is True


def test_the_course_jupyterlab_fetches_no_news_and_checks_no_updates():
    # An offline course must not ask "Would you like to get notified about official Jupyter
    # news?" (a toast over the notebook's corner): `make` installs the course's settings as
    # JupyterLab's defaults (the browser test opens a first start and looks for the toast).
    course = json.loads((ROOT / "tools" / "lab_settings" / "overrides.json").read_text())
    notification = course["@jupyterlab/apputils-extension:notification"]
    assert notification == {"fetchNews": "false", "checkForUpdates": False}
    installed = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert installed.is_file(), "run `make install` (or see the Makefile)"
    assert json.loads(installed.read_text()) == course


# --- pyproject.toml and constraints.txt ------------------------------------------------


def test_every_dependency_has_a_pin():
    pins = load_constraints()
    missing = [r.name for r in declared_requirements() if canonicalize_name(r.name) not in pins]
    assert not missing, f"add pins to constraints.txt for: {missing}"


def test_pins_satisfy_the_declared_ranges():
    pins = load_constraints()
    for req in declared_requirements():
        pin = pinned_version(pins[canonicalize_name(req.name)])
        assert req.specifier.contains(pin, prereleases=True), (
            f"constraints.txt pins {req.name}=={pin}, outside pyproject's `{req}`"
        )


def test_declared_dependencies_are_lower_bounds_only():
    # Exact pins belong in constraints.txt; upper bounds in a library conflict with
    # whatever else a student has installed.
    for req in declared_requirements():
        ops = {s.operator for s in req.specifier}
        assert ops <= {">="}, f"`{req}` in pyproject.toml: use `>=` only"


def test_torch_is_pinned_to_the_tested_build():
    torch = load_constraints()["torch"]
    assert str(pinned_version(torch)) == TORCH_VERSION
    assert torch.marker is None, "the torch pin must hold on every Python"


def test_pins_apply_to_the_python_running_the_tests():
    # Markers may relax pins on older Pythons only; the tested Python sees them all.
    if sys.version_info < (3, 11):
        pytest.skip("pins are tested on Python 3.11+")
    skipped = [str(r) for r in load_constraints().values() if r.marker and not r.marker.evaluate()]
    assert not skipped, f"pins that do not apply here: {skipped}"


def imported_distributions() -> set[str]:
    """The distributions whose modules transformer_lib imports, anywhere in its source."""
    tops = set()
    for path in (ROOT / "transformer_lib").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                tops.add(node.module.split(".")[0])
    tops -= set(sys.stdlib_module_names) | {"transformer_lib"}
    providers = importlib.metadata.packages_distributions()
    unknown = sorted(top for top in tops if top not in providers)
    assert not unknown, (
        f"transformer_lib imports modules that no installed package provides: {unknown}"
    )
    return {canonicalize_name(dist) for top in tops for dist in providers[top]}


def test_the_dependencies_are_what_the_library_imports():
    declared = {
        canonicalize_name(Requirement(r).name) for r in load_pyproject()["project"]["dependencies"]
    }
    assert declared == imported_distributions()


def test_package_discovery_is_limited_to_transformer_lib():
    find = load_pyproject()["tool"]["setuptools"]["packages"]["find"]
    assert find["include"] == ["transformer_lib*"]


# --- CI and nbval ----------------------------------------------------------------------


def test_ci_runs_the_readme_test_command():
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK), ".ci/run must be executable"
    assert re.search(r"^\s*(time\s+)?make test\s*$", ci.read_text(), re.MULTILINE)
    assert "make test" in (ROOT / "README.md").read_text()


def sanitize_patterns() -> list[tuple[str, str]]:
    # The same parse nbval applies to the file (nbval.plugin.get_sanitize_patterns).
    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text()
    return re.findall(r"^regex: (.*)$\n^replace: (.*)$", text, flags=re.MULTILINE)


@pytest.mark.parametrize(
    ("gpu_output", "cpu_output"),
    [
        ("tensor([1., 2.], device='cuda:0')", "tensor([1., 2.])"),
        ("tensor([[1.],\n        [2.]],\n       device='cuda:0')", "tensor([[1.],\n        [2.]])"),
        ("tensor([1.], device='mps:0', dtype=torch.float16)", "tensor([1.], dtype=torch.float16)"),
        ("<Figure at 0x7f3a2b1c0d90>", "<Figure at 0x55d1e2f3a4b0>"),
        ("100%|####| 50/50 [00:07<00:00, 6.9it/s]", "100%|####| 50/50 [00:03<00:00, 14.2it/s]"),
    ],
)
def test_nbval_sanitizer_makes_device_outputs_compare_equal(gpu_output, cpu_output):
    patterns = sanitize_patterns()
    assert patterns, "no `regex:`/`replace:` pairs that nbval can read"

    def sanitize(s: str) -> str:
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    assert sanitize(gpu_output) == sanitize(cpu_output)


def test_nbval_sanitizer_keeps_real_differences():
    text = "tensor([1., 2.])"
    for regex, replace in sanitize_patterns():
        text = re.sub(regex, replace, text)
    assert text == "tensor([1., 2.])"
