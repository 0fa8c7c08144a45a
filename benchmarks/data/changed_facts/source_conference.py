"""Conversation "devharbor-planning": a team organising a conference, February to September 2026 (written for this set)."""

ID = "devharbor-planning"
TITLE = "DevHarbor 2026 organisers"
SPLIT = "test"

MESSAGES = [
    ("dh-01", "2026-02-02T10:00", "Lena",
     "Kick-off notes for DevHarbor 2026. We booked Riverside Hall for the main venue, and the conference "
     "date is October 8. Catering quotes came in at $42 per head for lunch and two coffee breaks. Omar owns "
     "sponsors, Jun owns the website, Sofia owns speakers."),
    ("dh-02", "2026-02-02T10:20", "Sofia",
     "Great start. Dr. Ana Ruiz agreed to give the keynote, she's talking about open data in cities. The "
     "call for papers closes on June 30, and the review committee is five people. I'll send the reviewer "
     "guide next week."),
    ("dh-03", "2026-02-09T14:30", "Jun",
     "Website is live with ticketing. Early-bird tickets are $199, regular tickets $349 and student tickets "
     "$99. We have a hotel block of 40 rooms at the Harbour Inn, bookable with a code on the site. The "
     "sponsor page goes up Friday."),
    ("dh-04", "2026-02-23T09:15", "Omar",
     "Sponsor update: two gold sponsors signed, one silver. Registrations so far: 180, which is ahead of "
     "last year at this point. The gold sponsors each want a booth near the coffee area."),
    ("dh-05", "2026-03-09T16:45", "Lena",
     "Bad news and good news. Riverside Hall double-booked us, so we lose that date; the good news is that "
     "Pier 9 Center can host us and has a bigger main room. The conference date is October 15 now, a week "
     "later. Catering stays with the same company."),
    ("dh-06", "2026-03-09T17:05", "Jun",
     "Updating the website for the new venue and the 15th tonight. Everyone who registered gets an email "
     "tomorrow. Early-bird tickets stay at $199 until the end of April."),
    ("dh-07", "2026-03-23T11:10", "Omar",
     "Registrations are at 265, the venue change didn't hurt us. Another silver sponsor is in. The Harbour "
     "Inn gave us 55 rooms in the block since we're bringing more people, same code."),
    ("dh-08", "2026-04-06T13:00", "Sofia",
     "Speakers: Dr. Ana Ruiz had to withdraw for family reasons, sadly. Kwame Mensah will give the keynote "
     "instead, on building developer communities in West Africa. The call for papers is extended to "
     "July 14 because of the date move. Reviewers have agreed."),
    ("dh-09", "2026-04-20T10:30", "Lena",
     "Catering: the caterer raised prices for autumn, the lunch and two breaks are $47 per head now. Still "
     "within budget if registrations hold. The budget sheet is updated, the total budget remains $60,000."),
    ("dh-10", "2026-05-04T09:40", "Jun",
     "Early-bird sold out in three weeks, so the next batch of tickets is $249 and regular stays at $349. "
     "Student tickets are still $99. I've also added a waitlist for workshops."),
    ("dh-11", "2026-05-18T15:20", "Omar",
     "Pier 9 Center sent the contract, I countersigned. Registrations so far: 340, and we're capping at 450 "
     "for the main room. Sponsors are asking for the floor plan by June."),
    ("dh-12", "2026-06-01T12:00", "Lena",
     "The city marathon is on October 15, and Pier 9 Center offered us October 22 with no extra cost, so "
     "DevHarbor takes place on October 22. I'm sorry for moving it twice. Kwame confirmed he can still do "
     "the keynote."),
    ("dh-13", "2026-06-15T10:10", "Sofia",
     "The program committee meets on July 20, after the call for papers closes on July 14. We expect about "
     "120 submissions. Kwame's keynote title is final."),
    ("dh-14", "2026-07-06T14:25", "Jun",
     "Website reflects everything: Pier 9 Center, October 22, and the $249 ticket price after early-bird. "
     "The Harbour Inn block is still 55 rooms. Student tickets stay $99."),
    ("dh-15", "2026-08-03T09:00", "Omar",
     "Final sponsor count is three gold and three silver. The total budget is still $60,000 and we're "
     "under by about five percent. I'll circulate the floor plan on Thursday."),
]

FACTS = [
    {"id": "dh-venue", "subject": "conference venue",
     "now": "Where is DevHarbor being held?",
     "before": "Which venue was booked for DevHarbor originally?",
     "values": [("Riverside Hall", ["dh-01"]), ("Pier 9 Center", ["dh-05", "dh-11", "dh-14"])]},
    {"id": "dh-date", "subject": "conference date",
     "now": "What is the date of the conference?",
     "before": "What was the conference date at the kick-off?",
     "before_value": 0,
     "values": [("October 8", ["dh-01"]), ("October 15", ["dh-05"]), ("October 22", ["dh-12", "dh-14"])]},
    {"id": "dh-registrations", "subject": "registrations so far",
     "now": "How many registrations do we have so far?",
     "before": "How many registrations did we have in late March?",
     "before_value": 1,
     "values": [("180", ["dh-04"]), ("265", ["dh-07"]), ("340", ["dh-11"])]},
    {"id": "dh-catering", "subject": "catering price per head",
     "now": "How much does catering cost per head?",
     "before": "What was the catering price per head before the caterer raised prices?",
     "values": [("$42", ["dh-01"]), ("$47", ["dh-09"])]},
    {"id": "dh-keynote", "subject": "keynote speaker",
     "now": "Who is giving the keynote?",
     "before": "Who was the keynote speaker originally?",
     "values": [("Ana Ruiz", ["dh-02"]), ("Kwame Mensah", ["dh-08"])]},
    {"id": "dh-hotel-rooms", "subject": "hotel block size",
     "now": "How many rooms are in the hotel block?",
     "before": "How many rooms were in the hotel block before the Harbour Inn enlarged it?",
     "values": [("40 rooms", ["dh-03"]), ("55 rooms", ["dh-07", "dh-14"])]},
    {"id": "dh-ticket-price", "subject": "cheapest adult ticket price",
     "now": "How much is the cheapest non-student ticket now?",
     "before": "How much was the cheapest non-student ticket before the early-bird sold out?",
     "values": [("$199", ["dh-03", "dh-06"]), ("$249", ["dh-10", "dh-14"])]},
    {"id": "dh-cfp-deadline", "subject": "call for papers deadline",
     "now": "When does the call for papers close?",
     "before": "When was the call for papers supposed to close before the extension?",
     "values": [("June 30", ["dh-02"]), ("July 14", ["dh-08", "dh-13"])]},
]

STABLE = ["regular ticket $349 (dh-03, dh-10)", "student ticket $99 (dh-03, dh-10, dh-14)",
          "total budget $60,000 (dh-09, dh-15)"]
