"""The portal: server-rendered pages to log in, switch tenant, browse and edit flows, manage tokens."""
