"""The glue between the control plane and the engine: the node process (``manage.py runnode``)."""
