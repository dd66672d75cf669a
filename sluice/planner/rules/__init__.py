"""Optimizer rules, one per module; the order lives in :mod:`sluice.planner.optimizer`."""
