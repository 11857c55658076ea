"""Point 5: the reply is judged by what other modules do with it (taint by parameter)."""
from openai import OpenAI

from app.executor import PlanRunner, apply_edit, execute_plan, record_plan

client = OpenAI()


def plan_and_run(goal: str) -> None:
    plan = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": goal}])
    execute_plan(plan.choices[0].message.content)


def plan_with_a_runner(goal: str) -> None:
    plan = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": goal}])
    PlanRunner().run(plan.choices[0].message.content)


def plan_and_edit(goal: str) -> None:
    edit = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": goal}])
    apply_edit(edit.choices[0].message.content)


def plan_and_record(goal: str) -> None:
    plan = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": goal}])
    record_plan(goal, plan.choices[0].message.content)
