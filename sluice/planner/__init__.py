"""The planner: what each scan Spark offers a Sluice table pushes, decided by named rules, and why."""
