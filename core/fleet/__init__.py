"""The fleet: many hosts diagnosed through Ansible, and the summary of their bundles."""
