"""The course in a real browser, used the way a student and an instructor use it.

JupyterLab runs on 127.0.0.1 (a random token, isolated settings, a temporary copy of
the notebooks) and headless Chromium drives it through Playwright. For every notebook:
open it, Edit > Clear Outputs of All Cells, Run > Run All Cells, then check that no cell
failed, every figure of the stored notebook was drawn as an image, every widget was
drawn as a live widget, and each widget redraws its figure when a control moves; then
present it in deck mode (jupyterlab-slideshow) and walk it with →: one press per slide,
each slide within the 1400×900 screen. One notebook is presented with a live widget. Each
notebook's Run All time goes to screenshots/run-all-seconds.json. The Chinese edition's
text must be drawn in a font with Chinese glyphs (not boxes).
Screenshots go to screenshots/ (ignored by git). Nothing leaves 127.0.0.1.

Skipped, with a one-line reason, where Chromium or the `playwright` package is missing
(an error instead when COURSE_REQUIRE_BROWSER=1, as .ci/run sets it).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import browser_support as bs
import notebook_runs
import pytest

sys.path.insert(0, str(bs.REPO / "tools"))
import slide_metadata  # noqa: E402

pytestmark = pytest.mark.browser

bs.skip_unless_available()

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

NOTEBOOK_PATHS = bs.NOTEBOOK_PATHS
PRESENTED = "04_masking.ipynb"  # the notebook shown in deck mode
VIEWPORT = {"width": 1400, "height": 900}
OPEN_TIMEOUT_S = 120  # JupyterLab loaded and the kernel idle
CELL_TIMEOUT_S = notebook_runs.CELL_TIMEOUT_S  # one cell running, computing (it says why)
STALL_S = 60  # one cell running while its kernel computes less than STALL_CPU_S: a stall
STALL_CPU_S = 1.0
REDRAW_TIMEOUT_S = 60  # a widget redraws its figure after a control moved
DECK_TIMEOUT_MS = 30_000  # deck mode starts or stops
SLIDE_SETTLE_MS = 400  # a slide's cells fade in (0.1 s) and lay out
MAX_PRESSES = 300  # more → presses than any deck has slides
MIN_CODE_PX = 16  # code readable from the back of a classroom
TOAST = ".Toastify__toast"  # a JupyterLab notification in the corner
FIRST_START_WAIT_MS = 10_000  # JupyterLab asks about the news within seconds of loading


# --- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    bs.SCREENSHOTS.mkdir(exist_ok=True)
    with bs.lab_server(tmp, NOTEBOOK_PATHS, log_path=tmp / "jupyterlab.log") as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = bs.launch_chromium(playwright, bs.find_chromium())
        yield chromium
        chromium.close()


@pytest.fixture
def page(lab, browser):
    """A fresh browser tab; records any request that leaves the server (there must be none)."""
    context = browser.new_context(viewport=VIEWPORT)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    tab.outside_requests = []

    def record(request):
        if not request.url.startswith((lab.url, "data:", "blob:")):
            tab.outside_requests.append(request.url)

    tab.on("request", record)
    yield tab
    context.close()
    lab.shutdown_kernels()


# --- what a student does -----------------------------------------------------------------


# The main menus' names in the Chinese interface (jupyterlab-language-pack-zh-CN).
ZH_MENUS = {"Edit": "编辑", "Run": "运行"}


def menu(page: Page, top: str, command: str) -> None:
    """Click a main-menu entry, e.g. Run > Run All Cells (in either interface language)."""
    chinese = page.get_by_role("menuitem", name=ZH_MENUS[top], exact=True)
    (chinese if chinese.count() else page.get_by_role("menuitem", name=top, exact=True)).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


def open_notebook(page: Page, lab: bs.LabServer, name: str) -> None:
    """Open a notebook and wait until its kernel is connected and idle."""
    page.goto(f"{lab.url}/lab/tree/{name}?reset&token={lab.token}")
    # The notebook toolbar says "idle" before any kernel exists; the status bar waits
    # for the kernel ("Python 3 (ipykernel) | Idle"), and the server for the websocket.
    page.wait_for_function(
        "() => /\\|\\s*(Idle|空闲)\\s*$/m.test(document.querySelector('#jp-main-statusbar')?.innerText)",
        timeout=OPEN_TIMEOUT_S * 1000,
    )
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while not any(
        s["path"].endswith(name)
        and s["kernel"]["execution_state"] == "idle"
        and s["kernel"]["connections"] > 0
        for s in lab.api("GET", "/api/sessions")
    ):
        assert time.monotonic() < deadline, f"{name}: no connected idle kernel"
        time.sleep(0.3)
    # Fold the file browser away (click its tab), leaving the notebook the whole width.
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()


def run_all_cells(
    page: Page,
    lab: bs.LabServer,
    name: str,
    n_code_cells: int,
    cell_timeout: float = CELL_TIMEOUT_S,
    stall_s: float = STALL_S,
) -> float:
    """Clear all outputs, Run All, and wait until every cell ran; fail as soon as a cell
    raises, with its error text, runs for `cell_timeout` s, or waits: runs for `stall_s` s
    while `lab`'s kernels compute less than STALL_CPU_S (a busy machine slows a cell down,
    but a cell waiting for a message that is not coming computes nothing). Returns the
    seconds Run All took."""
    menu(page, "Edit", "editmenu:clear-all")
    expect(page.locator(".jp-OutputArea-output")).to_have_count(0)
    menu(page, "Run", "runmenu:run-all")
    started = time.monotonic()
    running_since = {}  # the code cell now running (the first [*]) -> when it started
    cpu = []  # (when, the kernels' CPU seconds so far) while that cell runs
    while True:
        errors = bs.error_outputs(page, name)
        if errors:
            pytest.fail(f"{name}: a cell failed in Run All:\n" + "\n---\n".join(errors))
        state = page.evaluate(
            """promptSel => ({
                prompts: [...document.querySelectorAll(promptSel)].map(p => p.textContent.trim()),
                status: document.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status,
            })""",
            bs.CODE_PROMPT,
        )
        ran = sum(bool(re.fullmatch(r"\[\d+\]:", p)) for p in state["prompts"])
        running = state["prompts"].count("[*]:")
        if state["status"] == "idle" and not running and ran == n_code_cells:
            return time.monotonic() - started
        if ran + running == 0 and time.monotonic() > started + 60:
            page.screenshot(path=bs.SCREENSHOTS / "browser-run-all-did-not-start.png")
            pytest.fail("Run All started no cell within 60 s (screenshot in screenshots/)")
        if running:
            cell = state["prompts"].index("[*]:")
            now = time.monotonic()
            if cell not in running_since:
                running_since[cell], cpu = now, []
            since = running_since[cell]
            used = lab.kernel_cpu_seconds()
            if used is not None:
                cpu.append((now, used))
                while len(cpu) > 1 and cpu[1][0] <= now - stall_s:
                    del cpu[0]  # keep one sample at or before the window's start
                if now - cpu[0][0] >= stall_s and used - cpu[0][1] < STALL_CPU_S:
                    page.screenshot(path=bs.SCREENSHOTS / "browser-cell-stalled.png")
                    pytest.fail(
                        f"{name}: code cell {cell} waited: its kernel computed "
                        f"{used - cpu[0][1]:.1f} s in the last {stall_s:g} s "
                        f"({ran}/{n_code_cells} cells ran; screenshot in screenshots/)"
                    )
            if now - since > cell_timeout:
                page.screenshot(path=bs.SCREENSHOTS / "browser-cell-did-not-finish.png")
                pytest.fail(
                    f"{name}: code cell {cell} ran for {cell_timeout:g} s without finishing "
                    f"({ran}/{n_code_cells} cells ran; kernel {state['status']}; "
                    "screenshot in screenshots/)"
                )
        time.sleep(0.5)


def record_run_time(name: str, seconds: float) -> None:
    """Keep each notebook's Run All wall time in screenshots/run-all-seconds.json: the
    figure an instructor plans a class with."""
    bs.SCREENSHOTS.mkdir(exist_ok=True)
    path = bs.SCREENSHOTS / "run-all-seconds.json"
    times = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    times[name] = round(seconds, 1)
    path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def output_texts(page: Page, selector: str) -> list[str]:
    return page.locator(selector).all_inner_texts()


def wait_for_images(page: Page) -> int:
    """Wait until every output image has loaded; return how many there are."""
    page.wait_for_function(
        "sel => [...document.querySelectorAll(sel)].every(i => i.complete && i.naturalWidth > 0)",
        arg=bs.IMAGE_OUTPUT,
    )
    return page.locator(bs.IMAGE_OUTPUT).count()


def move_a_control(view) -> str | None:
    """Change one control of a widget the way a student would; say which, or None."""
    handles = view.locator(".widget-slider .noUi-handle")
    if handles.count():
        handle = handles.first
        value, top = (float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemax"))
        key = "ArrowRight" if value < top else "ArrowLeft"
        handle.focus()
        handle.press(key)
        return f"slider {handle.get_attribute('aria-valuetext')!r} ({key})"
    selects = view.locator(".widget-dropdown select")
    if selects.count():
        select = selects.first
        options = select.locator("option").evaluate_all("os => os.map(o => o.value)")
        other = next(o for o in options if o != select.input_value())
        select.select_option(value=other)
        return f"dropdown -> {other!r}"
    toggles = view.locator(".widget-toggle-buttons button:not(.mod-active)")
    if toggles.count():
        toggles.first.click()
        return "toggle button"
    boxes = view.locator(".widget-checkbox input")
    if boxes.count():
        boxes.first.click()
        return "checkbox"
    texts = view.locator(".widget-text input")
    if texts.count():  # a sentence to edit (10's fill-in-the-blank): one word changed, Enter
        text = texts.first
        before = text.input_value()
        after = before.replace(" the ", " a ", 1) if " the " in before else f"a {before}"
        text.fill(after)
        text.press("Enter")
        return f"text {before!r} -> {after!r}"
    return None


def widget_redraws(page: Page, index: int) -> str | None:
    """Move a control of the index-th widget view and wait for its figure to change."""
    view = page.locator(bs.WIDGET_VIEW).nth(index)
    before = view.locator("img").evaluate_all("imgs => imgs.map(i => i.src)")
    if not before:
        return None  # a widget without a figure (a progress bar, say)
    moved = move_a_control(view)
    if moved is None:
        return None
    page.wait_for_function(
        """([sel, index, before]) => {
            const imgs = [...document.querySelectorAll(sel)[index].querySelectorAll('img')];
            const now = imgs.map(i => i.src);
            return now.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0)
                && JSON.stringify(now) !== JSON.stringify(before);
        }""",
        arg=[bs.WIDGET_VIEW, index, before],
        timeout=REDRAW_TIMEOUT_S * 1000,
    )
    return moved


def screenshot_notebook(page: Page, path: Path) -> None:
    """The whole notebook in one image: make the window as tall as the notebook."""
    height = page.evaluate(
        """() => {
            const scroller = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
            scroller.scrollTop = 0;
            return scroller.scrollHeight;
        }"""
    )
    path.parent.mkdir(exist_ok=True)
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(height + 200, 16000)})
    page.wait_for_timeout(500)
    page.screenshot(path=path)
    page.set_viewport_size(VIEWPORT)


def present(page: Page, name: str) -> list[dict]:
    """Start deck mode on the first cell and press → until the deck moves no more.
    Returns what each stop showed (bs.SLIDE_JS); deck mode is stopped again."""
    page.evaluate(bs.FIRST_CELL_JS, name)
    page.locator(bs.DECK_BUTTON).click()
    expect(page.locator(bs.DECK_REMOTE)).to_be_visible(timeout=DECK_TIMEOUT_MS)
    page.wait_for_timeout(SLIDE_SETTLE_MS)
    stops = [page.evaluate(bs.SLIDE_JS)]
    for _ in range(MAX_PRESSES):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(SLIDE_SETTLE_MS)
        now = page.evaluate(bs.SLIDE_JS)
        if now["active"] == stops[-1]["active"]:
            break
        stops.append(now)
    page.locator(".jp-deck-mod-stop").click()
    expect(page.locator(bs.DECK_REMOTE)).to_be_hidden(timeout=DECK_TIMEOUT_MS)
    return stops


def check_deck(name: str, stops: list[dict], n_slides: int) -> list[str]:
    """What is wrong with the deck walked in `stops` (empty when nothing is)."""
    problems = [
        f"→ press {i} did not change the slide (cell {s['active']})"
        for i, s in enumerate(stops[1:-1], start=1)
        if s["shown"] == stops[i - 1]["shown"]
    ]
    slides = [s for i, s in enumerate(stops) if i == 0 or s["shown"] != stops[i - 1]["shown"]]
    if len(slides) != n_slides:
        problems.append(f"→ showed {len(slides)} slides, the notebook has {n_slides}")
    for number, slide in enumerate(slides, start=1):
        where = f"slide {number} (cells {slide['shown'][0]}-{slide['shown'][-1]})"
        if slide["height"] > slide["room"]:
            problems.append(f"{where}: {slide['height']} px tall, the screen has {slide['room']}")
        if slide["sideways"]:
            problems.append(f"{where}: {slide['sideways']} part(s) scroll sideways")
        if slide["code_px"] is not None and slide["code_px"] < MIN_CODE_PX:
            problems.append(f"{where}: code at {slide['code_px']} px")
    return [f"{name}: {p}" for p in problems]


def slide_count(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(c["metadata"].get("slideshow", {}).get("slide_type") == "slide" for c in cells)


# --- the tests ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=[p.stem for p in NOTEBOOK_PATHS])
def test_notebook_runs_like_a_student_runs_it(page, lab, path):
    expected = bs.expected_outputs(path)
    started = time.monotonic()
    open_notebook(page, lab, path.name)
    opened = time.monotonic()
    run_seconds = run_all_cells(page, lab, path.name, expected.code_cells)
    record_run_time(path.name, run_seconds)
    ran = time.monotonic()

    stderr = output_texts(page, bs.STDERR_OUTPUT)
    assert len(stderr) <= expected.stderr, (
        f"{path.name}: stderr outputs that the stored notebook does not have:\n"
        + "\n---\n".join(stderr)
    )
    images = wait_for_images(page)
    assert images >= expected.images, (
        f"{path.name}: {images} figures drawn, the stored notebook has {expected.images}"
    )
    views = page.locator(bs.WIDGET_VIEW)
    assert views.count() == expected.widgets, (
        f"{path.name}: {views.count()} live widgets, the stored notebook displays {expected.widgets}"
    )

    moved = [widget_redraws(page, i) for i in range(expected.widgets)]
    if expected.widgets:
        assert any(moved), f"{path.name}: no widget had a control that redraws a figure"
    errors = bs.error_outputs(page, path.name)
    assert not errors, f"{path.name}: error outputs after moving widgets:\n" + "\n".join(errors)

    screenshot_notebook(page, bs.SCREENSHOTS / f"browser-{path.stem}.png")
    # Then an instructor presents it: → walks every slide, and each fits the screen.
    stops = present(page, path.name)
    problems = check_deck(path.name, stops, slide_count(path))
    assert not problems, "\n".join(problems)
    assert not page.outside_requests, f"requests that left 127.0.0.1: {page.outside_requests}"
    print(
        f"\n{path.stem}: open {opened - started:.1f} s, run all {run_seconds:.1f} s, "
        f"checks {time.monotonic() - ran:.1f} s; {images} images, widgets moved: {moved}; "
        f"{slide_count(path)} slides, the tallest {max(s['height'] for s in stops)} px"
    )


@pytest.mark.skipif(
    not (bs.NOTEBOOKS / PRESENTED).exists(), reason=f"{PRESENTED} is not in notebooks/"
)
def test_presentation_mode_shows_a_live_widget(page, lab):
    path = bs.NOTEBOOKS / PRESENTED
    assert bs.expected_outputs(path).widgets, f"{PRESENTED} displays no widget to present"
    open_notebook(page, lab, PRESENTED)
    run_all_cells(page, lab, PRESENTED, bs.expected_outputs(path).code_cells)

    # Select the widget's cell, then press the notebook toolbar's deck button.
    view = page.locator(bs.WIDGET_VIEW).first
    page.locator(".jp-Notebook .jp-CodeCell").filter(has=view).locator(".jp-InputPrompt").click()
    page.locator(bs.DECK_BUTTON).click()
    expect(page.locator(bs.DECK_REMOTE)).to_be_visible(timeout=DECK_TIMEOUT_MS)

    # On screen: the widget's slide, drawn live (not as text), and not the whole notebook.
    cell = page.locator(".jp-Notebook .jp-CodeCell").filter(has=view)
    expect(cell).to_have_class(re.compile(r"\bjp-deck-mod-onscreen\b"), timeout=DECK_TIMEOUT_MS)
    expect(view).to_be_in_viewport(timeout=DECK_TIMEOUT_MS)
    expect(view.locator(".widget-slider").first).to_be_visible()
    expect(view.locator("img").first).to_be_visible()
    onscreen = page.locator(".jp-Notebook .jp-Cell.jp-deck-mod-onscreen").count()
    assert onscreen < page.locator(".jp-Notebook .jp-Cell").count(), "deck shows every cell"
    assert widget_redraws(page, 0), "the widget did not redraw in deck mode"
    page.screenshot(path=bs.SCREENSHOTS / f"presentation-{path.stem}.png")

    page.locator(".jp-deck-mod-stop").click()
    expect(page.locator(bs.DECK_REMOTE)).to_be_hidden(timeout=DECK_TIMEOUT_MS)
    assert not page.outside_requests, f"requests that left 127.0.0.1: {page.outside_requests}"


def _code(source: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": source,
    }


def _write_notebook(path: Path, cells: list[dict]) -> None:
    """A notebook of `cells` for the course's kernel."""
    for index, cell in enumerate(cells):
        cell["id"] = f"cell{index}"
    kernel = json.loads(NOTEBOOK_PATHS[0].read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": kernel},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_a_failing_cell_stops_the_run_at_once_with_its_error(page, lab):
    # A warning on stderr is not an error; the ValueError is, and the run must end on it
    # at once, not after CELL_TIMEOUT_S (the last cell would sleep for longer than that).
    name = "failing.ipynb"
    cells = [
        _code("import sys\nprint('a warning, not an error', file=sys.stderr)"),
        _code("raise ValueError('broken on purpose')"),
        _code(f"import time\ntime.sleep({CELL_TIMEOUT_S + 60})"),
    ]
    _write_notebook(lab.root / name, cells)
    open_notebook(page, lab, name)
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception) as failure:
        run_all_cells(page, lab, name, len(cells))
    message = str(failure.value)
    assert "cell 1: ValueError: broken on purpose" in message, message
    assert "Traceback" in message and "cell 0" not in message, message
    assert time.monotonic() - started < 60, "the failing cell was reported too late"


