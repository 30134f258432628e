# SWE-bench layer 2 (one per environment: repo, version, install steps): the venv
# `testbed` with the environment's packages, from wheels made on the host.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
COPY --chown=1000:1000 wheels/ /opt/wheels/
COPY --chown=1000:1000 env/ /opt/dgm-env/
RUN python3 -m venv /opt/miniconda3/envs/testbed \
 && . /opt/miniconda3/envs/testbed/bin/activate \
 && cd /opt/dgm-env && /bin/bash -eux ./install.sh
