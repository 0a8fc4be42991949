"""Helpers for the browser test: an isolated JupyterLab server and a headless Chromium.

The server runs on 127.0.0.1 with a random token, on a temporary COPY of the notebooks,
with its own settings, workspaces, runtime and config directories, and with every
network feature that JupyterLab has (news, update checks) switched off. Everything it
starts is stopped again by process id: the server's process group, then any kernel
whose connection file lies in this server's runtime directory.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# COURSE_NOTEBOOKS=DIR tests a copy of the notebooks (say, one a tool has just rewritten).
NOTEBOOKS = Path(os.environ.get("COURSE_NOTEBOOKS", REPO / "notebooks"))
# The course notebooks, in order (00_... to 07_...).
NOTEBOOK_PATHS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SCREENSHOTS = REPO / "screenshots"

# Set COURSE_CHROMIUM to a browser binary to use it instead of Debian's chromium
# (or to a missing path to check that the test skips).
CHROMIUM_ENV = "COURSE_CHROMIUM"
# Set to 1 (as .ci/run does) to make a missing browser an error instead of a skip.
REQUIRE_ENV = "COURSE_REQUIRE_BROWSER"

# Headless Chromium in a container: no sandbox (root), no GPU, no /dev/shm, and no
# background requests to Google's services (the course runs offline).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

# User settings for the isolated JupyterLab: no pop-ups, and a notebook that keeps every
# cell in the DOM so the test sees them all. The news feed and the update check are off by
# the course's own settings (tools/lab_settings/overrides.json, installed by `make`).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"doNotDisturbMode": True},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def lab_settings_in(folder: Path) -> dict[str, dict]:
    """The user settings files under ``folder`` (JupyterLab's JSON, with ``//`` comment
    lines), by their paths relative to it."""
    return {
        path.relative_to(folder).as_posix(): json.loads(
            "\n".join(
                line
                for line in path.read_text(encoding="utf-8").splitlines()
                if not line.lstrip().startswith("//")
            )
        )
        for path in sorted(folder.rglob("*.jupyterlab-settings"))
    }


# The Chinese edition as `make lab-zh` starts it, with its settings (tools/lab_settings/
# zh_CN): JupyterLab's interface in Chinese (the language pack the course installs), and
# outputs in a font that draws a Chinese character two columns wide. The library's messages
# are Chinese because the notebook says so (set_language in its first cell), even where the
# environment says English, as the class hub's deploy/ does for everyone.
ZH_SETTINGS = LAB_SETTINGS | lab_settings_in(REPO / "tools" / "lab_settings" / "zh_CN")
ZH_ENV = {"COURSE_LANG": "en"}
ZH_NOTEBOOK_PATHS = sorted((NOTEBOOKS / "zh_CN").glob("[0-9][0-9]_*.ipynb"))
EDITION_PATHS = NOTEBOOK_PATHS + ZH_NOTEBOOK_PATHS  # both editions, English first


def edition_id(path: Path) -> str:
    """A notebook's test id: "04_masking", or "zh_CN/04_masking" in the Chinese edition."""
    return path.relative_to(NOTEBOOKS).with_suffix("").as_posix()


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

# DOM selectors (JupyterLab 4, ipywidgets 8).
CODE_PROMPT = ".jp-Notebook .jp-CodeCell .jp-InputArea-prompt"
STDERR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
IMAGE_OUTPUT = '.jp-OutputArea-output[data-mime-type="image/png"] img'
# A widget view displayed by a cell (not the widgets nested inside it).
WIDGET_VIEW = (
    ".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output > .jupyter-widgets"
)
# The slide types jupyterlab-slideshow places; None or "" continues the slide.
DECK_SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "", None}
DECK_BUTTON = '.jp-NotebookPanel-toolbar [data-command="deck:toggle"]'
DECK_REMOTE = ".jp-Deck-Remote"

# JupyterLab 4 renders an error output exactly as it renders a stderr stream (both carry
# data-mime-type="application/vnd.jupyter.stderr"), so the DOM cannot tell them apart.
# The notebook's model can: the server exposes the app as window.jupyterapp and this
# script lists the error outputs of the notebook at `path`, with their cell's index and
# the traceback as drawn on the page.
ERRORS_JS = """path => {
    const panel = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(w => w.context && w.context.path === path);
    if (!panel) return [];
    const found = [];
    panel.content.widgets.forEach((cell, index) => {
        if (cell.model.type !== 'code') return;
        for (const output of cell.model.outputs.toJSON()) {
            if (output.output_type !== 'error') continue;
            const drawn = [...cell.node.querySelectorAll('.jp-OutputArea-output')].pop();
            found.push(`cell ${index}: ${output.ename}: ${output.evalue}\n`
                + (drawn ? drawn.innerText : ''));
        }
    });
    return found;
}"""


