"""Conversation "sam-relocation": a user planning a family move with an assistant, February to August 2026 (written for this set)."""

ID = "sam-relocation"
TITLE = "Sam's move"
SPLIT = "test"
ROLES = {"Sam": "user", "Assistant": "assistant"}

MESSAGES = [
    ("sr-01", "2026-02-03T20:10", "Sam",
     "We signed for the new place! The new address is 14 Alder Street, a townhouse ten minutes from my "
     "office. The moving date is May 9, a Saturday. My brother Joel lives at 3 Cedar Lane, so we'll be "
     "close to him, which the kids love."),
    ("sr-02", "2026-02-03T20:11", "Assistant",
     "Congratulations on the townhouse at 14 Alder Street! With a May 9 move, I'd book movers at least "
     "eight weeks ahead. Would you like a checklist for the move?"),
    ("sr-03", "2026-02-17T19:30", "Sam",
     "Yes, checklist please. First quotes are in: the movers quoted $2,400 for the whole job, packing "
     "included. The kids will go to Westbrook Elementary, the enrollment form is done. The deposit on the "
     "old apartment is $2,000 and the landlord says we'll get it back in full."),
    ("sr-04", "2026-02-17T19:31", "Assistant",
     "Here's a start: book movers, transfer utilities, change your address, and notify Westbrook "
     "Elementary of the start date. A $2,400 quote with packing included is fair for a townhouse."),
    ("sr-05", "2026-03-02T21:00", "Sam",
     "Internet will be Fibrelink at the new place, they're the only fibre option on the street. Our grocery "
     "budget is $900 a month, which I want to bring down after the move. We rented storage unit 118 for the "
     "stuff that won't fit."),
    ("sr-06", "2026-03-16T18:45", "Sam",
     "Plot twist. The seller of the Alder Street townhouse pulled out, so we went with a bigger house: "
     "220 Birch Avenue. It's farther from my office but the garden is huge. The kids' school changes too, "
     "they'll be at Lakeside Elementary instead of Westbrook."),
    ("sr-07", "2026-03-16T18:46", "Assistant",
     "Sorry about Alder Street, but 220 Birch Avenue sounds lovely. Remember to update the school "
     "enrollment with Lakeside Elementary and to ask the movers to re-quote for the new address."),
    ("sr-08", "2026-03-30T20:20", "Sam",
     "Movers re-quoted: $2,150 with packing, cheaper because the new house has easier access for the "
     "truck. The moving date slips to May 23 because the sellers need two more weeks. Joel is still at "
     "3 Cedar Lane, so he's farther now but still close."),
    ("sr-09", "2026-04-13T19:05", "Sam",
     "Fibrelink doesn't cover Birch Avenue, so we signed with Nordnet for internet, installation on the "
     "24th of May. The storage place moved us to unit 207 because 118 had a leak. Nothing got wet, "
     "luckily."),
    ("sr-10", "2026-04-13T19:06", "Assistant",
     "Good catch on the leak. Unit 207 and Nordnet are noted. If the installation is on May 24, you'll have "
     "internet the day after you move in."),
    ("sr-11", "2026-06-08T20:40", "Sam",
     "We're in! Everything arrived at 220 Birch Avenue without damage. The grocery budget is $750 a month "
     "from June, the new supermarket is cheaper and we cook more. The deposit came back, the full $2,000."),
    ("sr-12", "2026-07-20T19:15", "Sam",
     "Settling in. The kids like Lakeside Elementary, and the Nordnet connection has been solid. We'll empty "
     "unit 207 in August and close the storage contract."),
]

FACTS = [
    {"id": "sr-address", "subject": "new home address",
     "now": "What is our new address?",
     "before": "What was the address of the first house we signed for?",
     "values": [("14 Alder Street", ["sr-01", "sr-02"]), ("220 Birch Avenue", ["sr-06", "sr-07", "sr-11"])]},
    {"id": "sr-moving-date", "subject": "moving date",
     "now": "What is the moving date?",
     "before": "What was the moving date originally?",
     "values": [("May 9", ["sr-01", "sr-02"]), ("May 23", ["sr-08"])]},
    {"id": "sr-movers-quote", "subject": "movers' quote",
     "now": "How much did the movers quote?",
     "before": "How much was the movers' first quote?",
     "values": [("$2,400", ["sr-03", "sr-04"]), ("$2,150", ["sr-08"])]},
    {"id": "sr-internet", "subject": "internet provider",
     "now": "Which internet provider do we have at the new place?",
     "before": "Which internet provider did we plan on before the address change?",
     "values": [("Fibrelink", ["sr-05"]), ("Nordnet", ["sr-09", "sr-10", "sr-12"])]},
    {"id": "sr-school", "subject": "kids' school",
     "now": "Which school do the kids go to?",
     "before": "Which school were the kids enrolled at originally?",
     "values": [("Westbrook", ["sr-03", "sr-04"]), ("Lakeside", ["sr-06", "sr-07", "sr-12"])]},
    {"id": "sr-storage-unit", "subject": "storage unit number",
     "now": "Which storage unit do we rent?",
     "before": "Which storage unit did we rent before the leak?",
     "values": [("118", ["sr-05"]), ("207", ["sr-09", "sr-10", "sr-12"])]},
    {"id": "sr-grocery-budget", "subject": "monthly grocery budget",
     "now": "What is our monthly grocery budget?",
     "before": "What was our grocery budget before the move?",
     "values": [("$900", ["sr-05"]), ("$750", ["sr-11"])]},
]

STABLE = ["brother Joel's address 3 Cedar Lane (sr-01, sr-08)", "old apartment deposit $2,000 (sr-03, sr-11)"]
