"""Print the seeded orders as a labeller reads them: the facts LABELS.md computes actions from.

This reads the orders server's own seed data (no server, no Muster run), so a person labelling
tickets can look up an order's status, charges, refunds and delivery window in one table:

    python scripts/order_facts.py            # every order
    python scripts/order_facts.py 12345      # one order
"""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from servers.orders import DATA_AS_OF, DELIVERED_STATUSES, DELIVERY_DAYS, _seed_rows  # noqa: E402

WINDOW_START = DATA_AS_OF - timedelta(days=14)


def main(wanted: list[str]) -> None:
    orders, charges, refunds = _seed_rows()
    print(f"today {DATA_AS_OF}; 14-day window: delivered_at >= {WINDOW_START}")
    header = (
        "order  status      amount  method     placed      delivered   days  in14  charges "
        "refunded  item / customer"
    )
    print(header)
    for oid, customer, item, cents, status, method, placed, note in orders:
        if wanted and oid not in wanted:
            continue
        n_charges = sum(1 for c in charges if c[1] == oid)
        refunded = sum(r[2] for r in refunds if r[1] == oid)
        delivered = ""
        days = ""
        inside = ""
        if status in DELIVERED_STATUSES:
            d = date.fromisoformat(placed) + timedelta(days=DELIVERY_DAYS)
            delivered, days = d.isoformat(), str((DATA_AS_OF - d).days)
            inside = "yes" if d >= WINDOW_START else "no"
        print(f"{oid}  {status:<10} {cents:>7}  {method:<9}  {placed}  {delivered:<10}  {days:>4}  "
              f"{inside:<4}  {n_charges:>7} {refunded:>8}  {item} / {customer}"
              + (f"  NOTE: {note}" if note else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
