"""A seeded stream of chats with known ground truth, for benchmarks/hygiene.py (issue 31).

``generate(n_messages, seed)`` returns a ``Stream``: conversations in memgrove's shape
(``{"id", "messages": [{"id", "speaker", "text", "time", "session"}]}``, what ``Memory.ingest``
takes), the truth about every message, and questions about the facts with their expected values.

What the chats hold, in time order over about a year:

- **facts** of five kinds, each about its own subject: a service's port ("the staging database
  listens on port 5432"), a team office's address, a system's owner, a service's version, a
  launch date; and first-person preferences of one speaker (an editor, an airline, a gym);
- **repeats**: a fact said again in the same words (an exact duplicate), or in other words with
  the same value (a paraphrase: a near duplicate);
- **changes**: a fact's value changed one to three times, each said in words that say so ("now",
  "we moved", "from ... to") or just stated anew;
- **filler**: small talk ("Thanks!", "Sounds good") and sentences drawn word by word from a large
  vocabulary of everyday topics (not one template: two filler messages rarely share most words,
  as two real ones rarely do), some with numbers ("I ran 5 km") and names, as real chats have.

Message references are ``"<conversation id>#<message id>"``, as the curator's sources write them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

SPEAKERS = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Farid", "Greta", "Hugo", "Isla", "Jonas", "Kemi", "Lars"]
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
DAYS = 360

ENVS = ["staging", "production", "qa", "dev", "canary", "sandbox", "demo", "perf", "preview", "integration",
        "regional", "backup"]
SERVICES = ["database", "cache", "message queue", "search index", "metrics collector", "auth proxy",
            "gateway", "job scheduler", "object store", "flag server", "billing worker", "log shipper"]
SYSTEMS = ["payments", "checkout", "inventory", "ledger", "notifications", "recommendations", "onboarding",
           "reporting", "identity", "shipping", "pricing", "catalog", "invoicing", "analytics", "chat", "loyalty",
           "refunds", "fraud", "tax", "search"]
TEAMS = ["design", "data platform", "mobile", "security", "support", "finance", "legal", "research", "growth",
         "infrastructure", "marketing", "sales"]
STREETS = ["Oak", "Elm", "Harbor", "Mill", "Cedar", "King", "Queen", "Station", "Market", "Bridge", "Willow",
           "Chapel", "Orchard", "Foundry", "Canal", "Garden"]
SUFFIXES = ["Road", "Street", "Avenue", "Lane"]
OWNERS = ["Priya", "Dana", "Mateo", "Yuki", "Olu", "Sven", "Ines", "Tariq", "Noor", "Rafael", "Mina", "Aziz",
          "Leona", "Bruno", "Sanne", "Ivo", "Marta", "Kofi", "Hana", "Pablo"]
PROJECTS = ["Atlas", "Beacon", "Comet", "Drift", "Ember", "Falcon", "Glacier", "Harbor", "Iris", "Juniper",
            "Kestrel", "Lumen", "Mosaic", "Nimbus", "Onyx", "Pioneer"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
PREFS = {   # topic -> (values, how it is said, how a change is said, the question)
    "editor": (["Vim", "Emacs", "Helix", "Zed", "Sublime"], "My favourite code editor is {v}, by far.",
               "I switched my favourite code editor to {v}.", "What is {who}'s favourite code editor?"),
    "airline": (["Lufthansa", "KLM", "Iberia", "Finnair", "Ryanair"], "For work trips I always fly with {v}.",
                "For work trips I now fly with {v}.", "Which airline does {who} fly with for work trips?"),
    "gym": (["Fitlab", "Ironworks", "Pulse", "Corehouse", "Basecamp"], "My gym membership is at {v} downtown.",
            "I moved my gym membership to {v} downtown.", "Where is {who}'s gym membership?"),
}


@dataclass
class Fact:
    """One subject and the values it takes, in order."""

    id: str
    kind: str                  # port, address, owner, version, date, preference
    values: list[str]
    says: list[str]            # templates stating the value ({v})
    changes: list[str]         # templates saying it changed ({v}, {old})
    current_q: str             # question asking the value now
    before_q: str              # question asking the value before a day ({day})
    speaker: str | None = None  # a preference is its speaker's own


@dataclass
class Stream:
    conversations: list[dict[str, Any]]
    truth: dict[str, dict[str, Any]]    # message ref -> {"kind", "fact", "value", "step"}
    questions: list[dict[str, Any]]     # {"fact", "type": "current"|"before", "question", "expected", ...}
    facts: dict[str, Fact] = field(default_factory=dict)

    def messages(self) -> int:
        return sum(len(c["messages"]) for c in self.conversations)


def _version(r: random.Random) -> str:
    return f"{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}"


def _facts(r: random.Random, n: int) -> list[Fact]:
    out: list[Fact] = []
    ports = [(e, s) for e in ENVS for s in SERVICES]
    r.shuffle(ports)
    kinds = ["port", "address", "owner", "version", "date", "preference"]
    used: dict[str, int] = {k: 0 for k in kinds}
    pref_pairs = [(who, topic) for who in SPEAKERS for topic in PREFS]
    r.shuffle(pref_pairs)
    for i in range(n):
        kind = kinds[i % len(kinds)]
        k = used[kind]
        used[kind] += 1
        steps = 1 + (r.random() < 0.65) * r.randint(1, 3)   # values taken: 1 to 4
        if kind == "port" and k < len(ports):
            env, svc = ports[k]
            vals = [str(p) for p in r.sample(range(2000, 9999), steps)]
            out.append(Fact(f"port-{env}-{svc}".replace(" ", "_"), kind, vals,
                            [f"The {env} {svc} listens on port {{v}}.", f"Port {{v}} is where the {env} {svc} listens.",
                             f"FYI the {env} {svc} port is {{v}}."],
                            [f"The {env} {svc} now listens on port {{v}}.",
                             f"Heads up: we moved the {env} {svc} from port {{old}} to port {{v}}.",
                             f"The {env} {svc} listens on port {{v}} from today."],
                            f"Which port does the {env} {svc} listen on?",
                            f"Which port did the {env} {svc} listen on before {{day}}?"))
        elif kind == "address" and k < len(TEAMS) * 2:
            team = TEAMS[k % len(TEAMS)] + (" east" if k >= len(TEAMS) else "")
            addrs = [f"{r.randint(2, 180)} {s} {r.choice(SUFFIXES)}" for s in r.sample(STREETS, steps)]
            out.append(Fact(f"address-{team}".replace(" ", "_"), kind, addrs,
                            [f"The {team} team office is at {{v}}.", f"You can find the {team} team office at {{v}}.",
                             f"Our {team} team office address: {{v}}."],
                            [f"The {team} team office moved to {{v}}.",
                             f"The {team} team office is now at {{v}}.",
                             f"The {team} team office moved from {{old}} to {{v}} this week."],
                            f"Where is the {team} team office?",
                            f"Where was the {team} team office before {{day}}?"))
        elif kind == "owner" and k < len(SYSTEMS):
            system = SYSTEMS[k]
            owners = r.sample(OWNERS, steps)
            out.append(Fact(f"owner-{system}", kind, owners,
                            [f"{{v}} owns the {system} service on-call rota.",
                             f"The {system} service on-call rota is owned by {{v}}.",
                             f"Ping {{v}} about the {system} service on-call rota, {{v}} owns it."],
                            [f"{{v}} now owns the {system} service on-call rota.",
                             f"The {system} service on-call rota moved from {{old}} to {{v}}.",
                             f"Starting this week {{v}} owns the {system} service on-call rota."],
                            f"Who owns the {system} service on-call rota?",
                            f"Who owned the {system} service on-call rota before {{day}}?"))
        elif kind == "version" and k < len(SYSTEMS):
            system = SYSTEMS[-1 - k]
            vals = list(dict.fromkeys(_version(r) for _ in range(steps + 3)))[:steps]
            out.append(Fact(f"version-{system}", kind, vals,
                            [f"The {system} backend runs release {{v}} in production.",
                             f"In production the {system} backend is on release {{v}}.",
                             f"Release {{v}} is what the {system} backend runs in production."],
                            [f"The {system} backend now runs release {{v}} in production.",
                             f"We upgraded the {system} backend in production from {{old}} to {{v}}.",
                             f"The {system} backend runs release {{v}} in production since the rollout."],
                            f"Which release does the {system} backend run in production?",
                            f"Which release did the {system} backend run in production before {{day}}?"))
        elif kind == "date" and k < len(PROJECTS):
            project = PROJECTS[k]
            days = r.sample(range(1, 28), steps)
            months = [r.choice(MONTHS[6:]) for _ in days]
            vals = [f"{d} {m} 2026" for d, m in zip(days, months)]
            out.append(Fact(f"date-{project}", kind, vals,
                            [f"The {project} launch is planned for {{v}}.", f"We plan the {project} launch for {{v}}.",
                             f"Mark {{v}} for the {project} launch."],
                            [f"The {project} launch moved to {{v}}.", f"The {project} launch is now planned for {{v}}.",
                             f"The {project} launch moved from {{old}} to {{v}}."],
                            f"When is the {project} launch planned?",
                            f"When was the {project} launch planned before {{day}}?"))
        elif kind == "preference" and k < len(pref_pairs):
            who, topic = pref_pairs[k]
            values, says, change, q = PREFS[topic]
            vals = r.sample(values, min(steps, len(values)))
            out.append(Fact(f"pref-{who}-{topic}", kind, vals, [says], [change], q.format(who=who),
                            q.format(who=who).replace("What is", "What was").replace("Which airline does",
                            "Which airline did").replace("Where is", "Where was").rstrip("?") + " before {day}?",
                            speaker=who))
    return out


# filler: word by word from everyday topics, so that two filler messages rarely share most words
_F_SUBJ = ["my sister", "my neighbour", "our dog", "the kids", "my cousin", "a friend from school", "my landlord",
           "the new barista", "my grandmother", "our book club", "the bakery owner", "my running buddy",
           "a colleague", "the yoga teacher", "my brother", "the mechanic", "our cat", "the florist"]
_F_VERB = ["loved", "complained about", "recommended", "talked for ages about", "finally tried", "could not stop laughing at",
           "spent the weekend on", "got really into", "gave up on", "was surprised by", "asked me about",
           "bought", "painted", "fixed", "lost", "found", "photographed", "cooked"]
_F_ADJ = ["an old", "a tiny", "a bright red", "a secondhand", "a handmade", "a noisy", "a borrowed", "a lopsided",
          "a fancy", "a wobbly", "a dusty", "a brand new", "a striped", "a foldable", "a hand-painted", "a rusty",
          "a glow-in-the-dark", "a waterproof", "a chipped", "a giant", "a miniature", "a vintage", "a solar-powered",
          "a crooked", "a lavender-scented", "a neon", "a wooden", "a ceramic", "a knitted", "an inflatable"]
_F_NOUN = ["bicycle", "sourdough starter", "jigsaw puzzle", "tomato planter", "camera", "kayak", "teapot", "lamp",
           "birdhouse", "violin", "jacket", "kite", "record player", "chess set", "sewing machine", "hammock",
           "telescope", "skateboard", "aquarium", "typewriter", "ukulele", "bookshelf", "fondue pot", "tent",
           "snow globe", "rocking chair", "accordion", "bread machine", "garden gnome", "canoe", "harmonica",
           "espresso grinder", "map of the city", "pinball machine", "weather vane", "cuckoo clock", "easel",
           "trampoline", "lantern", "music box"]
_F_TAIL = ["at the lake", "during the power cut", "before the wedding", "after the exam", "at the cabin",
           "while the soup cooked", "between two meetings", "on the balcony", "at grandma's place", "in the rain",
           "during the school run", "at the allotment", "before the movie", "after choir practice",
           "last weekend", "after the storm", "on a rainy afternoon", "before breakfast", "during the holidays",
           "while visiting the coast", "in the middle of the night", "on the way home", "with great enthusiasm",
           "for no reason at all", "right after lunch", "at the street fair", "in the old town", "near the harbour",
           "with the whole family", "despite the heat", "just for fun", "at the community centre"]
_F_NUMBERED = ["{S} counted {n} {noun}s at the fair {t}.", "{S} paid {n} euros for {a} {noun} {t}.",
               "{S} spent {n} minutes fixing {a} {noun} {t}.", "{S} carried {a} {noun} {n} metres {t}."]
_SMALL_TALK = ["Thanks!", "Sounds good", "Haha, nice", "Ok, thanks so much!", "Great, see you then.", "Sure thing.",
               "Thanks, that helps a lot!", "Got it, thanks.", "Awesome!", "Love that.", "No worries.", "Good luck!",
               "Oh wow.", "Sounds great, thank you!", "Cool, talk later.", "Yes, exactly.", "Haha, same here."]
_F_REPLY = ["That sounds like a lovely way to spend {t}.", "Wait, {s} {v} {o}? Tell me more.",
            "I had no idea {s} {v} {o}.", "Did {s} enjoy it?", "How did that go?", "Send me a picture of {o}!"]


def _filler(r: random.Random) -> str:
    x = r.random()
    s, v, t = r.choice(_F_SUBJ), r.choice(_F_VERB), r.choice(_F_TAIL)
    a, noun = r.choice(_F_ADJ), r.choice(_F_NOUN)
    o = f"{a} {noun}"
    if x < 0.3:
        return r.choice(_SMALL_TALK)
    if x < 0.38:
        return r.choice(_F_NUMBERED).format(S=s[0].upper() + s[1:], n=r.randint(3, 900), a=a, noun=noun, t=t)
    if x < 0.55:
        return r.choice(_F_REPLY).format(s=s, v=v, o=o, t=t)
    out = f"{s[0].upper()}{s[1:]} {v} {o} {t}."
    if r.random() < 0.4:
        out += f" Then {r.choice(_F_SUBJ)} {r.choice(_F_VERB)} {r.choice(_F_ADJ)} {r.choice(_F_NOUN)}."
    return out


def _say(r: random.Random, fact: Fact, step: int, how: str) -> str:
    v = fact.values[step]
    if how == "change":
        return r.choice(fact.changes).format(v=v, old=fact.values[step - 1])
    return (r.choice(fact.says[1:] or fact.says) if how == "paraphrase" else fact.says[0]).format(v=v)


def generate(n_messages: int, seed: int = 0) -> Stream:
    """A stream of ``n_messages`` chat messages (more when the facts alone need more), with its truth
    and questions."""
    r = random.Random(seed)
    n_facts = max(6, n_messages // 25)
    facts = _facts(r, n_facts)
    # each fact's events: (day, how, step); values change at increasing days
    events: list[tuple[float, int, str, int]] = []
    for fi, f in enumerate(facts):
        day = r.uniform(0, DAYS * 0.4)
        for step in range(len(f.values)):
            if step:
                day += r.uniform(15, (DAYS - day) / (len(f.values) - step + 1) + 15)
            events.append((day, fi, "change" if step else "first", step))
            for _ in range(r.choice([0, 0, 1, 1, 2])):             # repeats of this value
                events.append((day + r.uniform(0.5, 12), fi, r.choice(["repeat", "paraphrase"]), step))
    events.sort()
    fact_msgs = len(events)
    n_convs = max(1, n_messages // 30)
    # every conversation gets its day; fact events go to the first conversation on or after their day
    conv_days = sorted(r.uniform(0, DAYS + 20) for _ in range(n_convs))
    conv_days[-1] = max(conv_days[-1], events[-1][0] + 1) if events else conv_days[-1]
    slots: list[list[tuple[float, int, str, int]]] = [[] for _ in range(n_convs)]
    ci = 0
    for ev in events:
        while ci < n_convs - 1 and conv_days[ci] < ev[0]:
            ci += 1
        slots[ci].append(ev)
    filler_total = max(0, n_messages - fact_msgs)
    extra = [filler_total // n_convs + (i < filler_total % n_convs) for i in range(n_convs)]
    conversations, truth = [], {}
    said: dict[tuple[int, int], str] = {}      # (fact, step) -> the first text that said it
    texts: dict[tuple[int, int], set[str]] = {}   # (fact, step) -> every text that said it
    for ci in range(n_convs):
        cid = f"chat-{ci:05d}"
        pair = r.sample(SPEAKERS, 2)
        order = [("fact", ev) for ev in slots[ci]] + [("filler", None)] * extra[ci]
        r.shuffle(order)
        # fact events keep their order within the chat
        fe = iter(slots[ci])
        order = [("fact", next(fe)) if kind == "fact" else (kind, None) for kind, _ in order]
        start = START + timedelta(days=conv_days[ci])
        msgs = []
        for mi, (kind, ev) in enumerate(order, 1):
            at = start + timedelta(minutes=2 * mi)
            ref = f"{cid}#m{mi}"
            if kind == "fact":
                _, fi, how, step = ev
                f = facts[fi]
                speaker = f.speaker or pair[mi % 2]
                if f.speaker and f.speaker not in pair:
                    pair[mi % 2] = f.speaker
                if how == "repeat" and (fi, step) in said:
                    text = said[(fi, step)]
                else:
                    text = _say(r, f, step, "change" if how == "change" else
                                ("paraphrase" if how == "paraphrase" else "first"))
                    # the truth says what the words are: a "paraphrase" in the words already said is a repeat
                    if how != "change":
                        how = "repeat" if text in texts.get((fi, step), ()) else \
                            ("paraphrase" if (fi, step) in said else "first")
                said.setdefault((fi, step), text)
                texts.setdefault((fi, step), set()).add(text)
                truth[ref] = {"kind": how, "fact": f.id, "value": f.values[step], "step": step,
                              "text": text, "at": at.strftime("%Y-%m-%dT%H:%M:%SZ")}
            else:
                speaker = pair[mi % 2]
                text = _filler(r)
                truth[ref] = {"kind": "filler", "fact": None, "value": None, "step": None, "text": text,
                              "at": at.strftime("%Y-%m-%dT%H:%M:%SZ")}
            msgs.append({"id": f"m{mi}", "speaker": speaker, "text": text,
                         "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "session": f"{cid}-s1"})
        conversations.append({"id": cid, "messages": msgs})
    return Stream(conversations, truth, _questions(facts, truth), {f.id: f for f in facts})


def _questions(facts: list[Fact], truth: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """For each fact whose value changed: the current value, and the value before each change."""
    first_said: dict[tuple[str, int], str] = {}
    for ref, t in sorted(truth.items(), key=lambda kv: kv[1]["at"]):
        if t["fact"] is not None:
            first_said.setdefault((t["fact"], t["step"]), t["at"])
    out = []
    for f in facts:
        said = [s for s in range(len(f.values)) if (f.id, s) in first_said]
        if len(said) < 2:
            continue
        out.append({"fact": f.id, "type": "current", "question": f.current_q, "expected": f.values[said[-1]],
                    "old": [f.values[s] for s in said[:-1]]})
        for s in said[1:]:
            day = datetime.fromisoformat(first_said[(f.id, s)].replace("Z", "+00:00"))
            label = f"{day.day} {MONTHS[day.month - 1]} {day.year}"
            out.append({"fact": f.id, "type": "before", "question": f.before_q.format(day=label),
                        "expected": f.values[s - 1], "before": label})
    return out
