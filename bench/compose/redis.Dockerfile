# Stand-in for redis:7 (see build_offline_images.sh): Debian's redis-server (7.0) in the
# foreground on every interface, protected mode off (reachable only on the Compose network),
# with redis-cli for the healthcheck.
FROM pluralist-local/debian:bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data", "--daemonize", "no"]
