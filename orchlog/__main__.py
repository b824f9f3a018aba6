from orchlog.cli import run

run()
