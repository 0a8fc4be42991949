# nbgrader's settings for every user of the hub (deploy/jupyterhub_config.py puts this folder
# on each user's JUPYTER_CONFIG_PATH): the course and the exchange that hands assignments
# out and submissions in.
c = get_config()  # noqa: F821 (nbgrader defines it when it reads the file)

c.CourseDirectory.course_id = "transformer-course"
# One folder on the server, writable by every user with the sticky bit set (root makes it:
# `install -d -m 1777 /srv/nbgrader/exchange`). nbgrader creates the course's folders in it
# with the permissions that keep students apart: a student can list and fetch what was
# released, but can neither list the others' submissions nor the others' feedback.
c.Exchange.root = "/srv/nbgrader/exchange"
