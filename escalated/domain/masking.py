"""Secrets shown masked: scheme, host and the last 4 characters (CONTRACT §16).

A Slack incoming webhook's URL is its own credential (whoever holds it can
post to the channel), and so may a webhook's be. Wherever a notify target
is displayed (``policy list``/``show``, the web admin, an escalation's
deliveries, logs) it is masked; it is stored and sent as written, and a
policy file keeps it as written.

The web admin's policy form shows the masked targets. A line that comes
back unchanged stands for the stored target it masks (``unmask_targets``),
so saving the form keeps a secret nobody retyped.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import attrs

from escalated.domain.models import CALLBACK, Delivery
from escalated.errors import ConfigError

HIDDEN = "…"
SHOWN_TAIL = 4
SECRET_KINDS = ("webhook:", "slack:")


def mask_url(url: str) -> str:
    """``https://hooks.slack.com/…Ab3d``: scheme, host (and port), last 4 characters.
    User and password, path and query are hidden."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or not parts.scheme or not parts.hostname:
        return mask_secret(url)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    rest = url.partition("://")[2][len(parts.netloc) :]  # path, query and fragment
    if len(rest) <= SHOWN_TAIL:  # nothing worth hiding (``http://host:9100/``)
        return origin + rest
    return f"{origin}/{HIDDEN}{url[-SHOWN_TAIL:]}"


def mask_secret(secret: str) -> str:
    """A secret that is not a URL: its last 4 characters, when it is long
    enough that they give nothing useful away."""
    return HIDDEN + secret[-SHOWN_TAIL:] if len(secret) >= 3 * SHOWN_TAIL else HIDDEN


def mask_target(target: str) -> str:
    """A notify target as displayed: ``webhook:``/``slack:`` URLs masked, the rest as is."""
    for kind in SECRET_KINDS:
        if target.startswith(kind):
            return kind + mask_url(target.removeprefix(kind))
    return target


def mask_targets(targets: tuple[str, ...] | list[str]) -> list[str]:
    return [mask_target(t) for t in targets]


def unmask_targets(submitted: tuple[str, ...], *, stored: tuple[str, ...]) -> tuple[str, ...]:
    """``submitted`` with each line that is the masked form of a stored
    target replaced by that target (a form sent back unchanged keeps it).
    A masked line that stands for no stored target (the policy changed
    meanwhile) is refused: saved, it would be a URL that leads nowhere."""
    by_mask: dict[str, list[str]] = {}
    for target in stored:
        if (masked := mask_target(target)) != target:
            by_mask.setdefault(masked, []).append(target)
    unmasked = []
    for target in submitted:
        if by_mask.get(target):
            unmasked.append(by_mask[target].pop(0))  # two targets masked alike keep their order
        elif target.startswith(SECRET_KINDS) and HIDDEN in target:
            raise ConfigError(f"notify target {target} is shown masked and matches no saved target: write it in full")
        else:
            unmasked.append(target)
    return tuple(unmasked)


def mask_in_text(text: str, *, targets: tuple[str, ...] | list[str]) -> str:
    """``text`` (an attempt's error, a log line) with every secret URL of
    ``targets`` in it replaced by its masked form."""
    for target in targets:
        for kind in SECRET_KINDS:
            if target.startswith(kind):
                url = target.removeprefix(kind)
                text = text.replace(url, mask_url(url))
    return text


def masked_delivery(d: Delivery) -> Delivery:
    """A delivery as displayed (the API, the web page): a notification's
    webhook or Slack URL masked, in its target and in its attempts' errors.
    A callback's URL is the agent's own and is shown as it gave it."""
    if d.kind == CALLBACK:
        return d
    attempts = tuple(
        attrs.evolve(a, error=mask_in_text(a.error, targets=(d.target,))) if a.error else a for a in d.attempts
    )
    return attrs.evolve(d, target=mask_target(d.target), attempts=attempts)
