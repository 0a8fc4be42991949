# nbgrader's settings for the instructors (a folder on their JUPYTER_CONFIG_PATH only).
from pathlib import Path

c = get_config()  # noqa: F821 (nbgrader defines it when it reads the file)

# The course directory: source/<assignment>/ holds the instructor's notebooks, and nbgrader
# writes release/, submitted/, autograded/, feedback/ and gradebook.db beside it.
c.CourseDirectory.root = str(Path.home() / "course")
# The course's own settings (the stub that replaces a solution, the cell time limit), as
# `make student` uses them: tools/nbgrader_config.py of the repository that holds this file.
load_subconfig(str(Path(__file__).resolve().parents[3] / "tools" / "nbgrader_config.py"))  # noqa: F821
