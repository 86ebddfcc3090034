from tools.cores import allowed_cores, this_core


def test_the_core_a_thread_runs_on_is_one_the_process_may_use():
    core = this_core()
    assert core is None or core in allowed_cores()
