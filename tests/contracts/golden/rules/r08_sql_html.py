"""R8: the output is pasted into SQL and into HTML."""
from markupsafe import Markup
from openai import OpenAI
from escalated.guard import guard

client = OpenAI()


def text_to_sql(cursor, question: str):
    sql = guard("r08_sql_html.text_to_sql", lambda: client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])).choices[0].message.content
    cursor.execute(sql)
    return cursor.fetchall()


def render_answer(question: str) -> Markup:
    html = guard("r08_sql_html.render_answer", lambda: client.chat.completions.create(model="gpt-4o", messages=[])).choices[0].message.content
    return Markup(html)
