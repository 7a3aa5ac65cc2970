"""The main window's parts: documents and tabs, sessions, menus, the compute docks' interface."""
