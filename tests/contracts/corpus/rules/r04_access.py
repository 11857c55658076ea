"""R4: a tool that changes permissions."""
import sqlite3

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


@tool
def grant_role(user_id: str, role: str) -> str:
    """Give a user a role in the workspace."""
    with sqlite3.connect("workspace.db") as db:
        db.execute("GRANT ROLE ? TO ?", (role, user_id))
    return f"{user_id} is now {role}"


def admin_assistant(request: str):
    model = ChatOpenAI(model="gpt-4o").bind_tools([grant_role])
    return model.invoke(request)
