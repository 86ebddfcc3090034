import json
import sqlite3

from tools.demo_backend.identity import check_password, credentials_file, issue_passwords


def test_another_demo_database_in_the_same_folder_leaves_the_backends_passwords_alone(tmp_path):
    served, facts = tmp_path / "demo-backend.sqlite", tmp_path / "bench-facts.sqlite"
    con = sqlite3.connect(served)
    issue_passwords(con, ["E1001"], served)
    issue_passwords(sqlite3.connect(facts), ["E1001"], facts)  # the benchmark builds its own copy
    password = json.loads(credentials_file(served).read_text())["E1001"]
    assert credentials_file(served).name == "demo-credentials.json"  # the name `make run` prints
    assert credentials_file(facts) != credentials_file(served)
    assert check_password(con, "E1001", password)  # the operator's file still signs in to the served database
    assert (credentials_file(served).stat().st_mode & 0o777) == 0o600
