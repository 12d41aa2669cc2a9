"""The access policy every entry point goes through: principals, scopes, clients, projects."""
