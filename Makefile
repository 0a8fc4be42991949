# The README's two commands:
#   make lab    set up .venv (first run only) and open the course in JupyterLab
#   make test   set up .venv (first run only), lint, run the library tests and every notebook
#   make test-kernels   the library tests and every notebook (browser test aside) under both
#                       CPU kernel sets and 1 and 2 threads: what must hold on any machine
#   make lab-zh the Chinese edition (notebooks/zh_CN) in JupyterLab's Chinese interface
#   make zh     rebuild the Chinese edition from the English notebooks and locale/zh_CN, and run it

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip
# Written after a successful install; pip runs again only when these inputs change.
STAMP := $(VENV)/.course-installed
# Written after `npm ci` installed the hub's proxy (see hub-proxy).
HUB_PROXY := deploy/node_modules/.course-installed
KERNEL_NAME := transformer-course
KERNEL_DISPLAY := Transformer course
NBGRADER_SERVER_EXTENSIONS := $(addprefix nbgrader.server_extensions.,\
	formgrader validate_assignment assignment_list course_list)

export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Prefer the venv's kernels over any user-wide `python3` kernel of another Python.
export JUPYTER_PREFER_ENV_PATH := 1

# Every notebook top to bottom, each output compared with the stored one: the English
# edition, then the Chinese one (notebooks/zh_CN) with the library speaking Chinese.
# A cell gets 450 s (nbval's default is 2000): CELL_TIMEOUT_S in tests/notebook_runs.py,
# which says why; a cell that never answers fails within minutes.
NBVAL_ARGS := --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=450
NBVAL := --nbval notebooks --ignore=notebooks/zh_CN $(NBVAL_ARGS)
NBVAL_ZH := --nbval notebooks/zh_CN $(NBVAL_ARGS)

# The edition `make student` and `make handouts` build: en (default) or zh_CN
# (`make student COURSE_LANG=zh_CN`). Each notebook makes the library speak its edition's
# language itself (set_language in its first cell); COURSE_LANG is the library's language
# outside the notebooks. JupyterLab's interface language is a setting (tools/lab_settings/zh_CN).
COURSE_LANG ?= en
EDITION := $(if $(filter zh_CN,$(COURSE_LANG)),notebooks/zh_CN,notebooks)
SUFFIX := $(if $(filter zh_CN,$(COURSE_LANG)),_zh_CN)

# Jupyter refuses to start as root without this flag (containers, CI).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab lab-zh zh test test-kernels install hub-proxy format student handouts

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(ALLOW_ROOT)

# JupyterLab reads the interface language from the user settings in JUPYTERLAB_SETTINGS_DIR:
# the Chinese edition's own folder (made by the install), so `make lab` stays English.
LAB_ZH_SETTINGS := $(VENV)/share/jupyter/lab/user-settings-zh_CN
lab-zh: $(STAMP)
	JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/$(LAB_ZH_SETTINGS) \
		$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks/zh_CN $(ALLOW_ROOT)

# The Chinese edition: each English notebook plus its catalogue, executed with outputs stored.
# After changing an English notebook, run `$(VPY) tools/i18n_notebooks.py extract` first and
# translate the entries it marks (tests/test_i18n.py fails until then).
zh: $(STAMP)
	$(VPY) tools/i18n_notebooks.py build
	cd notebooks/zh_CN && $(CURDIR)/$(VENV)/bin/jupyter nbconvert --to notebook \
		--execute --inplace --ExecutePreprocessor.record_timing=False \
		--ExecutePreprocessor.timeout=900 [0-9][0-9]_*.ipynb

