"""A django-oauth-toolkit OAuth2 server for the integration tests (see server.py)."""
