# SWE-bench layer 3 (one per instance): the repository at its base commit in /testbed,
# installed into the environment's venv; the wheels its reinstall needs stay in /opt/wheels.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
COPY --chown=1000:1000 wheels/ /opt/wheels/
COPY --chown=1000:1000 testbed/ /testbed/
COPY --chown=1000:1000 install.sh /opt/dgm-env/instance-install.sh
RUN cd /testbed \
 && . /opt/miniconda3/bin/activate && conda activate testbed \
 && /bin/bash -eux /opt/dgm-env/instance-install.sh
