"""--smtp-url read into a MailServer (escalated/domain/mailserver.py): schemes,
default ports, logins, and never showing the password."""

from __future__ import annotations

import pytest

from escalated.domain.mailserver import MailServer, parse_mail_server
from escalated.errors import ConfigError


@pytest.mark.parametrize(
    ("url", "scheme", "port"),
    [
        ("smtp://mail.example.com", "smtp", 25), ("smtp+starttls://mail.example.com", "smtp+starttls", 587),
        ("SMTPS://mail.example.com", "smtps", 465), ("smtp://mail.example.com:2525/", "smtp", 2525),
    ],
)
def test_schemes_and_their_default_ports(url, scheme, port):
    server = parse_mail_server(url)
    got = (server.scheme, server.host, server.port, server.username, server.sender)
    assert got == (scheme, "mail.example.com", port, None, "escalated@localhost")


def test_a_login_is_percent_decoded_and_never_shown():
    server = parse_mail_server("smtps://me%40example.com:p%40ss%3Aw%2Frd@mail.example.com", sender="ops@example.com")
    assert (server.username, server.password, server.sender) == ("me@example.com", "p@ss:w/rd", "ops@example.com")
    assert str(server) == "smtps://me@example.com:***@mail.example.com:465"
    assert "p@ss" not in repr(server) and "p@ss" not in str(server)


@pytest.mark.parametrize(
    "url", ["http://mail.example.com", "mail.example.com:25", "smtp://", "smtp://u:secret-pw@h:0x19", "smtp://u:secret-pw@h/inbox", "smtp://h?tls=1"]
)
def test_unusable_urls_are_named_without_the_password(url):
    with pytest.raises(ConfigError, match=r"^--smtp-url: ") as refused:
        parse_mail_server(url)
    assert "secret-pw" not in str(refused.value)


@pytest.mark.parametrize("sender", ["Ops <ops@example.com>", "ops@example.com\r\nBcc: x@y.z", "ops", "a@b, c@d"])
def test_smtp_from_is_one_address(sender):
    with pytest.raises(ConfigError, match=r"^--smtp-from"):
        parse_mail_server("smtp://h", sender=sender)


def test_the_default_sender_of_a_server_built_by_hand():
    assert MailServer(scheme="smtp", host="h", port=25).sender == "escalated@localhost"
