"""The incidents as data: what each one does to the services' metrics and logs.

A story is one incident's effects: ``Effect`` scales or sets metric values for a service from its
start to its end (with a short ramp), and names the error and warning lines it logs; ``Leak``
grows a service's memory from a deploy until each restart. What ended an effect (on-call
draining traffic, a restart) is outside the data: the incident queue is triaged as of each
incident's page time. A story also names the services that get no generated (routine) change
around it, so the only changes near an incident are the ones the design puts there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from servers.incident_world import DATA_AS_OF, at


@dataclass(frozen=True)
class Effect:
    """How one incident changes one service's metrics and logs, from start to end."""

    service: str
    """Service affected."""
    start: datetime
    """First minute affected."""
    end: datetime
    """First minute no longer affected (the effect fades over the next few minutes)."""
    ramp_min: int = 1
    """Minutes to reach full strength."""
    requests_x: float = 1.0
    """Request-rate multiplier."""
    p50_x: float = 1.0
    """Median-latency multiplier."""
    p95_x: float = 1.0
    """p95-latency multiplier."""
    error_rate: float | None = None
    """5xx share the service moves to (None: unchanged)."""
    cpu: float | None = None
    """CPU share the service moves to (None: unchanged)."""
    db_pool: float | None = None
    """Pool share the service moves to (None: unchanged)."""
    errors: tuple[tuple[int, str, str], ...] = ()
    """(status, route, message) of the 5xx it adds, as logged."""
    warnings: tuple[str, ...] = ()
    """WARN lines it logs."""
    warn_per_min: float = 0.0
    """Average WARN lines a minute at full strength."""


@dataclass(frozen=True)
class Leak:
    """Memory that grows from a deploy, reset by each restart, with latency following it."""

    service: str
    """Service leaking."""
    start: datetime
    """The deploy that introduced it."""
    restarts: tuple[datetime, ...]
    """On-call restarts: memory falls back to normal, then grows again."""
    memory_per_hour: float
    """Growth, as a share of the memory limit per hour."""
    p95_per_memory: float
    """p95 multiplier added per unit of extra memory share (latency follows GC pressure)."""
    warning: str = "GC pause {pause_ms}ms: heap at {pct}% of the container limit"
    """WARN line it logs once memory passes 70% of the limit."""


@dataclass(frozen=True)
class Story:
    """One incident as data: its effects, and the span no routine change may fall in."""

    key: str
    """A name for the story (not an incident id)."""
    quiet: tuple[str, ...]
    """Services with no generated change in the quiet span (decoys come from KEY_CHANGES)."""
    quiet_from: datetime
    """Start of the quiet span."""
    quiet_until: datetime
    """End of the quiet span."""
    effects: tuple[Effect, ...] = ()
    """Metric and log effects."""
    leak: Leak | None = None
    """A memory leak, if the story is one (its restarts are logged as events)."""


H = timedelta(hours=1)


def _story(key: str, quiet: tuple[str, ...], onset: datetime, end: datetime,
           *effects: Effect) -> Story:
    return Story(key, quiet, onset - 6 * H, end + H, effects)


def _leak(key: str, service: str, deploy: datetime, restart: datetime, per_hour: float) -> Story:
    # After the restart that answers the page, on-call restarts the service every day at 04:00
    # as a stopgap, so the leak (still live) never again grows near the limit before the data
    # ends.
    daily = restart.replace(hour=4, minute=0) + timedelta(days=1)
    restarts = [restart]
    while daily < DATA_AS_OF:
        restarts.append(daily)
        daily += timedelta(days=1)
    leak = Leak(service, deploy, tuple(restarts), per_hour, p95_per_memory=2.5)
    return Story(key, (service,), deploy - 6 * H, DATA_AS_OF, leak=leak)


