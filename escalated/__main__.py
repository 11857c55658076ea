from escalated.cli import main

main(prog_name="escalated")
