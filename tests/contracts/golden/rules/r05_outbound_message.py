"""R5: the model's text is emailed on the user's behalf."""
import smtplib
from email.message import EmailMessage

from openai import OpenAI
from escalated.guard import guard

client = OpenAI()


def reply_to_customer(thread: str, address: str) -> None:
    draft = guard("r05_outbound_message.reply_to_customer", lambda: client.responses.create(model="gpt-4o", input=thread)).output_text
    message = EmailMessage()
    message.set_content(draft)
    message["To"] = address
    with smtplib.SMTP("localhost") as smtp:
        smtp.send_message(message)