# Deck mode, on the slide shown now: the cells on screen, how tall they stand against the
# room the screen has, how many of their parts scroll sideways or pass the screen's right
# edge, and the code's font size.
SLIDE_JS = """() => {
    const notebook = document.querySelector('.jp-Deck .jp-Notebook');
    const cells = [...notebook.querySelectorAll(':scope .jp-Cell')];
    const shown = cells.filter(c => c.classList.contains('jp-deck-mod-onscreen'));
    const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)
        && e.scrollWidth > e.clientWidth + 1;
    const code = shown.map(c => c.querySelector('.cm-content')).find(Boolean);
    const boxes = shown.map(c => c.getBoundingClientRect());
    return {
        active: cells.findIndex(c => c.classList.contains('jp-mod-active')),
        shown: shown.map(c => cells.indexOf(c)),
        height: Math.round(Math.max(...boxes.map(b => b.bottom)) - Math.min(...boxes.map(b => b.top))),
        room: window.innerHeight,
        sideways: shown.flatMap(c => [c, ...c.querySelectorAll('*')]).filter(
            e => scrolls(e) || e.getBoundingClientRect().right > window.innerWidth).length,
        code_px: code ? parseFloat(getComputedStyle(code).fontSize) : null,
    };
}"""

# Make the first cell of the notebook at `path` the active one, in command mode.
FIRST_CELL_JS = """path => {
    const panel = Array.from(window.jupyterapp.shell.widgets('main'))
        .find(w => w.context && w.context.path === path);
    panel.content.activeCellIndex = 0;
    panel.content.mode = 'command';
}"""


# Chinese text is drawn in a font with Chinese glyphs, or as boxes: Chromium picks the font
# through fontconfig, and a machine without a CJK font (Debian's fonts-noto-cjk, which
# .ci/run installs) draws every Chinese character as a box. This script marks each element
# matching `selector` that is drawn and whose own text holds Chinese characters
# (data-course-han) and returns how many each holds; DevTools then says which fonts drew
# that text (chinese_drawn_in).
HAN = "\\u3400-\\u9fff\\uf900-\\ufaff"  # CJK ideographs (punctuation aside)
MARK_HAN_JS = f"""selector => {{
    const counts = [];
    for (const element of document.querySelectorAll(selector)) {{
        const own = [...element.childNodes].filter(n => n.nodeType === Node.TEXT_NODE)
            .map(n => n.textContent).join('');
        const han = (own.match(/[{HAN}]/g) || []).length;
        if (han && element.checkVisibility()) {{  // not a rendered Markdown cell's source
            element.setAttribute('data-course-han', String(han));
            counts.push(han);
        }}
    }}
    return counts;
}}"""


def chinese_font_families() -> set[str]:
    """The font families fontconfig has for Chinese (`fc-list :lang=zh family`)."""
    try:
        listed = subprocess.run(
            ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
        ).stdout
    except FileNotFoundError:  # no fontconfig: no font either
        return set()
    return {name.strip() for line in listed.splitlines() for name in line.split(",")}


@dataclass(frozen=True)
class DrawnChinese:
    """The Chinese characters under a selector, and the fonts Chromium drew that text with."""

    characters: int
    glyphs: dict[str, int]  # font family -> glyphs it drew there (Chinese and the rest)

    def in_chinese_fonts(self, families: set[str]) -> int:
        return sum(n for family, n in self.glyphs.items() if family in families)


def chinese_drawn_in(page, selector: str) -> DrawnChinese:
    """Which platform fonts drew the Chinese text of the elements matching `selector`
    (DevTools' CSS.getPlatformFontsForNode, for each element's own text)."""
    characters = sum(page.evaluate(MARK_HAN_JS, selector))
    devtools = page.context.new_cdp_session(page)
    devtools.send("DOM.enable")
    devtools.send("CSS.enable")
    root = devtools.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    marked = devtools.send(
        "DOM.querySelectorAll", {"nodeId": root, "selector": "[data-course-han]"}
    )
    glyphs: dict[str, int] = {}
    for node in marked["nodeIds"]:
        for font in devtools.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
            glyphs[font["familyName"]] = glyphs.get(font["familyName"], 0) + font["glyphCount"]
    devtools.detach()
    return DrawnChinese(characters, glyphs)


def error_outputs(page, path: str) -> list[str]:
    """The error outputs (a cell that raised) of the open notebook at `path`, as text."""
    return page.evaluate(ERRORS_JS, path)


