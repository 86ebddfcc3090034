"""A demo of the company's HR, weather and knowledge-base services: FastAPI over SQLite.

It ships with the project so every path can run for real; a deployment points `BACKEND_URL` at
its own endpoints instead. Each endpoint sleeps a configurable latency, so the help desk meets
the waits it would meet in production.
"""
