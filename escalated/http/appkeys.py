"""Typed application keys, in one place so modules need not import each other."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from escalated.core.admin import AdminService
from escalated.core.decisionlinks import DecisionLinks
from escalated.core.slackdecide import SlackDecisions
from escalated.engine.clock import SlaClock
from escalated.engine.sender import Sender
from escalated.engine.slackreplies import SlackReplies
from escalated.http.ratelimit import RateLimiter, SignInLimiter
from escalated.core.metrics import Metrics
from escalated.core.service import Service
from escalated.core.settings import Settings
from escalated.core.websessions import WebSessions

SERVICE = web.AppKey("service", Service)
ADMIN = web.AppKey("admin", AdminService)
SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
RATE_LIMITER = web.AppKey("rate_limiter", RateLimiter)
SIGN_IN_LIMITER = web.AppKey("sign_in_limiter", SignInLimiter)
CLOCK = web.AppKey("clock", SlaClock)
SENDER = web.AppKey("sender", Sender)
WEB_SESSIONS = web.AppKey("web_sessions", WebSessions)
SLACK_DECISIONS = web.AppKey("slack_decisions", SlackDecisions)
SLACK_REPLIES = web.AppKey("slack_replies", SlackReplies)
DECISION_LINKS = web.AppKey("decision_links", DecisionLinks)
# The /events and /app/events handlers streaming now: ended at shutdown (eventstream.py).
EVENT_STREAMS: web.AppKey[set[asyncio.Task[Any]]] = web.AppKey("event_streams")
