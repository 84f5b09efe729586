"""Campaigns: a grid of models × datasets × suites run as one study, and its reports."""