QUEUE_STORIES: tuple[Story, ...] = (
    _story("search-newsletter-surge", ("search",), at(5, 10, 5), at(5, 11, 35),
           Effect("search", at(5, 10, 5), at(5, 11, 35), ramp_min=6, requests_x=3.2, p50_x=2.5,
                  p95_x=5.0, error_rate=0.06, cpu=0.96, db_pool=0.7,
                  errors=((503, "GET /search", "503 overloaded: search worker pool exhausted"),),
                  warnings=("traffic surge: requests with utm_campaign=june-newsletter up 4x",
                            "request queue saturated: shedding load"), warn_per_min=2.0)),
    _leak("notifications-template-cache-leak", "notifications", at(5, 11, 0), at(8, 23, 30),
          0.0068),
    _story("payments-pool-shrunk", ("payments",), at(6, 11, 31), at(6, 13, 10),
           Effect("payments", at(6, 11, 31), at(6, 13, 10), ramp_min=3, p50_x=3.0, p95_x=8.0,
                  error_rate=0.04, db_pool=1.0,
                  errors=((503, "POST /payments/authorize",
                           "timed out acquiring DB connection (pool max_size=8)"),),
                  warnings=("db pool exhausted: 8/8 connections in use, 40+ waiters",),
                  warn_per_min=3.0)),
    _story("shipping-rate-card-deploy", ("shipping", "checkout"), at(6, 16, 21), at(6, 17, 50),
           Effect("shipping", at(6, 16, 21), at(6, 17, 50), p95_x=1.3, error_rate=0.35,
                  errors=((500, "POST /quotes",
                           "ValueError: rate card field 'zone' missing in carrier response"),)),
           Effect("checkout", at(6, 16, 21), at(6, 17, 50),
                  warnings=("shipping quote failed (500 from shipping): showing no delivery "
                            "options",), warn_per_min=3.0)),
    _story("gateway-friday-promo", ("gateway",), at(6, 19, 0), at(6, 20, 20),
           Effect("gateway", at(6, 19, 0), at(6, 20, 20), ramp_min=5, requests_x=2.8, p95_x=3.0,
                  error_rate=0.05, cpu=0.94,
                  errors=((503, "GET /api/products",
                           "503 Service Unavailable: too many concurrent connections "
                           "(limit 20000)"),),
                  warnings=("connection limit near: 19k/20k concurrent connections",
                            "traffic surge: requests with utm_campaign=friday-promo up 3x"),
                  warn_per_min=2.0)),
    _story("search-quiet-night", ("search",), at(7, 3, 12), at(7, 3, 12)),
    _story("payments-psp-outage", ("payments", "checkout"), at(7, 20, 2), at(7, 21, 5),
           Effect("payments", at(7, 20, 2), at(7, 21, 5), p50_x=3.0, p95_x=12.0,
                  error_rate=0.22,
                  errors=((504, "POST /payments/authorize",
                           "psp timeout after 10000ms (provider: Acquira)"),),
                  warnings=("psp circuit half-open: Acquira health check failed",),
                  warn_per_min=1.0),
           Effect("checkout", at(7, 20, 2), at(7, 21, 5), p95_x=4.0, error_rate=0.18,
                  errors=((502, "POST /api/checkout/confirm",
                           "payments call failed: 504 Gateway Timeout from payments"),))),
    _story("shipping-carrier-outage", ("shipping", "checkout"), at(8, 13, 58), at(8, 15, 10),
           Effect("shipping", at(8, 13, 58), at(8, 15, 10), p95_x=3.0, error_rate=0.45,
                  errors=((502, "POST /quotes",
                           "carrier api returned 503 (carrier: ParcelHub)"),),
                  warnings=("carrier ParcelHub health check failing",), warn_per_min=1.0),
           Effect("checkout", at(8, 13, 58), at(8, 15, 10),
                  warnings=("shipping quote failed (502 from shipping): showing no delivery "
                            "options",), warn_per_min=3.0)),
    _leak("recommendations-embedding-cache-leak", "recommendations", at(6, 10, 0), at(9, 9, 10),
          0.0058),
    _story("cart-guest-merge-deploy", ("cart",), at(9, 9, 33), at(9, 10, 50),
           Effect("cart", at(9, 9, 33), at(9, 10, 50), p95_x=1.5, error_rate=0.28,
                  errors=((500, "POST /cart/items",
                           "KeyError: 'guest_token' in merge_guest_cart"),))),
    _story("checkout-lunch-flash-sale", ("checkout",), at(9, 12, 0), at(9, 13, 5),
           Effect("checkout", at(9, 12, 0), at(9, 13, 5), ramp_min=4, requests_x=3.0, p95_x=4.0,
                  p50_x=2.0, error_rate=0.07, cpu=0.88, db_pool=1.0,
                  errors=((503, "POST /api/checkout/confirm",
                           "timeout acquiring DB connection from pool (max 60)"),),
                  warnings=("db pool exhausted: 60/60 connections in use",
                            "traffic surge: requests with utm_campaign=lunch-flash-sale up 3x"),
                  warn_per_min=2.0)),
    _leak("pricing-rule-memo-leak", "pricing", at(9, 15, 0), at(12, 7, 40), 0.0074),
    _story("gateway-timeout-config", ("gateway",), at(9, 16, 11), at(9, 17, 30),
           Effect("gateway", at(9, 16, 11), at(9, 17, 30), error_rate=0.09,
                  errors=((504, "POST /api/checkout/confirm", "upstream timeout after 500ms"),
                          (504, "GET /api/search", "upstream timeout after 500ms")))),
    _story("auth-user-db-outage", ("auth", "gateway"), at(10, 7, 28), at(10, 8, 15),
           Effect("auth", at(10, 7, 28), at(10, 8, 15), p95_x=2.0, error_rate=0.55,
                  errors=((500, "POST /login",
                           "user-db connection refused (auth-user-db:5432)"),),
                  warnings=("user-db primary unreachable, retrying",), warn_per_min=2.0),
           Effect("gateway", at(10, 7, 28), at(10, 8, 15), error_rate=0.12,
                  errors=((502, "POST /login", "upstream auth returned 500"),))),
    _story("payments-quiet-alert", ("payments",), at(10, 10, 45), at(10, 10, 48)),
    _story("search-query-parser-deploy", ("search",), at(10, 13, 16), at(10, 14, 45),
           Effect("search", at(10, 13, 16), at(10, 14, 45), p95_x=1.4, error_rate=0.21,
                  errors=((500, "GET /search",
                           "QueryParseError: unsupported operator in query"),))),
    _story("cart-session-timeout-config", ("cart",), at(10, 19, 6), at(10, 20, 30),
           Effect("cart", at(10, 19, 6), at(10, 20, 30), p50_x=1.1, error_rate=0.16,
                  errors=((504, "GET /cart", "session store read timed out after 20ms"),))),
    _story("inventory-db-failover", ("inventory", "checkout"), at(11, 1, 55), at(11, 2, 48),
           Effect("inventory", at(11, 1, 55), at(11, 2, 48), p95_x=6.0, error_rate=0.6,
                  errors=((503, "POST /inventory/reserve",
                           "inventory-db primary failover in progress: read-only"),),
                  warnings=("inventory-db failover: waiting for new primary",),
                  warn_per_min=2.0),
           Effect("checkout", at(11, 1, 56), at(11, 2, 48), error_rate=0.25,
                  errors=((503, "POST /api/checkout/confirm",
                           "inventory reservation failed: 503 from inventory"),))),
    _story("payments-3ds-deploy", ("payments", "checkout"), at(11, 9, 31), at(11, 11, 0),
           Effect("payments", at(11, 9, 31), at(11, 11, 0), p95_x=1.2, error_rate=0.19,
                  errors=((500, "POST /payments/authorize",
                           "NullPointerException: ThreeDSecureSession.challengeUrl is null"),)),
           Effect("checkout", at(11, 9, 31), at(11, 11, 0), error_rate=0.07,
                  errors=((502, "POST /api/checkout/confirm",
                           "payments call failed: 500 from payments"),))),
    _story("auth-session-cache-config", ("auth", "gateway"), at(11, 13, 21), at(11, 14, 35),
           Effect("auth", at(11, 13, 21), at(11, 14, 35), p95_x=1.6, error_rate=0.32,
                  errors=((500, "GET /session",
                           "session cache connection refused (auth-cache-v2:6380)"),)),
           Effect("gateway", at(11, 13, 21), at(11, 14, 35), error_rate=0.06,
                  errors=((502, "GET /api/account", "upstream auth returned 500"),))),
    _story("profile-address-book-deploy", ("profile",), at(11, 17, 46), at(11, 19, 10),
           Effect("profile", at(11, 17, 46), at(11, 19, 10), error_rate=0.4,
                  errors=((500, "GET /account/addresses",
                           "column addresses.label does not exist"),))),
    _story("auth-credential-stuffing", ("auth",), at(11, 23, 30), at(12, 0, 40),
           Effect("auth", at(11, 23, 30), at(12, 0, 40), ramp_min=4, requests_x=5.0, p95_x=6.0,
                  p50_x=3.0, error_rate=0.08, cpu=0.97,
                  errors=((503, "POST /login", "503 password hashing worker pool exhausted"),),
                  warnings=("failed-login burst: 1,200+ attempts a minute from 3 ASNs",),
                  warn_per_min=2.0),
           Effect("gateway", at(11, 23, 30), at(12, 0, 40), ramp_min=4, requests_x=1.8)),
    _story("cart-quiet-alert", ("cart",), at(12, 9, 2), at(12, 9, 5)),
    _story("checkout-payment-intent-deploy", ("checkout",), at(12, 14, 3), DATA_AS_OF,
           Effect("checkout", at(12, 14, 3), DATA_AS_OF + H, p95_x=1.3, error_rate=0.24,
                  errors=((500, "POST /api/checkout/confirm",
                           "TypeError: Cannot read properties of undefined (reading "
                           "'currency') at buildPaymentIntent"),))),
)
"""The queue's incidents (domains/incidents/incidents.jsonl), in time order of their onset
(decoy-free quiet spans per story)."""


