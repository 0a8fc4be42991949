"""A class on a real JupyterHub: hand out, submit, grade, return (deploy/INSTRUCTORS.md,
"Teaching a class on JupyterHub").

The hub is deploy/jupyterhub_config.py as a class runs it, with test users, free ports on
127.0.0.1 and a temporary exchange: JupyterHub from the course environment, npm's
configurable-http-proxy, and one JupyterLab per user started as that local system user, so
the exchange's permissions are the real ones. Everyone acts through the hub's proxy with a
token the hub issued them: the instructor releases through the formgrader's API (what its
buttons call), the students work through nbgrader's assignment list (what the Assignments
tab calls), the contents API (what saving a notebook calls) and nbgitpuller's link. The
instructor grades with the guide's nbgrader commands, run as a terminal in their JupyterLab
runs them (as that user, in their home, with their server's environment). Nothing is written
into a user's files by the test itself.

It needs root (to create users and start their servers, as The Littlest JupyterHub's hub
runs), useradd, node and `make hub-proxy`; without them it skips and says why, and under CI
(COURSE_REQUIRE_HUB=1, which .ci/run sets, or CI set) that skip is a failure. Everything it
makes is removed afterwards, also on failure: the hub and every process of the test users,
the users with their homes, the exchange, and any permission it granted.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader_support import (
    GRADED,
    GRADING_TIMEOUT_S,
    answer,
    not_implemented,
    page_text,
    timed_out_cells,
    unwrapped,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import make_student  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
ENV = ROOT / ".venv"  # the user environment, as deploy/jupyterhub_config.py uses it
PROXY = DEPLOY / "node_modules" / ".bin" / "configurable-http-proxy"
REQUIRE_ENV = "COURSE_REQUIRE_HUB"
COURSE_ID = "transformer-course"  # deploy/jupyter/course/nbgrader_config.py
MIB = 2**20
GIT_AS_INSTRUCTOR = ["git", "-c", "user.name=Instructor", "-c", "user.email=instructor@example.org"]


def skip_reason() -> str | None:
    """Why the hub cannot run here, or None."""
    if sys.platform != "linux":
        return "the hub test creates local users: Linux only"
    if os.geteuid() != 0:
        return (
            "the hub test creates local users and starts their servers as them: "
            "run it as root (CI does; The Littlest JupyterHub's hub runs as root too)"
        )
    missing = [tool for tool in ("useradd", "userdel", "runuser", "node") if not shutil.which(tool)]
    if missing:
        return f"the hub test needs {', '.join(missing)} (node >= 20 runs the hub's proxy)"
    if not PROXY.exists():
        return f"no {PROXY.relative_to(ROOT)}: run `make hub-proxy` (needs npm)"
    if not (ENV / "bin" / "jupyterhub-singleuser").exists():
        return f"no JupyterHub in {ENV}: run `make install`"
    return None


def _required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1" or os.environ.get("CI", "") not in ("", "0", "false")


def skip_unless_a_hub_can_run() -> None:
    """Skip, saying why, where the hub cannot run; fail instead under CI."""
    reason = skip_reason()
    if reason and _required():
        pytest.fail(f"{REQUIRE_ENV}=1 (or CI) but {reason}", pytrace=False)
    elif reason:
        pytest.skip(reason)


# -- HTTP: the hub's REST API and each user's server, through the proxy ---------------------


def _request(method: str, url: str, token: str, body=None, form=None) -> tuple[int, bytes]:
    """`method` on `url` with `token`; the status and the body (no exception on 4xx/5xx)."""
    headers = {"Authorization": f"token {token}"}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@dataclass
class Hub:
    url: str  # the public address: the proxy
    token: str  # the test's admin service
    exchange: Path
    log: Path

    def api(self, method: str, path: str, body=None):
        status, data = _request(method, f"{self.url}/hub/api/{path}", self.token, body=body)
        assert status < 300, f"{method} /hub/api/{path}: {status} {data[:2000]!r}"
        return json.loads(data) if data else None


@dataclass
class User:
    """A hub user acting through their own server with their own token."""

    hub: Hub
    name: str
    token: str

    @property
    def server(self) -> str:
        return f"{self.hub.url}/user/{self.name}"

    def call(self, method: str, path: str, body=None, form=None, expect: int = 200):
        status, data = _request(method, f"{self.server}/{path}", self.token, body, form)
        assert status == expect, f"{self.name}: {method} {path}: {status} {data[:3000]!r}"
        return data

    def json(self, method: str, path: str, body=None, form=None, expect: int = 200):
        return json.loads(self.call(method, path, body, form, expect))

    def nbgrader(self, action: str) -> list[dict]:
        """An action of the Assignments tab on notebook 04 (fetch, submit, fetch_feedback):
        the assignment list it returns."""
        form = {"course_id": COURSE_ID, "assignment_id": GRADED}
        result = self.json("POST", f"assignments/{action}", form=form)
        assert isinstance(result, list) or result["success"], f"{self.name} {action}: {result}"
        return result if isinstance(result, list) else result["value"]

    def formgrader(self, action: str) -> dict:
        """A formgrader API call of the instructor's (POST): nbgrader's success and log."""
        result = self.json("POST", f"formgrader/api/{action}")
        assert result["success"], f"formgrader {action}: {result.get('error') or result}"
        return result

    def terminal(self, hub: Hub, command: str, timeout: int) -> str:
        """`command` as a terminal in the user's JupyterLab runs it: as the user, in their
        home, with their Jupyter server's environment (PATH, JUPYTER_CONFIG_PATH, ...).
        A run past `timeout` seconds is stopped, with every process it left, and fails."""
        pid = hub.api("GET", f"users/{self.name}")["servers"][""]["state"]["pid"]
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
        run = ["runuser", "-u", self.name, "--", "env", "-i", *filter(None, environ)]
        try:
            done = subprocess.run(
                [*run, "bash", "-c", f"cd && {command}"],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as stopped:
            for left in set(_processes_of(pwd.getpwnam(self.name).pw_uid)) - {pid}:
                with_suppressed(os.kill, left, signal.SIGKILL)
            said = (stopped.stderr or b"")[-3000:].decode(errors="replace")
            pytest.fail(f"{self.name}$ {command}: stopped after {timeout} s\n{said}")
        assert done.returncode == 0, f"{self.name}$ {command}\n{done.stdout}{done.stderr[-5000:]}"
        return done.stdout + done.stderr

    def save(self, path: str, model: dict) -> None:
        """Save a file or make a folder in the user's home, as JupyterLab does."""
        status, data = _request("PUT", f"{self.server}/api/contents/{path}", self.token, model)
        assert status in (200, 201), f"{self.name}: saving {path}: {status} {data[:2000]!r}"

    def read(self, path: str) -> dict:
        return self.json("GET", f"api/contents/{urllib.parse.quote(path)}?content=1")

    def page_config(self) -> dict:
        """The JupyterLab page's configuration: which extensions and plugins it loads."""
        page = self.call("GET", "lab").decode()
        start = page.index('<script id="jupyter-config-data" type="application/json">')
        start = page.index(">", start) + 1
        return json.loads(page[start : page.index("</script>", start)])


