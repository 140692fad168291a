"""The customer's own words: a ticket without what it quotes, forwards or signs off with.

A ticket often carries text that is not its request: an earlier agent reply quoted under the
customer's answer (`> …`, "On Tue, Support wrote:"), a forwarded e-mail, a signature, a
phone's "Sent from my iPhone", a legal footer. An intent, an order id or a demand found only
there is not the customer's (an agent's offer to cancel, quoted back, is not a request to
cancel). `own_words` keeps the text before the first such marker, minus quoted lines and
sign-offs; when nothing is left (a ticket that *is* a forward with no note), it keeps the
forwarded body, which is then the only request there is.
"""

from __future__ import annotations

import re

_WROTE = (
    r"wrote|a écrit|a ecrit|schrieb|escribió|escribio|ha scritto|schreef|escreveu"
)
REPLY_HEADER = re.compile(
    rf"^\s*(?:on|le|am|el|il|op|em|de)\b[^\n]{{0,160}}\b(?:{_WROTE})\s*:?\s*$"
    rf"|^\s*[^\n]{{0,80}}<[^>\n]+@[^>\n]+>\s*(?:{_WROTE})\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
"""The line that introduces a quoted earlier message ("On Mon, Support <…> wrote:")."""
FORWARD_HEADER = re.compile(
    r"^\s*(?:-{2,}\s*)?(?:original message|forwarded message|message d'origine|message transféré"
    r"|ursprüngliche nachricht|weitergeleitete nachricht|mensaje original|mensaje reenviado"
    r"|messaggio originale|messaggio inoltrato|oorspronkelijk bericht|doorgestuurd bericht"
    r"|mensagem original|mensagem encaminhada|begin forwarded message)\b[^\n]*$"
    r"|^\s*(?:from|de|von|da|van)\s*:\s*[^\n]*@[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
"""The line that starts a forwarded or original message."""
SIGNATURE_START = re.compile(
    r"^\s*(?:--\s*|__+\s*|sent from my [^\n]*|envoyé de mon [^\n]*|von meinem [^\n]*gesendet"
    r"|enviado desde mi [^\n]*|inviato da [^\n]*|verzonden (?:vanaf|met) [^\n]*"
    r"|enviado do meu [^\n]*"
    r"|(?:this|the information in this) (?:e-?mail|message)[^\n]*(?:confidential|intended)"
    r"[^\n]*|confidentiality notice[^\n]*|disclaimer\s*:[^\n]*"
    r"|ce (?:message|courriel)[^\n]*confidentiel[^\n]*"
    r"|diese (?:e-mail|nachricht)[^\n]*vertraulich[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
"""The line a signature, a phone's sign-off or a legal footer starts with."""
CLOSING = re.compile(
    r"^\s*(?:(?:kind |best |warm |many )?(?:regards|wishes)|best|cheers|thanks(?: again)?"
    r"|thank you(?: in advance)?|many thanks|sincerely|yours(?: sincerely| truly)?"
    r"|cordialement|bien (?:à vous|cordialement)|salutations|merci(?: d'avance)?"
    r"|mit freundlichen grüßen|mit freundlichen gruessen|viele grüße|viele gruesse|lg|mfg"
    r"|gruß|grüße|danke(?: im voraus)?"
    r"|saludos(?: cordiales)?|un saludo|atentamente|gracias(?: de antemano)?"
    r"|cordiali saluti|distinti saluti|saluti|grazie(?: mille)?"
    r"|met vriendelijke groet(?:en)?|groet(?:en|jes)?|mvg|bedankt|alvast bedankt"
    r"|atenciosamente|cumprimentos|abraço|obrigad[oa])\s*[,.!]?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
"""A sign-off on a line of its own; what follows it (a name, a phone) is the signature."""


POSTSCRIPT = re.compile(r"^\s*(?:p\.\s?(?:p\.\s?)?s\b|p?ps\s*[:–-])", re.IGNORECASE)
"""A postscript's first line ("P.S.", "PS:", "P.P.S.")."""


NAME_LINE = re.compile(
    r"^\s*(?:[A-ZÀ-Ý]\.\s?[A-ZÀ-Ý][\w'’-]+|[A-ZÀ-Ý][\w'’-]+(?:\s+(?:van|von|de|da|di|du|der|den"
    r"|la|le|dos|das|del))*\s+[A-ZÀ-Ý][\w'’.-]+(?:\s+[A-ZÀ-Ý][\w'’.-]+)?)\s*$"
)
"""A line that is only a person's name ("Sophie Lambert", "R. Okafor", "Jan van der Berg")."""
SIGNATURE_LINE_MAX = 80
"""A signature block's lines are short: a name, a role, a company, a phone."""


def _unsigned(text: str) -> str:
    """The text less a signature block with no sign-off above it: a last paragraph (after a
    blank line) that starts with a line that is only a name, whose lines are all short and
    ask nothing ("Sophie Lambert / Responsable achats — Atelier Lambert SARL / SIRET …")."""
    head, sep, last = text.rstrip().rpartition("\n\n")
    if not sep or not head.strip():
        return text
    lines = [line for line in last.splitlines() if line.strip()]
    if not lines or not NAME_LINE.match(lines[0]):
        return text
    if any(len(line) > SIGNATURE_LINE_MAX or line.rstrip().endswith("?") for line in lines):
        return text
    return head


def _cut(text: str, pattern: re.Pattern[str]) -> str:
    match = pattern.search(text)
    return text[: match.start()] if match else text


def own_words(text: str) -> str:
    """The part of a ticket the customer wrote now (see the module docstring)."""
    head = _cut(_cut(text, REPLY_HEADER), FORWARD_HEADER)
    if not head.strip():  # a bare forward: the forwarded body is the request
        match = FORWARD_HEADER.search(text)
        head = text[match.end() :] if match else text
        # Its subject line is its writer's own words too ("Subject: PO 4471 - orders 12367
        # and 12337" names the orders its body only calls "both desks"); the other headers
        # are addresses and dates.
        head = re.sub(
            r"(?im)^\s*(?:subject|betreff|objet|asunto|oggetto|onderwerp|assunto)\s*:\s*(.*)$",
            r"\1.",
            head,
        )
        head = re.sub(r"(?im)^\s*(?:from|to|sent|date|de|von|an|para|à)\s*:.*$", "", head)
    head = _unsigned(_cut(head, SIGNATURE_START))
    lines = [line for line in head.splitlines() if not line.lstrip().startswith(">")]
    kept: list[str] = []
    for n, line in enumerate(lines):
        if CLOSING.match(line) and kept:
            # The sign-off: the name and phone under it are not the request, but a postscript
            # is the customer's own afterthought ("P.S. cancel 12344 too").
            kept += _postscripts(lines[n + 1 :])
            break
        kept.append(line)
    return "\n".join(kept).strip()


def _postscripts(lines: list[str]) -> list[str]:
    """Each postscript paragraph among the lines under a sign-off."""
    found: list[str] = []
    inside = False
    for line in lines:
        if POSTSCRIPT.match(line):
            inside = True
        elif not line.strip():
            inside = False
        if inside:
            found.append(line)
    return found
