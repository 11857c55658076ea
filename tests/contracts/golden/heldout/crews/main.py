"""The template's main.py never names crewai."""
from crews.outreach import OutreachCrew
from escalated.guard import guard


def run():
    guard("main.run", lambda: OutreachCrew().crew().kickoff(inputs={"topic": "AI agents"}))
