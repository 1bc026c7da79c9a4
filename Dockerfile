FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY apps ./apps
COPY config ./config
RUN pip install --no-cache-dir .
COPY . .
# Vendored minified scripts end with a source-map comment whose .map file is not shipped; the
# manifest storage would refuse to hash a file that points at a missing one.
RUN sed -i '/^\/\/# sourceMappingURL=/d' static/vendor/*/*.js \
 && DJANGO_SETTINGS_MODULE=config.settings.production DJANGO_SECRET_KEY=collectstatic-only \
    DJANGO_ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput
EXPOSE 8000
