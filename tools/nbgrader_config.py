# nbgrader settings for this course. `make student` reads them (tools/make_student.py), and
# an nbgrader course directory on JupyterHub should start from a copy of this file, so that
# `nbgrader generate_assignment` hands out the same notebooks as `make student`.
c = get_config()  # noqa: F821 (nbgrader defines it when it reads the file)

# The stub that replaces each `### BEGIN SOLUTION` ... `### END SOLUTION` block: the check
# then tells the student that the function is "not implemented yet".
c.ClearSolutions.code_stub = {
    "python": 'raise NotImplementedError("Exercise: write your solution here")',
}

# Autograding runs each notebook top to bottom; notebook 07 trains for about two minutes in
# one cell, and nbgrader's default limit is 30 s per cell.
c.Execute.timeout = 600
