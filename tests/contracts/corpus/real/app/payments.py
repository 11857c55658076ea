"""Project helpers the tools call (no model call here)."""
import stripe


def refund_charge(charge_id: str) -> str:
    stripe.Refund.create(charge=charge_id)
    return "refunded"
