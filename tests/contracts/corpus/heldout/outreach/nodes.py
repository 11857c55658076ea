"""A LangGraph outreach graph's nodes: the score's state key is what a router reads."""

from litellm import completion


def ask(prompt):
    response = completion(model="groq/llama-3.1-70b", messages=[{"role": "user", "content": prompt}])
    return response.choices[0].message.content


class Nodes:
    @staticmethod
    def score_lead(state):
        lead = state["lead"]
        lead.score = ask(f"Score this lead from 0 to 100: {lead.profile}")
        return {"lead": lead}

    @staticmethod
    def write_email(state):
        email = ask(f"Write an email to {state['lead'].profile}")
        with open("output.txt", "a") as file:
            file.write(email + "\n")
        return {"email": email}

    @staticmethod
    def is_qualified(state):
        if int(state["lead"].score) > 50:
            return "qualified"
        return "not qualified"
