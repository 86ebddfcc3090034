"""Run the demo backend: `python -m tools.demo_backend --port 18081`."""

import argparse

import uvicorn

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, default=18081)
ns = parser.parse_args()
uvicorn.run("tools.demo_backend.server:app", host=ns.host, port=ns.port, log_level="warning")
