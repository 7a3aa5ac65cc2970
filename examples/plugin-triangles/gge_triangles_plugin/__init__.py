"""Example plug-in for GPU Graph Explorer (docs/adding-an-algorithm.md, "A plug-in package").

Nothing here is imported by the program until an entry point asks for it: ``family`` adds
the ``cpu-marker`` variant to the triangles family, ``triangle_list`` the ``triangle-list``
file format. Importing the package itself does nothing.
"""
