"""The interview as a record: where it stands, its script, access codes, invitations, pausing and finishing."""
