"""ragkit's part of a JupyterHub configuration (docs/deploy-jupyterhub.md, section 3)."""

# TLJH: copy this file to /opt/tljh/config/jupyterhub_config.d/ragkit.py, then `sudo tljh-config reload`.
# A plain JupyterHub: `load_subconfig("/srv/ragkit/docs/jupyterhub_config.py")` in your jupyterhub_config.py.
# tests/integration/hub/test_hub.py starts a real hub with this very file; it adds only its ports, its proxy, its
# users and its own folder in place of /srv/ragkit-shared.
c = get_config()  # noqa: F821 (JupyterHub defines get_config in its configuration files)

c.Spawner.environment = {
    # the class's cache, filled once by the teacher and read-only (section 2 of the guide)
    "RAGKIT_SHARED_CACHE": "/srv/ragkit-shared",
    # the student's own: every spawner sets HOME to the student's home, and ragkit expands "~"
    "RAGKIT_CACHE": "~/.ragkit-cache",
    # the server settings `make lab` and Binder use, from the checkout of section 1 (binder/jupyter_server_config.json):
    # the /ragkit/workspace link the class link opens (the student's copies in my-notebooks/, so a pull never meets
    # a student's change), and kernels on unix sockets
    "JUPYTER_CONFIG_PATH": "/srv/ragkit/binder",
}
# JupyterLab, not the classic file tree, when a student's server starts
c.Spawner.default_url = "/lab"

# Only where single-user servers run AS ROOT (a container whose spawner does not change user, such as
# SimpleLocalProcessSpawner started by root): Jupyter refuses to start as root unless told to, and the hub
# then reports nothing more than "InvalidStateError: Exception is not set". Servers of real users
# (LocalProcessSpawner, TLJH's SystemdSpawner, Kubernetes pods as jovyan) need no flag: leave it out.
# c.Spawner.args = ["--allow-root"]
