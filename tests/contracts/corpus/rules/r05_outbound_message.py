"""R5: the model's text is emailed on the user's behalf."""
import smtplib
from email.message import EmailMessage

from openai import OpenAI

client = OpenAI()


def reply_to_customer(thread: str, address: str) -> None:
    draft = client.responses.create(model="gpt-4o", input=thread).output_text
    message = EmailMessage()
    message.set_content(draft)
    message["To"] = address
    with smtplib.SMTP("localhost") as smtp:
        smtp.send_message(message)
