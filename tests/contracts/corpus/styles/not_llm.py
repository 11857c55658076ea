"""Look-alikes that are not LLM calls: Twilio's messages.create, a dict's update."""
from twilio.rest import Client

sms = Client("sid", "token")


def notify(phone: str) -> None:
    sms.messages.create(to=phone, from_="+15550100", body="Your order shipped")


def merge(settings: dict, extra: dict) -> dict:
    settings.update(extra)
    return settings
