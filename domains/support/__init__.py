"""The support pack: customer-support tickets about orders, refunds, policies and the
knowledge base. `plugin.py` names its parts for the loader (`graph.domains`)."""
