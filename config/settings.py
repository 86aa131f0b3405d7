"""Django settings for sysprompt, read from the environment.

Every variable is listed in docs/configuration.md. Application settings live in
the one ``SYSPROMPT`` dict and are read through ``sysprompt.conf``.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_float,
    env_int,
    env_json_object,
    env_list,
    env_str,
    local_secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)


def _secret_key() -> str:
    """SECRET_KEY from the environment; with DEBUG on, a per-checkout key as fallback.

    Unset with DEBUG off, the key stays empty: Django then refuses anything that signs
    (sessions, logins), and the WSGI/ASGI entry points refuse to start.
    """
    if key := env_str("SECRET_KEY", ""):
        return key
    return local_secret_key(BASE_DIR / ".secret_key") if DEBUG else ""


SECRET_KEY = _secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if ALLOWED_HOSTS is None:
    ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "django_tasks",
    "django_tasks_db",
    "sysprompt.events.apps.EventsConfig",
    "sysprompt.library.apps.LibraryConfig",
    "sysprompt.prompts.apps.PromptsConfig",
    "sysprompt.releases.apps.ReleasesConfig",
    "sysprompt.transfer.apps.TransferConfig",
    "sysprompt.accounts.apps.AccountsConfig",
    "sysprompt.evaluations.apps.EvaluationsConfig",
    "sysprompt.editor.apps.EditorConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files leave here, far-future cached
    "config.middleware.NoStoreMiddleware",
    "csp.middleware.CSPMiddleware",
    "config.middleware.ErrorResponseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "sysprompt.events.actors.ActorMiddleware",  # who changed users, groups, tokens: the audit
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # {{ when|ago }} on every page ("just now", "5 minutes ago").
            "builtins": ["sysprompt.editor.templatetags.relative_time"],
        },
    },
]


_CONN_MAX_AGE = env_int("CONN_MAX_AGE")
if _CONN_MAX_AGE is None:
    _CONN_MAX_AGE = 60


def _database(url: str) -> dict[str, Any]:
    config: dict[str, Any] = dict(
        dj_database_url.parse(
            url,
            conn_max_age=_CONN_MAX_AGE,
            conn_health_checks=True,
        )
    )
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    return config


DATABASES = {"default": _database(env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out username+address first
    "django.contrib.auth.backends.ModelBackend",
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "editor:index"
LOGOUT_REDIRECT_URL = None  # registration/logged_out.html says so and links back

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"


def _proxy_ssl_header() -> tuple[str, str] | None:
    """``SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto``: the TLS proxy in front says https.

    The proxy must set (overwrite) that header on every request it forwards.
    """
    name = env_str("SECURE_PROXY_SSL_HEADER", "").strip()
    if not name:
        return None
    if not re.fullmatch(r"[A-Za-z0-9-]+", name):
        raise ImproperlyConfigured(
            f"SECURE_PROXY_SSL_HEADER={name!r} is not a header name; use e.g. X-Forwarded-Proto."
        )
    return ("HTTP_" + name.upper().replace("-", "_"), "https")


SECURE_PROXY_SSL_HEADER = _proxy_ssl_header()
if SECURE_PROXY_SSL_HEADER is not None:  # served over HTTPS: cookies never travel in clear
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS") or []

# Content-Security-Policy on every answer (docs/production.md, "Content-Security-Policy").
# The nonce appears only in answers whose page used request.csp_nonce: the Swagger UI's
# (templates/api/swagger_ui.html) for drf-spectacular's inline <style>, and the editor's,
# whose CodeMirror writes its theme into <style> elements carrying that nonce.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}


# Login throttling with django-axes (docs/production.md, "Login throttling"): after
# AXES_FAILURE_LIMIT failures of one username from one address, that pair is refused
# with 429 for AXES_COOLOFF_MINUTES, even with the right password. Never a permanent lock.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT") or 5
AXES_COOLOFF_TIME = timedelta(minutes=env_float("AXES_COOLOFF_MINUTES") or 15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # a successful login before the limit starts the count anew
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # the pause ends when announced
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "config.security.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.security.client_ip"
# Behind proxies that append to X-Forwarded-For, how many: the client's address is that
# many entries from the right. 0 (the default): REMOTE_ADDR, the direct peer.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT") or 0


# Logs go to stderr (gunicorn and systemd collect it): django.request's errors with their
# traceback, the app's sysprompt.* loggers, at LOG_LEVEL (default INFO). Start-up banners
# are not news on every `manage.py` run, and stderr is where a command's diagnostics go:
# django-axes' "AXES: BEGIN …" (logger axes.apps) shows only at LOG_LEVEL=DEBUG, while its
# login and lockout events keep LOG_LEVEL.
LOG_LEVEL = env_str("LOG_LEVEL", "INFO").strip().upper() or "INFO"
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(
        f"LOG_LEVEL={LOG_LEVEL!r}: use DEBUG, INFO, WARNING, ERROR or CRITICAL."
    )
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "stderr": {"class": "config.log.StderrHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        # Replaces Django's DEBUG-only console handler: everything reaches the root's.
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "sysprompt": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "editor": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "axes": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "django_tasks": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "django_tasks_db": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "axes.apps": {
            "handlers": [],
            "level": LOG_LEVEL if LOG_LEVEL in {"DEBUG", "ERROR", "CRITICAL"} else "WARNING",
            "propagate": True,
        },
    },
}


# The task queue webhooks are delivered through (docs/events.md, "The worker"): Django's
# Tasks API with the database backend by default (its queue is a table of the same
# database, so a task is enqueued in the transaction of the change it reports), or RQ on
# the Redis at REDIS_URL. The events' tasks go to one named queue (SYSPROMPT_TASKS_QUEUE),
# evaluation runs to another (SYSPROMPT_EVAL_TASKS_QUEUE), worked by processes of their own
# (docs/evaluations.md, "Workers"), so a long run never delays a webhook.
TASKS_BACKEND = env_str("SYSPROMPT_TASKS_BACKEND", "database").strip().lower() or "database"
_TASKS_QUEUE = env_str("SYSPROMPT_TASKS_QUEUE", "default").strip() or "default"
_EVAL_TASKS_QUEUE = env_str("SYSPROMPT_EVAL_TASKS_QUEUE", "evaluations").strip() or "evaluations"
if TASKS_BACKEND == "database":
    # QUEUES empty: any name, so the queue comes from SYSPROMPT["TASKS_QUEUE"] alone.
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": []}}
elif TASKS_BACKEND == "rq":
    INSTALLED_APPS.append("django_rq")
    REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
    RQ_QUEUES = {
        _TASKS_QUEUE: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 600},
        # A run's task works a slice of it (sysprompt.evaluations.background.SLICE_SECONDS)
        # and the calls in flight then, well within this.
        _EVAL_TASKS_QUEUE: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 1800},
    }
    RQ_SHOW_ADMIN_LINK = False
    TASKS = {
        "default": {
            "BACKEND": "django_tasks_rq.RQBackend",
            "QUEUES": [_TASKS_QUEUE, _EVAL_TASKS_QUEUE],
        }
    }
else:
    raise ImproperlyConfigured(
        f"SYSPROMPT_TASKS_BACKEND={TASKS_BACKEND!r}: use database (the default) or rq."
    )


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "sysprompt.api.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["sysprompt.api.parsers.LimitedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "sysprompt.api.schema.SyspromptAutoSchema",
    "EXCEPTION_HANDLER": "sysprompt.api.errors.exception_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "sysprompt API",
    "DESCRIPTION": (
        "Templated system prompts for LLM agents, resolved once per conversation and sent "
        "byte-identical on every later turn. Authenticate with `Authorization: Token <key>`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every serializer is either a request's or a response's and names its component
    # (extend_schema_serializer), so no "…Request" twins are needed. Without the split,
    # a non-blank input field states its minLength itself (min_length, or a pattern).
    "COMPONENT_SPLIT_REQUEST": False,
    "ENUM_NAME_OVERRIDES": {
        "Severity": ["error", "warning"],
        "EventType": "sysprompt.events.catalog.EVENT_TYPES",
        "SentEventType": "sysprompt.events.catalog.SENT_TYPES",
    },
}


def _sysprompt() -> dict[str, Any]:
    """Only the keys whose variable is set; ``sysprompt.conf`` supplies the defaults."""
    values: dict[str, Any] = {
        "ALLOWED_ROOTS": env_list("SYSPROMPT_ALLOWED_ROOTS", separator=":"),
        "GIT_TIMEOUT": env_float("SYSPROMPT_GIT_TIMEOUT"),
        "GIT_WORKERS": env_int("SYSPROMPT_GIT_WORKERS"),
        "GIT_QUEUE_TIMEOUT": env_float("SYSPROMPT_GIT_QUEUE_TIMEOUT"),
        "GIT_MEMORY_LIMIT": env_int("SYSPROMPT_GIT_MEMORY_LIMIT"),
        "GIT_RECYCLE_BYTES": env_int("SYSPROMPT_GIT_RECYCLE_BYTES"),
        "GIT_LANDLOCK": (
            env_bool("SYSPROMPT_GIT_LANDLOCK", True)
            if "SYSPROMPT_GIT_LANDLOCK" in os.environ
            else None
        ),
        "GIT_ALLOW_UNCONFINED": (
            env_bool("SYSPROMPT_GIT_ALLOW_UNCONFINED", False)
            if "SYSPROMPT_GIT_ALLOW_UNCONFINED" in os.environ
            else None
        ),
        "MAX_FILE_BYTES": env_int("SYSPROMPT_MAX_FILE_BYTES"),
        "MAX_TEMPLATE_BYTES": env_int("SYSPROMPT_MAX_TEMPLATE_BYTES"),
        "MAX_PROMPT_BYTES": env_int("SYSPROMPT_MAX_PROMPT_BYTES"),
        "MAX_READ_BYTES": env_int("SYSPROMPT_MAX_READ_BYTES"),
        "MCP_WRITE": (
            env_bool("SYSPROMPT_MCP_WRITE", False) if "SYSPROMPT_MCP_WRITE" in os.environ else None
        ),
        "PARSE_CACHE_BYTES": env_int("SYSPROMPT_PARSE_CACHE_BYTES"),
        "COMPACTION_INSTRUCTIONS": os.environ.get("SYSPROMPT_COMPACTION_INSTRUCTIONS"),
        "SERVER_RESOLVES": env_list("SYSPROMPT_SERVER_RESOLVES"),
        "TASKS_QUEUE": os.environ.get("SYSPROMPT_TASKS_QUEUE"),
        "WEBHOOK_ALLOW_HTTP_HOSTS": env_list("SYSPROMPT_WEBHOOK_ALLOW_HTTP_HOSTS"),
        "WEBHOOK_ALLOW_PRIVATE": env_list("SYSPROMPT_WEBHOOK_ALLOW_PRIVATE"),
        "WEBHOOK_CA_FILE": os.environ.get("SYSPROMPT_WEBHOOK_CA_FILE"),
        "WEBHOOK_CONCURRENCY": env_int("SYSPROMPT_WEBHOOK_CONCURRENCY"),
        "WEBHOOK_CONNECT_TIMEOUT": env_float("SYSPROMPT_WEBHOOK_CONNECT_TIMEOUT"),
        "WEBHOOK_RETRY_WINDOW": env_float("SYSPROMPT_WEBHOOK_RETRY_WINDOW"),
        "WEBHOOK_TIMEOUT": env_float("SYSPROMPT_WEBHOOK_TIMEOUT"),
        "MODELS": env_json_object("SYSPROMPT_MODELS"),
        "TOKEN_RATIOS": env_json_object("SYSPROMPT_TOKEN_RATIOS"),
        "EVAL_CLAIM_SECONDS": env_float("SYSPROMPT_EVAL_CLAIM_SECONDS"),
        "EVAL_DEFAULT_MODEL": os.environ.get("SYSPROMPT_EVAL_DEFAULT_MODEL"),
        "EVAL_MAX_OUTPUT_CHARS": env_int("SYSPROMPT_EVAL_MAX_OUTPUT_CHARS"),
        "EVAL_MAX_CALLS_PER_RUN": env_int("SYSPROMPT_EVAL_MAX_CALLS_PER_RUN"),
        "EVAL_MAX_RUNS_PER_USER": env_int("SYSPROMPT_EVAL_MAX_RUNS_PER_USER"),
        "EVAL_DAILY_BUDGET": env_float("SYSPROMPT_EVAL_DAILY_BUDGET"),
        "EVAL_TASKS_QUEUE": os.environ.get("SYSPROMPT_EVAL_TASKS_QUEUE"),
    }
    return {key: value for key, value in values.items() if value is not None}


SYSPROMPT = _sysprompt()
