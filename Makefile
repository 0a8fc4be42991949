# The README's two commands:
#   make lab    set up .venv (first run only) and open the course in JupyterLab
#   make test   set up .venv (first run only), lint, run the library tests and every notebook
#   make test-kernels   the library tests and every notebook (browser test aside) under both
#                       CPU kernel sets and 1 and 2 threads: what must hold on any machine

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip
# Written after a successful install; pip runs again only when these inputs change.
STAMP := $(VENV)/.course-installed
KERNEL_NAME := transformer-course
KERNEL_DISPLAY := Transformer course
NBGRADER_SERVER_EXTENSIONS := $(addprefix nbgrader.server_extensions.,\
	formgrader validate_assignment assignment_list course_list)

export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Prefer the venv's kernels over any user-wide `python3` kernel of another Python.
export JUPYTER_PREFER_ENV_PATH := 1

# Every notebook top to bottom, each output compared with the stored one.
NBVAL := --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg

# Jupyter refuses to start as root without this flag (containers, CI).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test test-kernels install format student handouts

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(ALLOW_ROOT)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VPY) -m pytest tests
	@if find notebooks -maxdepth 1 -name '*.ipynb' 2>/dev/null | grep -q .; then \
		echo "$(VPY) -m pytest $(NBVAL)"; \
		$(VPY) -m pytest $(NBVAL); \
	else \
		echo "No notebooks in notebooks/ yet: skipping the notebook run."; \
	fi

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
	done; done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "All four kernel/thread runs passed."

install: $(STAMP)

# The student edition, in student/: every notebook with its solutions replaced by stubs and
# its outputs cleared, by nbgrader's own preprocessors (no nbgrader course needed).
student: $(STAMP)
	$(VPY) tools/make_student.py --src notebooks --out student

# The handouts: one static HTML page per notebook (stored outputs, nothing re-run) that
# opens offline from disk, in handouts/ (rebuilt from scratch each time).
handouts: $(STAMP)
	rm -rf handouts
	$(VPY) tools/make_handouts.py --src notebooks --out handouts

# Apply ruff's formatting and safe lint fixes (notebooks included).
format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(VPY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "The course needs Python >= 3.10; '$(PYTHON)' is older. Try: make PYTHON=python3.11 ..."; exit 1; }
	$(PYTHON) -m venv $(VENV)

# The package (editable) with its test tools and nbgrader (the `instructor` extra), pinned
# by constraints.txt, and a named Jupyter kernel inside the venv (--sys-prefix: nothing is
# written outside the repo). nbgrader's JupyterLab menu and server extensions (formgrader,
# assignment list, ...) need a course and an exchange on a JupyterHub; they are switched off
# here so that the students' JupyterLab shows none of them. The command line still works.
# tools/lab_settings/overrides.json becomes JupyterLab's default settings: the course runs
# offline, so it neither asks to fetch Jupyter's news nor checks for updates.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
$(STAMP): pyproject.toml constraints.txt Makefile tools/lab_settings/overrides.json | $(VPY)
	$(PIP) install -c constraints.txt -e '.[test,instructor]'
	mkdir -p $(dir $(LAB_OVERRIDES)) && cp tools/lab_settings/overrides.json $(LAB_OVERRIDES)
	$(VPY) -m ipykernel install --sys-prefix --name $(KERNEL_NAME) --display-name "$(KERNEL_DISPLAY)"
	$(VENV)/bin/jupyter server extension disable --sys-prefix $(NBGRADER_SERVER_EXTENSIONS) >/dev/null 2>&1
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1
	@touch $@
