# Stand-in for python:3.11-slim (see build_offline_images.sh): Debian's python3.11 in a venv at
# /opt/venv, first on PATH, so `python` and `pip` are the venv's. pip reaches PyPI through the
# build host's CA bundle (a TLS-intercepting proxy's root on machines that need one).
FROM pluralist-local/debian:bookworm
ENV LANG=C.UTF-8 PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY host-ca.crt /usr/local/share/ca-certificates/host-ca.crt
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates python3.11 python3.11-venv \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && update-ca-certificates \
 && printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\ntimeout = 180\ndisable-pip-version-check = true\n' > /etc/pip.conf \
 && python3.11 -m venv /opt/venv \
 && python --version && pip --version
CMD ["python"]
