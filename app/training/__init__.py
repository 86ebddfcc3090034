"""Training and calibration: the router and leave-type classifiers fitted on labelled data, and their reports."""
