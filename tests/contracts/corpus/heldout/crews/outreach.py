"""Shaped like crewAI's project template: a @CrewBase class whose @crew method builds the crew."""
import smtplib

from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task
from crewai_tools import SerperDevTool


class SendEmailTool:
    name: str = "send_email"

    def _run(self, to: str, body: str) -> str:
        smtplib.SMTP("localhost").sendmail("me@example.com", [to], body)
        return "sent"


@CrewBase
class OutreachCrew:
    @agent
    def researcher(self) -> Agent:
        return Agent(config=self.agents_config["researcher"], tools=[SerperDevTool()])

    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["writer"], tools=[SendEmailTool()])

    @task
    def outreach(self) -> Task:
        return Task(config=self.tasks_config["outreach"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
