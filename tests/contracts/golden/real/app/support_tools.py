"""Point 11: the tools live in their own module; apply guards the risky one where it is defined."""
import stripe
from agents import function_tool


@function_tool(needs_approval=True)
def refund_order(payment_intent: str) -> str:
    stripe.Refund.create(payment_intent=payment_intent)
    return "refunded"


@function_tool
def lookup_order(order_id: str) -> str:
    return f"order {order_id}: shipped"
