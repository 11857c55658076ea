"""Where callbacks may go (CONTRACT §5).

http(s) only; loopback is allowed (agents run locally); link-local and
cloud-metadata addresses are refused unless the host is explicitly allowed.
IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry, so
``::ffff:169.254.169.254`` is no way around the rule. The resolved address
is checked at delivery time, not only the name at creation.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from urllib.parse import urlsplit

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "100.100.100.200", "fd00:ec2::254", "169.254.170.2")
)


def _as_ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    address = address.split("%", 1)[0]
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        pass
    # Shorthand and non-decimal IPv4 (2852039166, 0xa9fea9fe, 0251.0376.0251.0376,
    # 169.254.43518): the system resolver reads these as addresses, so judge them so.
    if address and all(c in "0123456789abcdefxABCDEFX." for c in address):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(address))
        except OSError:
            return None
    return None


def address_problem(address: str) -> str | None:
    ip = _as_ip(address)
    if ip is None:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None
    if ip in METADATA_ADDRESSES:
        return f"{address} is a cloud metadata address"
    if ip.is_link_local:
        return f"{address} is a link-local address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return f"{address} is not a unicast address"
    return None


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    return host.lower().strip("[]") in {h.lower().strip("[]") for h in allowed}


def literal_problem(url: str, allowed: tuple[str, ...] = ()) -> str | None:
    """Checks that need no DNS: scheme, metadata names, literal addresses."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")  # "metadata.google.internal." is the same host
    if parts.scheme not in ("http", "https") or not host:
        return "must be an absolute http(s) URL"
    return _host_problem(host, tuple(allowed))


@functools.lru_cache(maxsize=1024)
def _host_problem(host: str, allowed: tuple[str, ...]) -> str | None:
    # Every create checks its callback URL, agents call back to a handful of
    # hosts, and parsing one with ipaddress costs microseconds: cache the
    # verdict. Safe because it is a pure function of its arguments (no DNS;
    # the allow-list is a setting, part of the key).
    if host_allowed(host, allowed):
        return None
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata host"
    return address_problem(host)
