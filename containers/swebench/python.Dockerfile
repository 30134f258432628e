# SWE-bench layer 1 (shared by every environment): the dgm runtime plus venv support and
# the official layout: /opt/miniconda3/bin/activate (a shim: `conda activate testbed`
# activates the venv /opt/miniconda3/envs/testbed), /testbed, a wheelhouse at /opt/wheels.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv \
 && rm -rf /var/lib/apt/lists/*
COPY activate /opt/miniconda3/bin/activate
RUN mkdir -p /opt/miniconda3/envs /opt/wheels /opt/dgm-env /testbed \
 && chown agent:agent /opt/miniconda3/envs /opt/wheels /opt/dgm-env /testbed
# Offline pip: every install and the eval scripts' reinstalls use the wheelhouse only.
ENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheels PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CONSTRAINT=/opt/dgm-env/constraints.txt
USER agent
WORKDIR /testbed