# -- deploy/ itself ----------------------------------------------------------------------------


def test_git_ignores_no_file_of_deploy():
    """A server and CI clone the repository: a file of deploy/ that git ignores (as
    `student/`, the student edition's folder, once ignored the students' settings) would be
    missing there."""
    if not (ROOT / ".git").exists() or not shutil.which("git"):
        pytest.skip("not a git clone")
    files = [p for p in DEPLOY.rglob("*") if p.is_file() and "node_modules" not in p.parts]
    assert len(files) >= 8, files
    check = subprocess.run(
        ["git", "check-ignore", *map(str, files)], cwd=ROOT, capture_output=True, text=True
    )
    assert check.stdout == "", f"git ignores: {check.stdout}"


# -- handing out the material: nbgitpuller links -----------------------------------------------


def readme_link() -> dict[str, str]:
    """The nbgitpuller link the instructor guide hands a class, its query parsed (repo,
    branch, urlpath)."""
    readme = (ROOT / "deploy" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    (link,) = set(re.findall(r"https://[^\s`)>]+/hub/user-redirect/git-pull\?[^\s`)>]+", readme))
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link).query))


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run([*GIT_AS_INSTRUCTOR, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[Path, Path]:
    """The student edition published as the guide says: `make student`'s notebooks in a
    repository of their own, pushed to a bare one named as the link's repository (GitHub's,
    in a class). The bare repository and the instructor's clone."""
    folder = tmp_path_factory.mktemp("published")
    link = readme_link()
    name = link["repo"].rstrip("/").rsplit("/", 1)[-1]
    # `make student` builds all ten; the notebook the link opens and notebook 04 will do
    course = folder / "notebooks"
    course.mkdir()
    for notebook in {Path(link["urlpath"]).name, f"{GRADED}.ipynb"}:
        shutil.copy(ROOT / "notebooks" / notebook, course)
    student = folder / "student"
    make_student.build(course, student)
    bare = folder / name
    _git(folder, "init", "--bare", "-b", "main", str(bare))
    _git(student, "init", "-b", "main")
    _git(student, "add", ".")
    _git(student, "commit", "-m", "The student edition")
    _git(student, "remote", "add", "origin", str(bare))
    _git(student, "push", "-u", "origin", "main")
    return bare, student


def test_the_readme_link_opens_a_notebook_of_the_student_edition():
    query = readme_link()
    repo = query["repo"].rstrip("/").rsplit("/", 1)[-1]
    assert query["branch"] == "main" and query["urlpath"].startswith(f"lab/tree/{repo}/")
    notebook = query["urlpath"].removeprefix(f"lab/tree/{repo}/")
    assert (ROOT / "notebooks" / notebook).is_file(), query["urlpath"]


def test_nbgitpuller_keeps_a_students_work_when_the_course_is_updated(published, tmp_path):
    """A second click on the link merges the instructor's update into the student's copy:
    the student's edited notebook keeps their answer and gains the instructor's change."""
    from nbgitpuller.pull import GitPuller

    bare, upstream = published
    copy = tmp_path / bare.name  # nbgitpuller's target: the repository's name, in the home

    def click():
        for _ in GitPuller(bare.as_uri(), str(copy), branch="main").pull():
            pass

    click()
    path = copy / f"{GRADED}.ipynb"
    mine = nbformat.read(path, as_version=4)
    (index, *_) = [
        i for i, c in enumerate(mine.cells) if c.metadata.get("nbgrader", {}).get("solution")
    ]
    source = nbformat.read(ROOT / "notebooks" / path.name, as_version=4)
    mine.cells[index].source = answer(source.cells[index].source)
    nbformat.write(mine, path)

    theirs = nbformat.read(upstream / path.name, as_version=4)
    theirs.cells[0].source += "\n\n(Updated after the first class.)"
    nbformat.write(theirs, upstream / path.name)
    nbformat.write(nbformat.v4.new_notebook(), upstream / "09_extra.ipynb")
    _git(upstream, "add", ".")
    _git(upstream, "commit", "-m", "An update during the course")
    _git(upstream, "push")

    click()
    after = nbformat.read(path, as_version=4)
    assert after.cells[index].source == mine.cells[index].source != theirs.cells[index].source
    assert after.cells[0].source == theirs.cells[0].source != mine.cells[0].source
    assert (copy / "09_extra.ipynb").is_file()


# -- fixtures: a place, users, the hub -------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _reachable(paths: list[Path]):
    """Let other users traverse to each of `paths` and read it, for as long as the hub runs:
    a clean clone may sit under a private folder (`mktemp -d` makes one 0700), the venv's
    Python under root's home (pyenv), and each user's server runs the course's environment
    from there. Every mode changed is restored."""
    changed: dict[Path, int] = {}
    for path in paths:
        for folder, needs in [(path, stat.S_IROTH | stat.S_IXOTH)] + [
            (parent, stat.S_IXOTH) for parent in path.parents
        ]:
            mode = stat.S_IMODE(folder.stat().st_mode)
            if mode & needs != needs and folder not in changed:
                changed[folder] = mode
                folder.chmod(mode | needs)
    try:
        yield
    finally:
        for folder, mode in changed.items():
            folder.chmod(mode)


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except FileNotFoundError:
                pass
    return pids


def _run_as(user: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", user, "--", *command], capture_output=True, text=True)


@pytest.fixture(scope="module")
def place():
    """A folder every test user may traverse: the hub's state, the homes, the exchange."""
    skip_unless_a_hub_can_run()
    base = Path(tempfile.mkdtemp(prefix="course-hub-"))
    base.chmod(0o755)
    python = (ENV / "bin" / "python").resolve()  # the venv's interpreter: its prefix too
    with _reachable([ROOT, ENV.resolve(), python.parents[1], base]):
        yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def users(place):
    """An instructor and two students, as local system users made the guide's way (a home
    that only its owner can enter); removed with their homes and processes afterwards."""
    suffix = secrets.token_hex(3)
    names = {role: f"{role}{suffix}" for role in ("teacher", "solver", "stubber")}
    created = []
    try:
        for name in names.values():
            home = place / "home" / name
            home.parent.mkdir(exist_ok=True, mode=0o755)
            subprocess.run(
                ["useradd", "--create-home", "--home-dir", str(home), name],
                check=True,
                capture_output=True,
            )
            created.append(name)
            home.chmod(0o700)  # as TLJH makes homes: `chmod o-rwx`; Debian's useradd gives 0755
        yield names
    finally:
        for name in created:
            _remove_user(name)


def _remove_user(name: str) -> None:
    """Stop every process of the test user `name`, then delete the user and their home
    (userdel refuses while one of their processes is still ending)."""
    uid = pwd.getpwnam(name).pw_uid
    deadline = time.monotonic() + 30
    while (pids := _processes_of(uid)) and time.monotonic() < deadline:
        for pid in pids:  # the test user's processes only
            with_suppressed(os.kill, pid, signal.SIGKILL)
        time.sleep(0.2)
    done = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    assert done.returncode in (0, 12), f"userdel {name}: {done.stderr}"  # 12: home not removed


def with_suppressed(function, *args) -> None:
    try:
        function(*args)
    except ProcessLookupError:
        pass


TEST_CONFIG = """
import os

c = get_config()
load_subconfig({deploy!r})  # the course's hub, as deploy/ has it; then the test's place:

c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
# Users log in through the hub's API here (tokens issued by the test's admin service).
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.load_groups = {groups!r}
c.Authenticator.allowed_users = {allowed!r}
c.Authenticator.admin_users = set()
c.JupyterHub.services = [{{"name": "course-test", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [
    {{
        "name": "course-test",
        "services": ["course-test"],
        "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens"],
    }}
]
# nbgrader's exchange in the test's place: its settings folder ahead of the course's.
_course_path = c.Spawner.environment["JUPYTER_CONFIG_PATH"]
c.Spawner.environment["JUPYTER_CONFIG_PATH"] = lambda spawner: os.pathsep.join(
    [{override!r}, _course_path(spawner)]
)
"""


@pytest.fixture(scope="module")
def hub(place, users):
    """deploy/jupyterhub_config.py running as root on 127.0.0.1, stopped afterwards with
    every server it started."""
    exchange = place / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # as the guide makes /srv/nbgrader/exchange
    override = place / "jupyter"
    override.mkdir()
    (override / "nbgrader_config.py").write_text(
        f"get_config().Exchange.root = {str(exchange)!r}\n"
    )
    state = place / "hub"
    state.mkdir()
    token = secrets.token_hex(32)
    port = _free_port()
    config = TEST_CONFIG.format(
        deploy=str(DEPLOY / "jupyterhub_config.py"),
        port=port,
        hub_port=_free_port(),
        api_port=_free_port(),
        groups={
            "instructors": {"users": [users["teacher"]]},
            "students": {"users": [users["solver"], users["stubber"]]},
        },
        allowed=set(users.values()),
        token=token,
        override=str(override),
    )
    (state / "jupyterhub_config.py").write_text(config)
    log = state / "jupyterhub.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [str(ENV / "bin" / "jupyterhub"), "-f", "jupyterhub_config.py"],
            cwd=state,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    hub = Hub(f"http://127.0.0.1:{port}", token, exchange, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"the hub exited:\n{log.read_text()[-5000:]}"
            assert time.monotonic() < deadline, f"no hub after 120 s:\n{log.read_text()[-5000:]}"
            try:
                if _request("GET", f"{hub.url}/hub/api/", token)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        yield hub
    finally:
        process.terminate()  # the hub stops the users' servers and the proxy
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        with_suppressed(os.killpg, process.pid, signal.SIGKILL)  # its proxy, if left
        print(f"The hub's log, last lines:\n{log.read_text()[-8000:]}")  # shown on a failure


@pytest.fixture(scope="module")
def git_server(published, place):
    """The published repository served read-only on 127.0.0.1 (git://), as GitHub serves
    it: each student's server clones it as that student. (A repository on the same disk
    would not do: git refuses to read one that another user owns.)"""
    bare, _ = published
    port = _free_port()
    process = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={bare.parent}"]
        + ["--listen=127.0.0.1", f"--port={port}", str(bare.parent)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(
            ["git", "ls-remote", f"git://127.0.0.1:{port}/{bare.name}"], capture_output=True
        ).returncode:
            assert time.monotonic() < deadline, "git daemon: not serving after 30 s"
            time.sleep(0.2)
        yield f"git://127.0.0.1:{port}/{bare.name}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


@pytest.fixture(scope="module")
def logged_in(hub, users) -> dict[str, User]:
    """Each user's server started through the hub's API, and a token of their own."""
    for name in users.values():
        status, data = _request("POST", f"{hub.url}/hub/api/users/{name}/server", hub.token)
        assert status in (201, 202), f"starting {name}'s server: {status} {data!r}"
    deadline = time.monotonic() + 180
    for name in users.values():
        while not hub.api("GET", f"users/{name}")["servers"].get("", {}).get("ready"):
            assert time.monotonic() < deadline, f"{name}'s server: not ready after 180 s"
            time.sleep(0.5)
    tokens = {
        role: hub.api("POST", f"users/{name}/tokens", {"note": "course test", "expires_in": 3600})
        for role, name in users.items()
    }
    return {role: User(hub, users[role], tokens[role]["token"]) for role in users}


# -- the test ---------------------------------------------------------------------------------


@pytest.mark.hub
@pytest.mark.slow
def test_a_class_on_jupyterhub(hub, logged_in, users, git_server):
    """The guide's link hands out the student edition; release notebook 04; one student
    solves it, one submits the stubs; collect, autograde, return feedback; each student
    reads their own feedback and cannot reach the other's."""
    start = time.monotonic()
    teacher, solver, stubber = (logged_in[role] for role in ("teacher", "solver", "stubber"))
    _check_who_sees_which_extensions(teacher, solver)
    _follow_the_readme_link(solver, git_server)

    # The instructor: notebook 04 into the course's source/, generated and released.
    source = nbformat.read(ROOT / "notebooks" / f"{GRADED}.ipynb", as_version=4)
    for folder in ("course", "course/source", f"course/source/{GRADED}"):
        teacher.save(folder, {"type": "directory"})
    teacher.save(
        f"course/source/{GRADED}/{GRADED}.ipynb",
        {"type": "notebook", "format": "json", "content": source},
    )
    teacher.formgrader(f"assignment/{GRADED}/assign")
    teacher.formgrader(f"assignment/{GRADED}/release")

    # The students: fetch; one fills in every solution, the other leaves the stubs; submit.
    for student in (solver, stubber):
        (fetched,) = [a for a in student.nbgrader("fetch") if a["status"] == "fetched"]
        assert fetched["assignment_id"] == GRADED
    path = f"{GRADED}/{GRADED}.ipynb"
    released = nbformat.from_dict(solver.read(path)["content"])
    assert all(cell.get("outputs", []) == [] for cell in released.cells)
    solutions = {
        cell.metadata.nbgrader["grade_id"]: cell.source
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("solution")
    }
    solved = _filled_in(released, solutions)
    solver.save(path, {"type": "notebook", "format": "json", "content": solved})
    for student in (solver, stubber):
        student.nbgrader("submit")

    # The instructor, in a terminal of their JupyterLab (the guide's commands): collect,
    # autograde, feedback generated and released, once. Autograding notebook 04 takes
    # seconds: the test's cell limit replaces the course's 600 s, so that a cell without a
    # reply fails within minutes, named below.
    said = teacher.terminal(
        hub,
        f"cd ~/course && nbgrader collect {GRADED}"
        f" && nbgrader autograde --Execute.timeout={GRADING_TIMEOUT_S} {GRADED}"
        f" && nbgrader generate_feedback {GRADED} && nbgrader release_feedback {GRADED}",
        timeout=300,
    )
    stopped = timed_out_cells(Path(pwd.getpwnam(teacher.name).pw_dir) / "course" / "autograded")
    assert not stopped, f"nbgrader stopped these cells at its time limit: {stopped}\n{said}"
    grades = teacher.json("GET", f"formgrader/api/submissions/{GRADED}")
    assert {g["student"]: (g["score"], g["max_score"]) for g in grades} == {
        solver.name: (3.0, 3.0),
        stubber.name: (0.0, 3.0),
    }

    # The students: each fetches their own feedback.
    feedback = {student.name: _fetch_feedback(student) for student in (solver, stubber)}
    stubs = not_implemented(released)
    shown = {name: unwrapped(page_text(page)) for name, (_, page) in feedback.items()}
    assert len(stubs) == 3 and all(unwrapped(stub) in shown[stubber.name] for stub in stubs)
    assert not any(unwrapped(stub) in shown[solver.name] for stub in stubs)
    assert all("Traceback(mostrecentcalllast)" not in text for text in shown.values())

    _check_students_are_apart(hub, solver, stubber, feedback)
    _report(hub, users, time.monotonic() - start)


def _filled_in(released, solutions: dict[str, str]):
    """The released notebook with each solution cell's stub replaced by the instructor's
    function body, as a student who solved every exercise saves it."""
    solved = nbformat.from_dict(json.loads(json.dumps(released)))
    filled = 0
    for cell in solved.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source, filled = answer(solutions[grade_id]), filled + 1
    assert filled == 3, f"notebook 04 has three exercises; filled {filled}"
    return solved


def _fetch_feedback(student: User) -> tuple[str, str]:
    """The student's Assignments tab: fetch the feedback; its path in their home and page."""
    listed = student.nbgrader("fetch_feedback")
    (submitted,) = [a for a in listed if a["status"] == "submitted"]
    (submission,) = submitted["submissions"]
    assert submission["has_local_feedback"] and not submission["feedback_updated"], submission
    path = f"{submission['local_feedback_path']}/{GRADED}.html"
    return path, student.read(path)["content"]


def _follow_the_readme_link(student: User, repo: str) -> None:
    """The guide's nbgitpuller link, its repository served here: the page it opens, then
    the pull that page runs (nbgitpuller's event stream), then the notebook it names."""
    query = {**readme_link(), "repo": repo}
    target = repo.rsplit("/", 1)[-1]
    page = student.call("GET", "git-pull?" + urllib.parse.urlencode(query)).decode()
    assert f'data-targetpath="{target}"' in page, page[:3000]  # where the page's script pulls
    pull = {"repo": repo, "branch": query["branch"], "targetpath": target}
    stream = student.call("GET", "git-pull/api?" + urllib.parse.urlencode(pull)).decode()
    events = [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:")]
    assert events and events[-1]["phase"] == "finished", stream[-3000:]
    opened = student.read(query["urlpath"].removeprefix("lab/tree/"))
    assert opened["type"] == "notebook" and opened["content"]["cells"]


def _check_who_sees_which_extensions(teacher: User, student: User) -> None:
    """Students get the assignment list and no instructor tools; the instructor gets the
    formgrader. (`make lab` loads neither: tests/test_packaging.py.)"""
    student.json("GET", f"assignments?course_id={COURSE_ID}")
    student.call("GET", "formgrader", expect=404)
    teacher.call("GET", "formgrader")
    disabled = set(student.page_config()["disabledExtensions"])
    assert (
        "@jupyter/nbgrader" not in disabled and "@jupyter/nbgrader:assignment-list" not in disabled
    )
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= disabled
    assert not any(
        name.startswith("@jupyter/nbgrader") for name in teacher.page_config()["disabledExtensions"]
    )


def _check_students_are_apart(hub: Hub, one: User, other: User, feedback: dict) -> None:
    """Neither the hub nor the file system lets a student reach the other's work."""
    home = {user.name: Path(pwd.getpwnam(user.name).pw_dir) for user in (one, other)}
    for reader, owner in ((one, other), (other, one)):
        # through the hub: the other's server refuses the reader's token
        status, _ = _request("GET", f"{owner.server}/api/contents/", reader.token)
        assert status == 403, f"{reader.name} reached {owner.name}'s server: {status}"
        # on the server: the other's home, and the exchange's submissions and feedback
        theirs = home[owner.name] / feedback[owner.name][0]
        assert _run_as(owner.name, "cat", str(theirs)).returncode == 0  # the path is right
        for command in (
            ["cat", str(theirs)],
            ["ls", str(hub.exchange / COURSE_ID / "inbound")],
            ["ls", str(hub.exchange / COURSE_ID / "feedback")],
        ):
            done = _run_as(reader.name, *command)
            assert done.returncode != 0 and "Permission denied" in done.stderr, (
                f"{reader.name} could run {command}: {done.stdout[:500]}"
            )


def _report(hub: Hub, users: dict, seconds: float) -> None:
    """What a student's server took: its peak resident memory (the kernel comes on top)."""
    for role in ("solver", "stubber", "teacher"):
        state = hub.api("GET", f"users/{users[role]}")["servers"][""]["state"]
        status = Path(f"/proc/{state['pid']}/status").read_text().splitlines()
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        print(f"{role}'s Jupyter server: peak RSS {peak * 1024 / MIB:.0f} MiB")
    print(f"the class, from the first request to the last: {seconds:.0f} s")
