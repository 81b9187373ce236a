"""Portal pages, one module per kind of page."""
