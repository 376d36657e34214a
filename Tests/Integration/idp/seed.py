"""Creates the user and the applications of accounts.py in a freshly migrated database."""

from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model

from idp import accounts


def seed() -> None:
    user = get_user_model().objects.create_user(accounts.USERNAME, password=accounts.PASSWORD)
    Application = get_application_model()
    common = {"user": user, "skip_authorization": True}
    Application.objects.create(
        name="password", client_id=accounts.PASSWORD_CLIENT_ID, client_secret=accounts.PASSWORD_CLIENT_SECRET,
        client_type=Application.CLIENT_CONFIDENTIAL, authorization_grant_type=Application.GRANT_PASSWORD,
        **common)
    Application.objects.create(
        name="service", client_id=accounts.SERVICE_CLIENT_ID, client_secret=accounts.SERVICE_CLIENT_SECRET,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS, **common)
    # skip_authorization: the user's consent is given, so /o/authorize/ answers with the
    # redirect straight away and a script can drive it with nothing but a session cookie.
    Application.objects.create(
        name="public", client_id=accounts.PUBLIC_CLIENT_ID, client_secret="",
        client_type=Application.CLIENT_PUBLIC, authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=accounts.REDIRECT_URI, **common)
    Application.objects.create(
        name="device", client_id=accounts.DEVICE_CLIENT_ID, client_secret="",
        client_type=Application.CLIENT_PUBLIC, authorization_grant_type=Application.GRANT_DEVICE_CODE,
        **common)