@pytest.mark.parametrize(
    "body, limits, says",
    [
        ("time.sleep(600)", dict(stall_s=10), "code cell 1 waited: its kernel computed 0."),
        ("while True:\n    pass", dict(cell_timeout=20, stall_s=10), "code cell 1 ran for 20 s"),
    ],
    ids=["waiting", "computing"],
)
def test_a_cell_that_never_finishes_fails_within_its_limit_naming_it(page, lab, body, limits, says):
    # A cell that waits fails after stall_s; one that computes runs until cell_timeout.
    name = "stalled.ipynb"
    _write_notebook(lab.root / name, [_code("x = 1"), _code(f"import time\n{body}")])
    open_notebook(page, lab, name)
    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception) as failure:
        run_all_cells(page, lab, name, 2, **limits)
    message = str(failure.value)
    assert message.startswith(f"{name}: {says}"), message
    assert time.monotonic() - started < 50, "the stalled cell was reported too late"
    for session in lab.api("GET", "/api/sessions"):  # the kernel still running it
        if session["path"].endswith(name):
            lab.api("DELETE", f"/api/sessions/{session['id']}")


def test_a_slide_too_tall_for_the_screen_is_reported(page, lab):
    # Slides made by the tool: 60 lines of code (about 1300 px) cannot fit on one screen.
    name = "tall_slide.ipynb"
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# A short slide"},
        _code("x = 1"),
        {"cell_type": "markdown", "metadata": {}, "source": "## A tall slide"},
        _code("\n".join(f"y{i} = {i}" for i in range(60))),
        _code("z = 3"),
    ]
    for index, cell in enumerate(cells):
        cell["id"] = f"cell{index}"
    kernel = json.loads(NOTEBOOK_PATHS[0].read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    notebook = {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4}
    notebook = slide_metadata.with_slides(notebook | {"nbformat_minor": 5}, name)
    path = lab.root / name
    path.write_text(json.dumps(notebook), encoding="utf-8")
    open_notebook(page, lab, name)
    problems = check_deck(name, present(page, name), slide_count(path))
    assert len(problems) == 1 and "(cells 3-3)" in problems[0], problems
    assert "px tall, the screen has 900" in problems[0], problems


def test_a_first_start_asks_nothing_about_news(browser, tmp_path):
    """A student's first start (no user settings at all, only the course's) shows no toast
    asking to fetch Jupyter's news: the course runs offline and the toast would cover the
    notebook's corner (tools/lab_settings/overrides.json switches the feed off)."""
    name = NOTEBOOK_PATHS[0].name
    with bs.lab_server(tmp_path, NOTEBOOK_PATHS[:1], tmp_path / "lab.log", settings={}) as lab:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        open_notebook(page, lab, name)
        page.wait_for_timeout(FIRST_START_WAIT_MS)
        toasts = page.locator(TOAST).all_inner_texts()
        page.screenshot(path=bs.SCREENSHOTS / "first-start.png")
        context.close()
        lab.shutdown_kernels()
    assert not [text for text in toasts if "news" in text.lower()], toasts


# --- the Chinese edition -----------------------------------------------------------------

ZH_NOTEBOOK = "04_masking.ipynb"  # a widget, a deck and three exercises
# A wrong answer a student might type: a causal mask that lets every query see every key.
WRONG_ANSWER = "exercises.check_causal_mask(lambda T: torch.ones(T, T, dtype=torch.bool))"


def type_and_run_a_new_cell(page: Page, code: str) -> None:
    """Add a code cell below the last one, type `code` into it and run it (Shift+Enter)."""
    page.locator(".jp-Notebook .jp-Cell").last.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # command mode: a new cell below
    page.keyboard.press("Enter")  # edit it
    page.keyboard.type(code)
    page.keyboard.press("Shift+Enter")


def chinese_hint(monkeypatch) -> str:
    """The first line of what WRONG_ANSWER earns in Chinese, computed here."""
    import torch

    from transformer_lib.teaching import exercises

    monkeypatch.setenv("COURSE_LANG", "zh_CN")
    with pytest.raises(exercises.ExerciseFailed) as failed:
        eval(WRONG_ANSWER, {"exercises": exercises, "torch": torch})
    monkeypatch.delenv("COURSE_LANG")
    return str(failed.value).split("\n")[0]


def chinese_font_problem(page: Page, screenshot: Path) -> str | None:
    """Why the open notebook's Chinese text is not all drawn in fonts with Chinese glyphs
    (boxes on a machine without one), or None; the page is kept in `screenshot`."""
    screenshot.parent.mkdir(exist_ok=True)
    page.screenshot(path=screenshot)
    drawn = bs.chinese_drawn_in(page, ".jp-Notebook *")
    families = bs.chinese_font_families()
    if drawn.characters and drawn.in_chinese_fonts(families) >= drawn.characters:
        return None
    return (
        f"{drawn.characters} Chinese characters in the notebook, but the fonts that fontconfig "
        f"has for Chinese ({', '.join(sorted(families)) or 'none'}) drew "
        f"{drawn.in_chinese_fonts(families)} glyphs; Chromium drew the text with {drawn.glyphs}. "
        f"Install a CJK font (Debian's fonts-noto-cjk, as .ci/run does). Screenshot: {screenshot}"
    )


# A Chinese character's width in columns of an output's monospace text, as the page draws it
COLUMNS_JS = """() => {
    const pre = document.querySelector(".jp-OutputArea-output pre");
    if (!pre) return null;
    const width = (text) => {
        const span = pre.appendChild(document.createElement("span"));
        span.textContent = text;
        const drawn = span.getBoundingClientRect().width;
        span.remove();
        return drawn;
    };
    return [width("一二三四五六七八九十") / width("0123456789"), getComputedStyle(pre).fontFamily];
}"""


def column_problem(page: Page) -> str | None:
    """Why the Chinese edition's printed tables do not line up, or None. They are padded
    with spaces, a Chinese character counted as two columns (`transformer_lib.i18n.pad`),
    so the outputs' font must draw it two columns wide: Noto Sans Mono CJK SC does, by the
    settings `make lab-zh` starts with (tools/lab_settings/zh_CN); JupyterLab's own fonts
    draw it 1.66 columns wide, and each Chinese label shifts the rest of its row."""
    measured = page.evaluate(COLUMNS_JS)
    if measured is None:
        return "no output drawn as text, so no column to measure"
    columns, family = measured
    if abs(columns - 2) <= 0.04:
        return None
    return (
        f"a Chinese character is {columns:.2f} columns wide in the outputs' font ({family}), "
        "not 2: the printed tables do not line up. Install Debian's fonts-noto-cjk; the "
        "code font is set in tools/lab_settings/zh_CN, the settings make lab-zh starts with"
    )


@contextlib.contextmanager
def chinese_lab_page(browser, tmp_path: Path, path: Path) -> Iterator[tuple[Page, bs.LabServer]]:
    """A Chinese JupyterLab (interface in Chinese, COURSE_LANG=en as on the class hub) with
    the Chinese notebook ``path`` open, and its server; the page closes and the kernels stop
    afterwards."""
    with bs.lab_server(
        tmp_path, [path], tmp_path / "lab.log", settings=bs.ZH_SETTINGS, extra_env=bs.ZH_ENV
    ) as lab:
        context = browser.new_context(viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(30_000)
        open_notebook(page, lab, path.name)
        try:
            yield page, lab
        finally:
            context.close()
            lab.shutdown_kernels()


# The longest Chinese notebooks, whose outputs print the most Chinese and whose slides hold
# the most Chinese prose (the figures' text is checked as they are drawn:
# tests/test_figure_fonts.py)
FONT_NOTEBOOKS = [
    "07_toy_translator.ipynb",
    "08_what_matters.ipynb",
    "09_decoder_only.ipynb",
    "10_encoder_only.ipynb",
]


@pytest.mark.parametrize("name", FONT_NOTEBOOKS)
def test_the_chinese_edition_is_drawn_in_chinese_glyphs_on_slides_that_fit(browser, tmp_path, name):
    """On a machine without a CJK font every Chinese character is a box, and the notebook
    runs anyway: the fonts Chromium drew the whole Chinese notebook's text with (its
    Markdown, code comments and stored outputs, every cell: the lab renders them all;
    DevTools' CSS.getPlatformFontsForNode) must include fonts that fontconfig lists for
    Chinese (`fc-list :lang=zh`), drawing at least as many glyphs as the text has Chinese
    characters. Its printed tables must line up (`column_problem`). Then its deck, with the
    stored outputs, is walked: a Chinese line holds fewer characters than an English one, so
    Chinese slides are taller."""
    path = bs.NOTEBOOKS / "zh_CN" / name
    with chinese_lab_page(browser, tmp_path, path) as (page, _):
        problem = chinese_font_problem(page, bs.SCREENSHOTS / f"browser-zh_CN-font-{path.stem}.png")
        columns = column_problem(page)
        deck = check_deck(f"zh_CN/{name}", present(page, name), slide_count(path))
    assert problem is None, problem
    assert columns is None, columns
    assert not deck, "\n".join(deck)


@pytest.mark.skipif(not bs.ZH_NOTEBOOK_PATHS, reason="no Chinese edition in notebooks/zh_CN")
def test_the_chinese_edition_in_a_chinese_jupyterlab(browser, tmp_path, monkeypatch):
    """`make lab-zh` as a student uses it: the interface in Chinese, a Chinese notebook run
    top to bottom, a widget moved, the deck walked, and a wrong answer's hint in Chinese,
    though the environment says COURSE_LANG=en (as the class hub's does)."""
    path = bs.NOTEBOOKS / "zh_CN" / ZH_NOTEBOOK
    expected = bs.expected_outputs(path)
    with chinese_lab_page(browser, tmp_path, path) as (page, lab):
        menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
        assert {"文件", "编辑", "运行"} <= set(menus), f"the interface is not Chinese: {menus}"
        run_all_cells(page, lab, ZH_NOTEBOOK, expected.code_cells)
        assert wait_for_images(page) >= expected.images
        assert widget_redraws(page, 0), "the widget did not redraw"
        screenshot_notebook(page, bs.SCREENSHOTS / f"browser-zh_CN-{path.stem}.png")
        problems = check_deck(f"zh_CN/{ZH_NOTEBOOK}", present(page, ZH_NOTEBOOK), slide_count(path))
        assert not problems, "\n".join(problems)

        type_and_run_a_new_cell(page, WRONG_ANSWER)
        deadline = time.monotonic() + 60
        while not bs.error_outputs(page, ZH_NOTEBOOK) and time.monotonic() < deadline:
            page.wait_for_timeout(300)
        hint = "\n".join(bs.error_outputs(page, ZH_NOTEBOOK))
        page.screenshot(path=bs.SCREENSHOTS / "browser-zh_CN-hint.png")
    expected = chinese_hint(monkeypatch)
    assert re.search("[\u4e00-\u9fff]", expected), expected
    assert "ExerciseFailed" in hint and expected in "".join(hint.split("\n")), hint
