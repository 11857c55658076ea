"""Two modules away from the model: the plan's lines become shell commands."""
import subprocess


def run_line(command: str) -> None:
    subprocess.run(command, shell=True, check=True)
