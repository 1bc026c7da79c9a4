# Stand-in for postgres:16 (see build_offline_images.sh): Debian's PostgreSQL 15, data in
# /var/lib/postgresql/data, an entrypoint that honours POSTGRES_DB, POSTGRES_USER and
# POSTGRES_PASSWORD on first start, and pg_isready on PATH for the healthcheck. A command
# `postgres -c name=value ...` (docker-compose.scale.yml) is passed to the server.
FROM pluralist-local/debian:bookworm
ENV LANG=C.UTF-8 PGDATA=/var/lib/postgresql/data \
    PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && test ! -e /var/lib/postgresql/15/main \
 && mkdir -p /var/lib/postgresql/data /run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /run/postgresql \
 && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
