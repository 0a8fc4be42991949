# The README's two commands:
#   make lab    set up .venv (first run only) and open the course in JupyterLab
#   make test   set up .venv (first run only), lint, run the library tests and every notebook

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

# Jupyter refuses to start as root without this flag (containers, CI).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test install format student handouts

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(ALLOW_ROOT)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VPY) -m pytest tests
	@if find notebooks -maxdepth 1 -name '*.ipynb' 2>/dev/null | grep -q .; then \
		echo "$(VPY) -m pytest --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg"; \
		$(VPY) -m pytest --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg; \
	else \
		echo "No notebooks in notebooks/ yet: skipping the notebook run."; \
	fi

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
$(STAMP): pyproject.toml constraints.txt Makefile | $(VPY)
	$(PIP) install -c constraints.txt -e '.[test,instructor]'
	$(VPY) -m ipykernel install --sys-prefix --name $(KERNEL_NAME) --display-name "$(KERNEL_DISPLAY)"
	$(VENV)/bin/jupyter server extension disable --sys-prefix $(NBGRADER_SERVER_EXTENSIONS) >/dev/null 2>&1
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1
	@touch $@