# `make test` keeps both cores busy: the library tests spread over TEST_JOBS pytest workers,
# then the two editions' notebooks side by side. Each process computes on one thread (two
# 2-thread torch processes on 2 cores slow each other down); what a test or a stored output
# compares holds at 1 and 2 threads alike (see test-kernels).
TEST_JOBS ?= 2
test: $(STAMP) $(HUB_PROXY)
	$(VENV)/bin/ruff check .
	OMP_NUM_THREADS=1 $(VPY) -m pytest -n $(TEST_JOBS) --dist loadgroup tests
	OMP_NUM_THREADS=1 $(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target \
		test-notebooks-en test-notebooks-zh

.PHONY: test-notebooks-en test-notebooks-zh
test-notebooks-en: $(STAMP)
	$(VPY) -m pytest $(NBVAL)
# The Chinese edition's run also records every figure's text as it is drawn (COURSE_FIGURE_TEXT,
# transformer_lib/fonts.py), and tests/test_zh_english.py then looks for English in it.
FIGURE_TEXT := build/zh_CN_figure_text.jsonl
test-notebooks-zh: $(STAMP)
	rm -f $(FIGURE_TEXT)
	COURSE_FIGURE_TEXT=$(CURDIR)/$(FIGURE_TEXT) $(VPY) -m pytest $(NBVAL_ZH)
	COURSE_FIGURE_TEXT=$(CURDIR)/$(FIGURE_TEXT) $(VPY) -m pytest -q -m figure_text tests/test_zh_english.py

# The same tests under each of PyTorch's portable CPU kernel sets (`default`, `avx2`; the
# kernel set decides summation order, so results differ in the last bits) at 1 and at 2
# threads: four runs, each printing its own summary; fails if any run failed. Numbers
# that a test or a stored notebook output compares must hold in all four.
KERNEL_SETS := default avx2
THREAD_COUNTS := 1 2
test-kernels: $(STAMP)
	@failed=""; \
	for kernels in $(KERNEL_SETS); do for threads in $(THREAD_COUNTS); do \
		export ATEN_CPU_CAPABILITY=$$kernels OMP_NUM_THREADS=$$threads; \
		run="ATEN_CPU_CAPABILITY=$$kernels OMP_NUM_THREADS=$$threads"; \
		echo "=== $$run"; \
		$(VPY) -m pytest -q -m "not browser" tests || failed="$$failed [$$run: tests]"; \
		$(VPY) -m pytest -q $(NBVAL) || failed="$$failed [$$run: notebooks]"; \
		$(VPY) -m pytest -q $(NBVAL_ZH) || failed="$$failed [$$run: zh_CN notebooks]"; \
	done; done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "All four kernel/thread runs passed."

install: $(STAMP)

# The hub's proxy (deploy/INSTRUCTORS.md, "Teaching a class on JupyterHub"): npm's
# configurable-http-proxy as deploy/package-lock.json pins it, in deploy/node_modules.
# `make test` installs it where npm exists; without it, tests/test_hub.py skips and says so
# (and fails under .ci/run, which allows no skip).
hub-proxy: $(HUB_PROXY)
$(HUB_PROXY): deploy/package.json deploy/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd deploy && npm ci --no-audit --no-fund && touch $(CURDIR)/$@; \
	else echo "No npm here: the hub's proxy is not installed (tests/test_hub.py will skip, and fail in CI)."; fi

# The student edition, in student/ (the Chinese edition's in student_zh_CN/): every notebook with its solutions replaced by stubs and
# its outputs cleared, by nbgrader's own preprocessors (no nbgrader course needed).
student: $(STAMP)
	$(VPY) tools/make_student.py --src $(EDITION) --out student$(SUFFIX)

# The handouts: one static HTML page per notebook (stored outputs, nothing re-run) that
# opens offline from disk, in handouts/ or handouts_zh_CN/ (rebuilt from scratch each time).
handouts: $(STAMP)
	rm -rf handouts$(SUFFIX)
	$(VPY) tools/make_handouts.py --src $(EDITION) --out handouts$(SUFFIX) --lang $(if $(SUFFIX),zh_CN,en)

# Apply ruff's formatting and safe lint fixes (notebooks included).
format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(VPY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "The course needs Python >= 3.10; '$(PYTHON)' is older. Try: make PYTHON=python3.11 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)

# The package (editable) with the course's tools (the `course` extra: JupyterLab, slides,
# handouts), its test tools and nbgrader (the `instructor` extra), pinned
# by constraints.txt, and a named Jupyter kernel inside the venv (--sys-prefix: nothing is
# written outside the repo). nbgrader's JupyterLab menu and server extensions (formgrader,
# assignment list, ...) need a course and an exchange on a JupyterHub; they are switched off
# here so that the students' JupyterLab shows none of them. The command line still works.
# tools/lab_settings/overrides.json becomes JupyterLab's default settings: the course runs
# offline, so it neither asks to fetch Jupyter's news nor checks for updates.
# tools/lab_settings/zh_CN holds the user settings `make lab-zh` starts with: locale zh_CN,
# and code and outputs in a font that draws a Chinese character two columns wide (theme
# overrides are read from the user's settings only, not from overrides.json).
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
$(STAMP): pyproject.toml constraints.txt Makefile $(shell find tools/lab_settings -type f) | $(VPY)
	$(PIP) install -c constraints.txt -e '.[course,test,instructor]'
	mkdir -p $(dir $(LAB_OVERRIDES)) && cp tools/lab_settings/overrides.json $(LAB_OVERRIDES)
	rm -rf $(LAB_ZH_SETTINGS) && cp -r tools/lab_settings/zh_CN $(LAB_ZH_SETTINGS)
	$(VPY) -m ipykernel install --sys-prefix --name $(KERNEL_NAME) --display-name "$(KERNEL_DISPLAY)"
	$(VENV)/bin/jupyter server extension disable --sys-prefix $(NBGRADER_SERVER_EXTENSIONS) >/dev/null 2>&1
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1
	@touch $@
