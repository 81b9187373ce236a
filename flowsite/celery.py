"""The Celery application behind the ``jobs`` process (``celery -A flowsite worker``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flowsite.settings")

app = Celery("flowsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
