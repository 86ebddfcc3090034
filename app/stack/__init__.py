"""The stack the help desk runs on: start, stop and check Redis, vLLM, Postgres, the cluster and its replicas."""