def find_chromium() -> str | None:
    """The Chromium binary to drive, or None when there is none."""
    override = os.environ.get(CHROMIUM_ENV)
    if override:
        return override if Path(override).is_file() else None
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def skip_reason() -> str | None:
    """One line saying why the browser test cannot run here, or None when it can."""
    if find_chromium() is None:
        where = os.environ.get(CHROMIUM_ENV) or "/usr/bin/chromium or `chromium` on PATH"
        return (
            f"no Chromium found ({where}): install Debian's `chromium` package, "
            f"or set {CHROMIUM_ENV} to a Chromium or Chrome binary"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return (
            "the `playwright` package is missing (the test extra has it: pip install -e '.[test]')"
        )
    return None


def skip_unless_available() -> None:
    """Skip the calling test (or module) with a one-line reason when the browser test
    cannot run here; fail instead when COURSE_REQUIRE_BROWSER=1 (as in CI)."""
    reason = skip_reason()
    if reason and os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}", pytrace=False)
    if reason:
        pytest.skip(reason, allow_module_level=True)


@dataclass(frozen=True)
class ExpectedOutputs:
    """What the stored notebook says a run produces."""

    code_cells: int
    images: int  # image/png outputs
    widgets: int  # widget-view outputs
    stderr: int  # stderr stream outputs


def expected_outputs(path: Path) -> ExpectedOutputs:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    return ExpectedOutputs(
        code_cells=sum(c["cell_type"] == "code" for c in cells),
        images=sum("image/png" in o.get("data", {}) for o in outputs),
        widgets=sum(WIDGET_MIME in o.get("data", {}) for o in outputs),
        stderr=sum(o.get("name") == "stderr" for o in outputs),
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    url: str  # base URL, no trailing slash
    token: str
    root: Path  # the notebooks copy the server serves
    runtime_dir: Path
    process: subprocess.Popen

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (localhost)
            body = response.read()
        return json.loads(body) if body else None

    def kernel_cpu_seconds(self) -> float | None:
        """CPU time (user + system) its kernels have used so far; None where /proc cannot
        tell (not Linux)."""
        if not Path("/proc").is_dir():
            return None
        ticks = 0
        for pid in _kernels_of(self.runtime_dir):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:  # it ended
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) "
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        return ticks / os.sysconf("SC_CLK_TCK")

    def shutdown_kernels(self) -> None:
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")


def _write_lab_settings(settings_dir: Path, settings: dict[str, dict]) -> None:
    for name, values in settings.items():
        target = settings_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")


def _wait_until_up(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {server.process.returncode}")
        try:
            server.api("GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise TimeoutError(f"JupyterLab did not answer /api/status within {timeout:.0f} s")


def _kernels_of(runtime_dir: Path) -> list[int]:
    """Pids of processes started with a connection file in `runtime_dir` (our kernels)."""
    pids = []
    if not Path("/proc").is_dir():  # not Linux: the server's own shutdown has to do
        return pids
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(runtime_dir) in cmdline:
            pids.append(int(proc.name))
    return pids


def _stop(process: subprocess.Popen, runtime_dir: Path) -> None:
    """SIGTERM the server's process group (the server stops its kernels), then SIGKILL."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    # Kernels run in sessions of their own; kill any that outlived the server.
    for pid in _kernels_of(runtime_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@contextmanager
def lab_server(
    tmp: Path,
    notebooks: list[Path],
    log_path: Path,
    settings: dict[str, dict] = LAB_SETTINGS,
    extra_env: dict[str, str] | None = None,
) -> Iterator[LabServer]:
    """A JupyterLab serving copies of `notebooks` from `tmp`/notebooks, with `settings` as
    the user's settings (`{}`: a student's first start) and `extra_env` added to its (and its
    kernels') environment; stopped on exit."""
    root = tmp / "notebooks"
    root.mkdir(parents=True)
    for notebook in notebooks:
        shutil.copy2(notebook, root / notebook.name)
    dirs = {name: tmp / name for name in ("settings", "workspaces", "runtime", "config", "data")}
    for path in dirs.values():
        path.mkdir()
    _write_lab_settings(dirs["settings"], settings)
    token = secrets.token_hex(16)
    port = _free_port()
    # The kernel picks its own matplotlib backend (inline) unless MPLBACKEND says
    # otherwise, and the test suite's conftest sets it to Agg: drop it.
    env = {key: value for key, value in os.environ.items() if key != "MPLBACKEND"}
    env |= {
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_PREFER_ENV_PATH": "1",
    } | (extra_env or {})
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.collaborative=False",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",  # ERRORS_JS reads the notebook's model
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, dirs["runtime"], process)
    try:
        _wait_until_up(server, timeout=90)
        yield server
    finally:
        _stop(process, dirs["runtime"])


def launch_chromium(playwright, executable: str):
    """Headless Chromium with a fresh temporary profile (Playwright's default)."""
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
