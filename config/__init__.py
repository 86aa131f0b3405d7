"""The Django project: settings, URLs, WSGI/ASGI entry points and project-wide middleware."""
