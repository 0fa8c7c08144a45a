"""Conversation "maya-assistant": a user and her assistant, several sessions over months (written for this set)."""

ID = "maya-assistant"
TITLE = "Maya's chats with her assistant"
SPLIT = "dev"
ROLES = {"Maya": "user", "Assistant": "assistant"}

MESSAGES = [
    ("ma-01", "2026-01-08T19:02", "Maya",
     "Okay, new year, new tracking. My highest bowling score so far is 124 points, and I want to break 150 "
     "by summer. Tom's best is 141, which he reminds me of every Thursday. Also, I'm allergic to penicillin, "
     "please remember that if we ever talk about prescriptions."),
    ("ma-02", "2026-01-08T19:03", "Assistant",
     "Noted: 124 is your bowling high score, the goal is 150, and you're allergic to penicillin. A good first "
     "step is to pick one spare system and practise it every session. Would you like a simple practice plan?"),
    ("ma-03", "2026-01-15T20:40", "Maya",
     "House hunting update. The bank pre-approved us for a mortgage of $350,000, which rules out most of the "
     "east side. Our rent is $1,850 a month until the lease ends in August. My sister pays $2,100 for a "
     "smaller place, so we can't complain."),
    ("ma-04", "2026-01-22T07:15", "Maya",
     "Started meditating before work. My meditation streak is 12 days, which is a record for me. The "
     "Subaru has 48,200 miles on it and needs new tyres before the ski trip. Can you remind me to book the "
     "tyre shop?"),
    ("ma-05", "2026-01-22T07:16", "Assistant",
     "I'll remind you about the tyre shop. Twelve days is a solid streak; the second and third weeks are "
     "usually where it gets easier. With 48,200 miles the tyres are probably due anyway."),
    ("ma-06", "2026-02-02T18:30", "Maya",
     "The dentist appointment is on March 14 at 9:00, and Lily's piano lesson is on Wednesdays at 4:30 pm, "
     "so I need to leave work early that day. Work is busy: I'm still at Halden Bank, on the payments "
     "team, and we have an audit in March."),
    ("ma-07", "2026-02-12T21:05", "Maya",
     "Bowled on Tuesday with the league and finally got past my record. My highest score is 132 now, "
     "mostly thanks to picking up the 10-pin spares. Tom is annoyed because his best is still 141. Next "
     "target is 140."),
    ("ma-08", "2026-02-12T21:06", "Assistant",
     "Congratulations on 132! Converting 10-pin spares is the biggest single gain for most league bowlers. "
     "If you keep your spare conversion up, 140 is realistic within a couple of months."),
    ("ma-09", "2026-02-19T06:50", "Maya",
     "The meditation streak is at 19 days and I've started doing ten minutes instead of five. The lease "
     "renewal letter came: rent will be $1,975 a month from March, which is annoying but still below "
     "what my sister pays. The landlord also promised to fix the balcony door."),
    ("ma-10", "2026-02-26T12:10", "Maya",
     "Had to move things around. The dentist moved my appointment to March 28, same time, because of a "
     "staff training day. Lily's piano teacher also switched her to Mondays at 5:15 pm. Honestly the "
     "new time is easier for me."),
    ("ma-11", "2026-03-05T19:45", "Maya",
     "Big news: the bank raised our pre-approval to $400,000 after my bonus came through. That opens up "
     "the neighbourhood near Lily's school. We're viewing two houses on Saturday. Still allergic to "
     "penicillin, for the record, the doctor asked again today."),
    ("ma-12", "2026-03-05T19:46", "Assistant",
     "That's great news. With $400,000 you could also consider the townhouses on the north side. For "
     "Saturday, bring a checklist for the roof, the windows and the heating so you can compare the two "
     "houses."),
    ("ma-13", "2026-03-20T08:30", "Maya",
     "Meditation streak: 26 days! I missed one evening but did it in the morning, so it counts. The Subaru "
     "is at 51,900 miles after the ski trip, and the new tyres were worth it. Work is calmer since the "
     "audit finished."),
    ("ma-14", "2026-04-10T17:55", "Maya",
     "I have news on the job front: I accepted an offer and I'm at Corvo Insurance from May, leading a "
     "small data team. Halden was good to me but I wanted something new. I'll keep my league night on "
     "Tuesdays."),
    ("ma-15", "2026-04-10T17:56", "Assistant",
     "Congratulations on the new role at Corvo Insurance! Leading a data team is a big step. If you want, "
     "we can plan your first 90 days together closer to your start date."),
    ("ma-16", "2026-05-06T20:15", "Maya",
     "First week at Corvo done, everyone is nice and the data is a mess, which is job security. Tom's best "
     "bowling score is still 141 and mine is still 132, we're both stuck. Lily loves her Monday piano "
     "lessons."),
]

FACTS = [
    {"id": "ma-bowling-high", "subject": "Maya's highest bowling score",
     "now": "What is my highest bowling score so far?",
     "before": "What was my highest bowling score in January?",
     "values": [("124", ["ma-01", "ma-02"]), ("132", ["ma-07", "ma-08", "ma-16"])]},
    {"id": "ma-preapproval", "subject": "mortgage pre-approval amount",
     "now": "How much are we pre-approved for on the mortgage?",
     "before": "How much was the original mortgage pre-approval?",
     "values": [("350,000", ["ma-03"]), ("400,000", ["ma-11", "ma-12"])]},
    {"id": "ma-meditation", "subject": "meditation streak",
     "now": "How long is my meditation streak?",
     "before": "How long was my meditation streak in mid-February?",
     "before_value": 1,
     "values": [("12 days", ["ma-04"]), ("19 days", ["ma-09"]), ("26 days", ["ma-13"])]},
    {"id": "ma-rent", "subject": "monthly rent",
     "now": "How much is our rent now?",
     "before": "How much was our rent before the lease renewal?",
     "values": [("1,850", ["ma-03"]), ("1,975", ["ma-09"])]},
    {"id": "ma-dentist", "subject": "dentist appointment date",
     "now": "When is my dentist appointment?",
     "before": "When was the dentist appointment originally booked for?",
     "values": [("March 14", ["ma-06"]), ("March 28", ["ma-10"])]},
    {"id": "ma-piano", "subject": "Lily's piano lesson day",
     "now": "Which day is Lily's piano lesson?",
     "before": "Which day was Lily's piano lesson before her teacher switched it?",
     "values": [("Wednesday", ["ma-06"]), ("Monday", ["ma-10", "ma-16"])]},
    {"id": "ma-mileage", "subject": "Subaru mileage",
     "now": "How many miles does the Subaru have?",
     "before": "How many miles did the Subaru have before the ski trip?",
     "values": [("48,200", ["ma-04", "ma-05"]), ("51,900", ["ma-13"])]},
    {"id": "ma-employer", "subject": "Maya's employer",
     "now": "Where do I work?",
     "before": "Where did I work before my current job?",
     "values": [("Halden Bank", ["ma-06"]), ("Corvo Insurance", ["ma-14", "ma-15"])]},
]

STABLE = ["Tom's best bowling score 141 (ma-01, ma-07, ma-16)", "penicillin allergy (ma-01, ma-11)",
          "sister's rent $2,100 (ma-03)"]
