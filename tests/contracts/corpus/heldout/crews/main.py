"""The template's main.py never names crewai."""
from crews.outreach import OutreachCrew


def run():
    OutreachCrew().crew().kickoff(inputs={"topic": "AI agents"})
