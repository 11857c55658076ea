"""Where callbacks may go (CONTRACT §5).

http(s) only; loopback is allowed (agents run locally); link-local and
cloud-metadata addresses are refused unless the host is explicitly allowed.
IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry, so
``::ffff:169.254.169.254`` is no way around the rule.

The host is judged exactly as the HTTP client will connect to it: yarl (which
aiohttp uses) maps Unicode spellings through IDNA/NFKC, so fullwidth digits
(``１６９.２５４.１６９.２５４``), ideographic full stops (``169。254。169。254``)
and circled digits become the literal address, and aiohttp then skips the
resolver. Reading the host with ``urllib`` instead would keep the Unicode
text and judge a different host than the one called. A URL the client can
never open (``http://2130706433/``, a host with a space) is refused here too,
so it is not retried for a day. The address really connected to is checked
again at connect time (``transport.AddressGuard``).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
import unicodedata

import yarl

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "100.100.100.200", "fd00:ec2::254", "169.254.170.2")
)
NOT_A_URL = "must be an absolute http(s) URL"
# Spaces, controls, format characters and line/paragraph separators (CR, LF,
# U+2028, zero-width joiners, ...): stored verbatim but sent percent-encoded or
# cut short, so the URL called would not be the one given.
_UNSENDABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
_HOSTNAME = re.compile(r"[a-z0-9_.-]+")
_DOTTED_QUAD = re.compile(r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}")


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


def normal_host(host: str) -> str:
    """A host as the HTTP client reads it: IDNA/NFKC-mapped, lower case, no
    trailing dot ("metadata.google.internal." is the same host)."""
    try:
        host = yarl.URL.build(scheme="http", host=host.strip("[]")).raw_host or host
    except (ValueError, TypeError):
        pass
    return host.lower().rstrip(".")


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    return normal_host(host) in _normal_hosts(allowed)


@functools.lru_cache(maxsize=64)
def _normal_hosts(allowed: tuple[str, ...]) -> frozenset[str]:
    return frozenset(normal_host(h) for h in allowed)


def client_url(url: str) -> yarl.URL | None:
    """The URL as aiohttp will call it, or None if it is not a usable http(s) URL."""
    try:
        parsed = yarl.URL(url)
        parsed.port  # raises on a bad port
    except (ValueError, TypeError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        return None
    return parsed


def literal_problem(url: str, allowed: tuple[str, ...] = ()) -> str | None:
    """Checks that need no DNS: the URL's characters and scheme, metadata names,
    literal addresses, and hosts the client can never connect to."""
    if any(unicodedata.category(c) in _UNSENDABLE_CATEGORIES for c in url):
        return "must not contain spaces, line breaks or control characters"
    parsed = client_url(url)
    if parsed is None:
        return NOT_A_URL
    return _host_problem(parsed.raw_host.lower().rstrip("."), tuple(allowed))


@functools.lru_cache(maxsize=1024)
def _host_problem(host: str, allowed: tuple[str, ...]) -> str | None:
    # Every create checks its callback URL, agents call back to a handful of
    # hosts, and parsing one with ipaddress costs microseconds: cache the
    # verdict. Safe because it is a pure function of its arguments (no DNS;
    # the allow-list is a setting, part of the key).
    if host in _normal_hosts(allowed):
        return None
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata host"
    if problem := address_problem(host):
        return problem
    return _unreachable_problem(host)


def _unreachable_problem(host: str) -> str | None:
    """Hosts aiohttp refuses or can never resolve, so a delivery would be
    retried for its whole window for nothing."""
    if ":" in host:
        return None if _as_ip(host) is not None else f"{host} is not an IPv6 address"
    if host.replace(".", "").isdigit() and not _DOTTED_QUAD.fullmatch(host):
        # aiohttp refuses legacy numeric IPv4 (2130706433, 127.1, 0177.0.0.1).
        return f"{host} is not a dotted-quad IPv4 address (write it as e.g. 127.0.0.1)"
    if not _HOSTNAME.fullmatch(host):
        return f"{host!r} is not a valid host name"
    return None