def _heldout(key: str, *effects: Effect) -> Story:
    # No quiet span: the held-out stories are placed where no routine change falls, so that the
    # routine draw (and with it the queue's change history) is the same with or without them.
    start = min(e.start for e in effects) if effects else DATA_AS_OF
    return Story(key, (), start, start, effects)


HELDOUT_STORIES: tuple[Story, ...] = (
    _heldout("search-shard-limit-config",
             Effect("search", at(7, 10, 31), at(7, 11, 40), ramp_min=2, p50_x=2.0, p95_x=3.5,
                    error_rate=0.12,
                    errors=((503, "GET /search", "rejected: too many shard requests queued "
                             "(max_concurrent_shard_requests=1)"),))),
    _heldout("pricing-db-connection-storm",
             Effect("pricing", at(8, 9, 3), at(8, 10, 5), ramp_min=2, p50_x=2.0, p95_x=5.0,
                    error_rate=0.4,
                    errors=((503, "POST /prices/quote", "pricing-db: too many connections "
                             "(max_connections=200), request rejected"),),
                    warnings=("pricing-db connection storm: 200/200 connections, replica lag "
                              "45s",), warn_per_min=1.5),
             Effect("checkout", at(8, 9, 4), at(8, 10, 5), p95_x=2.0, error_rate=0.12,
                    errors=((502, "GET /api/checkout/summary",
                             "price quote failed: 503 from pricing"),))),
    _heldout("profile-cdn-signer-config",
             Effect("profile", at(8, 16, 1), at(8, 17, 10), error_rate=0.3,
                    errors=((500, "GET /account", "avatar url signing failed: no key configured "
                             "for signer hmac-v2"),))),
    _heldout("recommendations-tv-spot-surge",
             Effect("recommendations", at(9, 18, 55), at(9, 20, 10), ramp_min=6, requests_x=3.4,
                    p50_x=2.0, p95_x=4.0, error_rate=0.05, cpu=0.95,
                    errors=((503, "GET /recs/home", "model server busy"),),
                    warnings=("traffic surge: requests with utm_source=tv-spot-0609 up 3x",
                              "model server queue at capacity: 512/512"), warn_per_min=2.0)),
    _heldout("checkout-payments-timeout-config",
             Effect("checkout", at(9, 21, 41), at(9, 22, 50), error_rate=0.2,
                    errors=((504, "POST /api/checkout/confirm",
                             "payments call timed out after 300ms"),))),
    _heldout("notifications-email-provider-outage",
             Effect("notifications", at(10, 20, 35), at(10, 21, 15), p95_x=6.0, error_rate=0.5,
                    errors=((504, "POST /notify/email",
                             "email provider timeout after 30000ms (provider: Postly)"),),
                    warnings=("Postly API health check failing; email queue depth 18k",),
                    warn_per_min=1.5)),
    _heldout("inventory-scraper-burst",
             Effect("inventory", at(10, 22, 45), at(10, 23, 35), ramp_min=5, requests_x=4.0,
                    p50_x=2.0, p95_x=3.0, error_rate=0.06, cpu=0.97,
                    errors=((503, "GET /inventory/stock", "stock cache miss storm: shedding"),),
                    warnings=("scraper burst: ~900 req/s on /inventory/stock from 2 IPs "
                              "(user-agent python-requests/2.31)",), warn_per_min=2.0)),
    _heldout("auth-kms-outage",
             Effect("auth", at(11, 3, 40), at(11, 4, 30), p95_x=3.0, error_rate=0.45,
                    errors=((503, "GET /session", "token signing key unavailable: kms request "
                             "failed (auth-kms: connection timed out)"),),
                    warnings=("kms client: 5 consecutive failures, backing off",),
                    warn_per_min=1.0),
             Effect("profile", at(11, 3, 41), at(11, 4, 30), error_rate=0.35,
                    errors=((500, "GET /account", "session validation failed: 503 from auth"),)),
             Effect("gateway", at(11, 3, 40), at(11, 4, 30), error_rate=0.03,
                    errors=((502, "POST /login", "upstream auth returned 503"),))),
    Story("inventory-stock-snapshot-leak", (), at(11, 19, 15), at(11, 19, 15),
          leak=Leak("inventory", at(11, 19, 15), (at(12, 11, 40),), 0.030, p95_per_memory=2.5)),
    _heldout("gateway-http2-pool-deploy",
             Effect("gateway", at(12, 1, 21), at(12, 2, 30), p95_x=1.5, error_rate=0.14,
                    errors=tuple((502, route, "upstream connect error: http2 stream reset "
                                  "(REFUSED_STREAM)") for route in (
                        "GET /api/products", "POST /api/checkout/confirm", "GET /api/search")))),
    _heldout("auth-argon2-deploy",
             Effect("auth", at(12, 3, 6), at(12, 4, 15), p95_x=1.3, error_rate=0.3,
                    errors=((500, "POST /login", "Argon2VerifyError: unsupported hash prefix "
                             "'$2b$' for legacy bcrypt users"),)),
             Effect("gateway", at(12, 3, 6), at(12, 4, 15), error_rate=0.02,
                    errors=((502, "POST /login", "upstream auth returned 500"),))),
)
"""The held-out incidents (domains/incidents/heldout.jsonl), written after the triage rules were
tuned on the queue, to measure how they generalise. Their false alarms need no story."""

STORIES: tuple[Story, ...] = QUEUE_STORIES + HELDOUT_STORIES
"""Every story the servers' data holds."""
