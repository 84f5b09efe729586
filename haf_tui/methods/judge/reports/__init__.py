"""The judge's reports: its tables over the named queries and the meta-evaluation."""
