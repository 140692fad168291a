"""The bundled domain packs, one folder each: `support` (the default) and `incidents`.

Each pack is loaded by `graph.domains`, under its package name here (`domains.support`), so
a test or a tool that imports one of its modules directly gets the module the loader uses.
A pack from any other folder is loaded as a package of its own. Nothing below `graph/`, the
hub or the servers imports a pack directly (tests/test_layers.py).
"""
