"""Where callbacks may go (CONTRACT §5).

http(s) only; loopback and private addresses are allowed (agents run
locally) unless ``serve --deny-private-callbacks`` (a shared deployment);
link-local, cloud-metadata and IETF-protocol (``192.0.0.0/24``) addresses
are refused unless the host is explicitly allowed (``--allow-callback-host``).
An IPv6 address that carries an IPv4 one is judged by the IPv4 it reaches:
IPv4-mapped (``::ffff:169.254.169.254``) and NAT64 (``64:ff9b::/96``) as that
address alone, 6to4 (``2002::/16``) and Teredo (``2001::/32``) as themselves
and by every IPv4 address they carry, so none is a way around the rule.

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

import attrs
import yarl

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"})
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "100.100.100.200", "fd00:ec2::254", "169.254.170.2")
)
# AWS's IPv6 instance-metadata network (the service answers at fd00:ec2::254,
# DNS at ::253; the /32 is theirs alone).
METADATA_NETWORKS = (ipaddress.ip_network("fd00:ec2::/32"),)
# IETF protocol assignments (RFC 6890): no receiver lives there; some clouds
# answer metadata-like services in it.
PROTOCOL_NETWORK = ipaddress.ip_network("192.0.0.0/24")
THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # "this host on this network": never a destination
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: the last 32 bits are the IPv4 address reached
NOT_A_URL = "must be an absolute http(s) URL"
# Spaces, controls, format characters and line/paragraph separators (CR, LF,
# U+2028, zero-width joiners, ...): stored verbatim but sent percent-encoded or
# cut short, so the URL called would not be the one given.
_UNSENDABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
# The ASCII characters in those categories (controls, DEL, space): most URLs
# are ASCII, and one search is ~10x cheaper than a category per character.
_UNSENDABLE_ASCII = re.compile(r"[\x00-\x20\x7f]")
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


@attrs.frozen(cache_hash=True)
class CallbackRules:
    """Where the server may send callbacks and webhooks (``serve`` flags)."""

    allowed: tuple[str, ...] = ()  # --allow-callback-host: let through whatever they are
    deny_private: bool = False  # --deny-private-callbacks: loopback and private addresses refused too


OPEN = CallbackRules()
LOOPBACK_NAMES = ("localhost",)  # and every *.localhost (RFC 6761: they resolve to loopback)


def address_problem(address: str, *, deny_private: bool = False) -> str | None:
    ip = _as_ip(address)
    if ip is None:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and (carried := _reached_ipv4(ip)) is not None:
        problem = _ip_problem(carried, deny_private=deny_private)
        return None if problem is None else f"{address} reaches {carried}, {problem}"
    if problem := _ip_problem(ip, deny_private=deny_private):
        return f"{address} is {problem}"
    for carried in _carried_ipv4(ip):
        if problem := _ip_problem(carried, deny_private=deny_private):
            return f"{address} carries {carried}, {problem}"
    return None


def _reached_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one is only a spelling of: IPv4-mapped, NAT64."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _carried_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """IPv4 addresses a tunnelling IPv6 address carries: 6to4's, Teredo's server and client."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return ()
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    return ip.teredo or ()


def _ip_problem(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, *, deny_private: bool) -> str | None:
    if ip.is_loopback:
        return "a loopback address (serve --deny-private-callbacks)" if deny_private else None
    if ip in METADATA_ADDRESSES or any(ip in net for net in METADATA_NETWORKS):
        return "a cloud metadata address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or ip in THIS_NETWORK:
        return "not a unicast address"
    if ip in PROTOCOL_NETWORK:
        return "an IETF protocol address (192.0.0.0/24)"
    if deny_private and not ip.is_global:
        return "a private address (serve --deny-private-callbacks)"
    return None


def normal_host(host: str) -> str:
    """A host as the HTTP client reads it: IDNA/NFKC-mapped, lower case, no
    trailing dot ("metadata.google.internal." is the same host)."""
    try:
        host = yarl.URL.build(scheme="http", host=host.strip("[]")).raw_host or host
    except (ValueError, TypeError):
        pass
    return host.lower().rstrip(".")


def host_allowed(host: str, rules: CallbackRules) -> bool:
    return normal_host(host) in _normal_hosts(rules.allowed)


@functools.lru_cache(maxsize=64)
def _normal_hosts(allowed: tuple[str, ...]) -> frozenset[str]:
    return frozenset(normal_host(h) for h in allowed)


def client_url(url: str) -> yarl.URL | None:
    """The URL as aiohttp will call it, or None if it is not a usable http(s) URL."""
    try:
        parsed = yarl.URL(url)
        _ = parsed.port  # raises on a bad port
    except (ValueError, TypeError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        return None
    return parsed


def unsendable(url: str) -> bool:
    """Whether it holds a control, format or space character (no HTTP client sends those as they are)."""
    if url.isascii():
        return _UNSENDABLE_ASCII.search(url) is not None
    return any(unicodedata.category(c) in _UNSENDABLE_CATEGORIES for c in url)


@functools.lru_cache(maxsize=256)
def literal_problem(url: str, rules: CallbackRules = OPEN) -> str | None:
    """Checks that need no DNS: the URL's characters and scheme, metadata names,
    literal addresses, and hosts the client can never connect to. Cached like
    ``_host_problem`` below, whole URLs this time: every create checks its
    callback URL, an agent sends the same few, and parsing one costs more
    than the rest of the check."""
    if unsendable(url):
        return "must not contain spaces, line breaks or control characters"
    parsed = client_url(url)
    if parsed is None or parsed.raw_host is None:  # client_url gives only URLs with a host
        return NOT_A_URL
    return _host_problem(parsed.raw_host.lower().rstrip("."), rules)


@functools.lru_cache(maxsize=1024)
def _host_problem(host: str, rules: CallbackRules) -> str | None:
    # Every create checks its callback URL, agents call back to a handful of
    # hosts, and parsing one with ipaddress costs microseconds: cache the
    # verdict. Safe because it is a pure function of its arguments (no DNS;
    # the rules are settings, part of the key).
    if host in _normal_hosts(rules.allowed):
        return None
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata host"
    if rules.deny_private and (host in LOOPBACK_NAMES or host.endswith(".localhost")):
        return f"{host} is a loopback host (serve --deny-private-callbacks)"
    if problem := address_problem(host, deny_private=rules.deny_private):
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
