"""The designed world behind the incident servers: services, their changes and what went wrong.

Everything the logs, metrics and deploys servers serve is derived from this module and
``servers.incident_stories``, so their data tells one story: a deploy at 14:02 in ``KEY_CHANGES``
is the version the logs print from 14:02, and the 5xx it causes (an effect in
``incident_stories.STORIES``) shows in the metrics and as error lines in the logs from 14:03.
The servers generate their databases from it deterministically (fixed seeds).

The clock: metrics cover ``METRICS_START`` to ``DATA_AS_OF`` (two weeks, so any incident of the
second week has a week before it), logs ``LOGS_START`` to ``DATA_AS_OF``, changes the whole span.
``DATA_AS_OF`` is the data's "now" (2025-06-12 15:00 UTC), the default end of every window.

The labels (``domains/incidents/labels.jsonl``) are written by hand from this design, never
from a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """A time in June 2025, UTC."""
    return datetime(2025, 6, day, hour, minute, tzinfo=UTC)


METRICS_START = datetime(2025, 5, 29, tzinfo=UTC)
"""First minute of the metrics (a Thursday, two weeks before LOGS_START's week ends)."""
LOGS_START = datetime(2025, 6, 5, tzinfo=UTC)
"""First minute of the logs."""
DATA_AS_OF = at(12, 15)
"""The data's "now": the end (exclusive) of the logs and metrics, the default end of windows."""


@dataclass(frozen=True)
class ServiceProfile:
    """A service's normal behaviour, at its daily peak (load 1.0)."""

    name: str
    """Service name, as every tool spells it."""
    rpm: float
    """Requests per minute at the daily peak."""
    p50_ms: float
    """Median latency at peak, milliseconds."""
    p95_ms: float
    """95th-percentile latency at peak, milliseconds."""
    error_rate: float
    """Share of responses that are 5xx, normally."""
    cpu: float
    """CPU used, share of the allocation, at peak."""
    db_pool: float
    """Database connection pool in use, share of its size, at peak."""
    memory: float
    """Memory used, share of the container limit (flat: it does not follow load)."""
    hosts: int
    """Number of instances, named ``<service>-0`` ... ``<service>-<hosts-1>``."""
    version: str
    """Version running when the data starts."""
    routes: tuple[str, ...]
    """Routes its access-log lines name."""
    noise_errors: tuple[tuple[int, str, str], ...]
    """(status, route, message) of its everyday 5xx, logged at the normal error rate."""
    config_keys: tuple[tuple[str, str, str], ...]
    """(key, value, other value) of routine, harmless config changes (they alternate)."""


SERVICES: tuple[ServiceProfile, ...] = (
    ServiceProfile(
        "gateway", 12000, 12, 45, 0.0015, 0.40, 0.30, 0.45, 6, "5.3.0",
        ("GET /api/products", "GET /api/search", "POST /api/checkout/confirm", "POST /login",
         "GET /api/account"),
        ((502, "GET /api/products", "upstream connection reset by peer"),
         (504, "GET /api/search", "upstream request timeout")),
        (("access_log.sample_rate", "0.01", "0.05"), ("tls.session_tickets", "on", "off"))),
    ServiceProfile(
        "auth", 4000, 8, 30, 0.0010, 0.35, 0.35, 0.40, 4, "3.9.0",
        ("POST /login", "POST /token/refresh", "GET /session"),
        ((500, "POST /token/refresh", "token signing failed: context canceled"),
         (503, "POST /login", "user-db query canceled by client")),
        (("login.captcha_threshold", "5", "8"), ("token.refresh_ttl_s", "3600", "7200"))),
    ServiceProfile(
        "checkout", 1800, 85, 240, 0.0020, 0.40, 0.35, 0.50, 4, "4.12.0",
        ("POST /api/checkout/confirm", "GET /api/checkout/summary",
         "GET /api/checkout/shipping-options"),
        ((500, "POST /api/checkout/confirm", "unhandled error: context canceled"),
         (504, "GET /api/checkout/summary", "upstream timeout calling cart")),
        (("summary.show_savings", "false", "true"), ("confirm.idempotency_ttl_s", "600", "900"))),
    ServiceProfile(
        "payments", 1500, 120, 380, 0.0020, 0.35, 0.40, 0.45, 4, "7.4.0",
        ("POST /payments/authorize", "POST /payments/capture", "POST /payments/refund"),
        ((502, "POST /payments/authorize", "psp returned 502 Bad Gateway (provider: Acquira)"),
         (500, "POST /payments/capture", "capture failed: idempotency record locked")),
        (("psp.retry_backoff_ms", "200", "300"), ("fraud.score_threshold", "0.82", "0.85"))),
    ServiceProfile(
        "cart", 3000, 20, 70, 0.0010, 0.30, 0.30, 0.40, 3, "3.7.0",
        ("POST /cart/items", "GET /cart", "DELETE /cart/items"),
        ((500, "GET /cart", "session store read failed: i/o timeout"),
         (503, "POST /cart/items", "cart write rejected: store busy")),
        (("cart.max_items", "100", "150"), ("cart.abandon_reminder_h", "24", "48"))),
    ServiceProfile(
        "search", 6000, 35, 140, 0.0015, 0.45, 0.25, 0.55, 6, "2.20.0",
        ("GET /search", "GET /search/suggest", "GET /search/facets"),
        ((500, "GET /search", "index shard search failed: node disconnected"),
         (504, "GET /search/facets", "facet aggregation timed out")),
        (("suggest.max_results", "8", "10"), ("ranking.boost_in_stock", "1.2", "1.3"))),
    ServiceProfile(
        "inventory", 2500, 15, 55, 0.0010, 0.30, 0.40, 0.40, 3, "6.1.0",
        ("POST /inventory/reserve", "GET /inventory/stock", "POST /inventory/release"),
        ((500, "POST /inventory/reserve", "reservation conflict: retry exhausted"),
         (503, "GET /inventory/stock", "stock cache miss storm: shedding")),
        (("reserve.hold_minutes", "15", "20"), ("stock.cache_ttl_s", "30", "60"))),
    ServiceProfile(
        "shipping", 900, 60, 210, 0.0020, 0.25, 0.30, 0.35, 2, "1.16.0",
        ("POST /quotes", "POST /labels", "GET /tracking"),
        ((502, "POST /quotes", "carrier api returned 502 (carrier: ParcelHub)"),
         (500, "POST /labels", "label render failed: font cache busy")),
        (("quotes.cache_ttl_s", "300", "600"), ("labels.format", "pdf", "zpl"))),
    ServiceProfile(
        "notifications", 700, 25, 90, 0.0015, 0.25, 0.20, 0.35, 2, "2.4.0",
        ("POST /notify/email", "POST /notify/sms", "POST /notify/push"),
        ((502, "POST /notify/email", "email provider returned 502 (provider: Postly)"),
         (500, "POST /notify/sms", "sms template missing locale fallback")),
        (("email.batch_size", "50", "100"), ("sms.quiet_hours", "22-07", "21-08"))),
    ServiceProfile(
        "recommendations", 5000, 30, 110, 0.0010, 0.50, 0.20, 0.50, 4, "8.2.0",
        ("GET /recs/home", "GET /recs/similar", "GET /recs/cart"),
        ((500, "GET /recs/similar", "feature store lookup failed: deadline exceeded"),
         (503, "GET /recs/home", "model server busy")),
        (("recs.home.slots", "12", "16"), ("recs.diversity", "0.3", "0.4"))),
    ServiceProfile(
        "pricing", 4000, 10, 35, 0.0010, 0.30, 0.25, 0.40, 3, "1.22.0",
        ("GET /prices", "POST /prices/quote", "GET /promotions"),
        ((500, "POST /prices/quote", "promotion rule evaluation failed: nil discount"),
         (503, "GET /prices", "price cache warming: try again")),
        (("promotions.max_stack", "2", "3"), ("prices.round_mode", "half_up", "half_even"))),
    ServiceProfile(
        "profile", 2000, 18, 60, 0.0010, 0.25, 0.30, 0.35, 3, "2.9.0",
        ("GET /account", "GET /account/addresses", "PUT /account/preferences"),
        ((500, "PUT /account/preferences", "preferences write failed: deadlock detected"),
         (503, "GET /account", "profile-db replica lag too high")),
        (("preferences.default_locale", "en-US", "en-GB"), ("avatar.max_kb", "512", "1024"))),
)
SERVICE_NAMES: tuple[str, ...] = tuple(s.name for s in SERVICES)
PROFILES: dict[str, ServiceProfile] = {s.name: s for s in SERVICES}


@dataclass(frozen=True)
class KeyChange:
    """A change the stories depend on (the others are generated, see `incident_changes`)."""

    service: str
    """Service changed."""
    kind: str
    """``deploy`` or ``config``."""
    when: datetime
    """When it was applied."""
    author: str
    """Who applied it."""
    summary: str
    """What the change says it does."""
    to_value: str
    """Deploy: the new version (a minor bump). Config: the new value."""
    key: str = ""
    """Config: the setting changed (deploys: empty)."""
    from_value: str = ""
    """Config: the value before (deploys: computed from the history)."""


KEY_CHANGES: tuple[KeyChange, ...] = (
    # The three slow leaks: each deploy starts a memory climb that lasts for days.
    KeyChange("notifications", "deploy", at(5, 11, 0), "j.achebe",
              "templating engine upgrade: cache rendered templates per recipient", "2.5.0"),
    KeyChange("recommendations", "deploy", at(6, 10, 0), "k.sorensen",
              "similar-items: keep item embeddings in an in-process cache", "8.3.0"),
    KeyChange("pricing", "deploy", at(9, 15, 0), "q.zhang",
              "promotion engine: memoize evaluated price rules per session", "1.23.0"),
    # The bad deploys: 5xx in the same service from the next minute.
    KeyChange("shipping", "deploy", at(6, 16, 20), "m.tanaka",
              "carrier rate-card parser rewrite (zones v2)", "1.17.0"),
    KeyChange("cart", "deploy", at(9, 9, 32), "l.moreau",
              "merge guest carts into the account cart at login", "3.8.0"),
    KeyChange("search", "deploy", at(10, 13, 15), "c.duarte",
              "new query parser with boolean operators", "2.21.0"),
    KeyChange("payments", "deploy", at(11, 9, 30), "n.ibrahim",
              "3-D Secure v2 challenge flow for card payments", "7.5.0"),
    KeyChange("profile", "deploy", at(11, 17, 45), "o.fischer",
              "address book v2: labelled addresses", "2.10.0"),
    KeyChange("checkout", "deploy", at(12, 14, 2), "r.okafor",
              "new payment-intent builder (multi-currency)", "4.13.0"),
    # The bad config changes.
    KeyChange("payments", "config", at(6, 11, 30), "s.novak",
              "shrink the payments DB pool to relieve the primary", "8",
              key="db.pool.max_size", from_value="40"),
    KeyChange("gateway", "config", at(9, 16, 10), "g.oneill",
              "fail fast on slow upstreams", "500",
              key="upstream.timeout_ms", from_value="5000"),
    KeyChange("cart", "config", at(10, 19, 5), "l.moreau",
              "tighter session store timeout", "20",
              key="session_store.timeout_ms", from_value="250"),
    KeyChange("auth", "config", at(11, 13, 20), "h.varga",
              "move the session cache to the new cluster", "auth-cache-v2:6380",
              key="session_cache.endpoint", from_value="auth-cache:6379"),
    # Decoys: harmless deploys close to an incident (the labels rule them out).
    KeyChange("payments", "deploy", at(10, 10, 25), "b.mensah",
              "bump structured-logging library", ""),
    KeyChange("checkout", "deploy", at(7, 20, 9), "p.rossi",
              "copy: order confirmation wording", ""),
    KeyChange("inventory", "deploy", at(9, 11, 50), "e.kowalski",
              "refactor stock cache metrics", ""),
)
"""Changes the stories rest on. A deploy with an empty to_value is a routine patch release."""


HELDOUT_CHANGES: tuple[KeyChange, ...] = (
    # The held-out incidents' changes (domains/incidents/heldout*.jsonl). They are kept out of
    # the routine-change draw (`incident_changes._routine` reads KEY_CHANGES only), so the queue's
    # change history is the same with or without them; each deploy is its service's last one and
    # each config key is new, so no version or value of the queue's changes moves.
    KeyChange("search", "config", at(7, 10, 30), "t.weber",
              "protect the cluster: one concurrent shard request per query", "1",
              key="shard.max_concurrent_requests", from_value="5"),
    KeyChange("profile", "config", at(8, 16, 0), "o.fischer",
              "switch avatar URLs to the v2 CDN signer", "hmac-v2",
              key="cdn.url_signer", from_value="hmac-v1"),
    KeyChange("checkout", "config", at(9, 21, 40), "p.rossi",
              "fail faster when the payments call is slow", "300",
              key="payments.client.timeout_ms", from_value="3000"),
    KeyChange("checkout", "config", at(10, 15, 40), "p.rossi",
              "show trust badges on the confirm page", "true",
              key="confirm.show_trust_badges", from_value="false"),
    KeyChange("inventory", "deploy", at(11, 19, 15), "e.kowalski",
              "stock trends: keep per-warehouse snapshots in memory", "6.2.0"),
    KeyChange("gateway", "deploy", at(12, 1, 20), "g.oneill",
              "upstream pool: HTTP/2 multiplexing to services", "5.4.0"),
    KeyChange("auth", "deploy", at(12, 3, 5), "h.varga",
              "password hashing: verify with argon2id", "3.10.0"),
)
"""Changes the held-out stories rest on (`incident_stories.HELDOUT_STORIES`)."""

