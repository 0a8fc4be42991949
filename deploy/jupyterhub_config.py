# The course's JupyterHub on one server, as The Littlest JupyterHub runs one: local system
# users, each student's JupyterLab a process of its own user, nbgrader's exchange a folder
# that every user can reach. deploy/INSTRUCTORS.md, "Teaching a class on JupyterHub", says how to start it;
# tests/test_hub.py runs a class through it (with test users and ports on 127.0.0.1).
#
#     cd /srv/jupyterhub && sudo /srv/course/.venv/bin/jupyterhub -f /srv/course/deploy/jupyterhub_config.py
#
# The hub runs as root (it starts each user's server as that user) and keeps its state,
# jupyterhub.sqlite and jupyterhub_cookie_secret, in the folder it starts in.
import os
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub defines it when it reads the file)

# The course repository (this file is deploy/jupyterhub_config.py in it) and the user
# environment: the repository's .venv, made by `make install` with the same pins as `make
# lab` (nbgrader, the Chinese language pack, JupyterHub and nbgitpuller included).
COURSE = Path(__file__).resolve().parents[1]
ENV = COURSE / ".venv"
# Jupyter settings by role (deploy/jupyter/): which nbgrader extensions a user's JupyterLab
# loads, and nbgrader's course and exchange.
ROLES = COURSE / "deploy" / "jupyter"

# -- Who: the class ---------------------------------------------------------------------
# Local system users, one per person; their names are nbgrader's student ids. The hub
# groups say who teaches. Add students here (and restart the hub) or on the hub's admin
# page (then add them to the group "students" there too).
INSTRUCTORS = ["instructor"]
STUDENTS = ["student1", "student2"]
c.JupyterHub.load_groups = {
    "instructors": {"users": INSTRUCTORS},
    "students": {"users": STUDENTS},
}
c.Authenticator.allowed_users = set(INSTRUCTORS + STUDENTS)
c.Authenticator.admin_users = set(INSTRUCTORS)  # the hub's admin page: start, stop, add users
# Logging in: PAM (the default) checks the users' system passwords. For a class with
# institutional accounts, use the university's login instead: an OAuthenticator
# (GitHub, Google, generic OpenID Connect) or ltiauthenticator from the learning management
# system, with `c.LocalAuthenticator.create_system_users = True` so that a first login
# creates the system user (as `useradd -m -K HOME_MODE=0700 NAME`; see deploy/INSTRUCTORS.md).
c.JupyterHub.authenticator_class = "pam"

# -- Where: the address ------------------------------------------------------------------
# Port 8000 on every interface. Put it behind HTTPS (a reverse proxy such as Caddy or
# nginx, or c.JupyterHub.ssl_cert / ssl_key): students type passwords into it.
c.JupyterHub.bind_url = "http://:8000"
# The proxy in front of the hub and the users' servers: npm's configurable-http-proxy,
# pinned by deploy/package-lock.json and installed by `make hub-proxy`.
c.ConfigurableHTTPProxy.command = [str(COURSE / "deploy/node_modules/.bin/configurable-http-proxy")]

# -- What each user runs ----------------------------------------------------------------
c.JupyterHub.spawner_class = "localprocess"  # one process per user, as that user
c.Spawner.cmd = [str(ENV / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # a busy server may take a while to import JupyterLab


def jupyter_config_path(spawner) -> str:
    """The user's Jupyter settings: their role's folder first, then the course's."""
    instructor = any(group.name == "instructors" for group in spawner.user.groups)
    role = ROLES / ("instructors" if instructor else "students")
    return os.pathsep.join([str(role), str(ROLES / "course")])


c.Spawner.environment = {
    # Students get nbgrader's assignment list; instructors also its formgrader (`make lab`
    # on a laptop loads neither; the settings are in deploy/jupyter/).
    "JUPYTER_CONFIG_PATH": jupyter_config_path,
    # The course environment first: its kernel, and nbgrader's `alembic` (run from PATH).
    "PATH": os.pathsep.join([str(ENV / "bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
    "JUPYTER_PREFER_ENV_PATH": "1",
    # One thread per kernel: on a shared server more threads only wait for each other, and
    # the course's numbers hold at one thread (`make test` runs that way). Raise it together
    # with a CPU limit per user (Kubernetes, TLJH) on a server with cores to spare.
    "OMP_NUM_THREADS": "1",
    # The language of the library's messages (exercise hints, widgets) outside the course's
    # notebooks, e.g. a script run in a terminal: each notebook chooses its own in its first
    # cell (set_language), so notebooks/zh_CN speaks Chinese here too. JupyterLab's own
    # language is each user's choice (Settings -> Language -> 中文); the language pack is
    # installed.
    "COURSE_LANG": "en",
}
# What one student needs (measured, deploy/INSTRUCTORS.md): the largest notebook's kernel peaks at 0.6 GiB
# (notebook 07's), a user's Jupyter server at 0.17 GiB; the limit leaves room for a second
# open kernel. LocalProcessSpawner enforces neither number; The Littlest JupyterHub
# (`tljh-config set limits.memory 2G`) and Kubernetes do.
c.Spawner.mem_guarantee = "1G"
c.Spawner.mem_limit = "2G"
