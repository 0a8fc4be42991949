# nbgrader settings for this course. `make student` reads them (tools/make_student.py), and
# an nbgrader course directory on JupyterHub should start from a copy of this file, so that
# `nbgrader generate_assignment` hands out the same notebooks as `make student`.
import os

c = get_config()  # noqa: F821 (nbgrader defines it when it reads the file)

# The stub that replaces each `### BEGIN SOLUTION` ... `### END SOLUTION` block: the check
# then tells the student that the function is "not implemented yet". It speaks the
# edition's language: COURSE_LANG=zh_CN (as the Chinese class's hub sets it) gives the
# Chinese one; `make student` asks for each notebook's own language (tools/make_student.py).
STUBS = {
    "en": 'raise NotImplementedError("Exercise: write your solution here")',
    "zh_CN": 'raise NotImplementedError("练习：在这里写下你的解答")',
}
c.ClearSolutions.code_stub = {"python": STUBS[os.environ.get("COURSE_LANG") or "en"]}

# Autograding runs each notebook top to bottom; notebook 07 trains for about two minutes in
# one cell, and nbgrader's default limit is 30 s per cell.
c.Execute.timeout = 600
