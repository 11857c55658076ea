"""Point 4: this file never names an SDK, yet the wrapper's output becomes a shell command."""
import subprocess

from app.brain import Brain


def work(task: str) -> None:
    command = Brain().think(task)
    subprocess.run(command, shell=True, check=True)
