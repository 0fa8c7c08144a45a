"""Conversation "rosa-bakery": a bakery owner and her assistant, January to July 2026 (written for this set)."""

ID = "rosa-bakery"
TITLE = "Rosa's bakery notes"
SPLIT = "test"
ROLES = {"Rosa": "user", "Assistant": "assistant"}

MESSAGES = [
    ("rb-01", "2026-01-05T06:10", "Rosa",
     "Setting up my notes for the year. Flour comes from Millbrook Farms every Monday, and the sourdough "
     "loaf sells for $7.50. Croissants are $3.75 and baguettes $4.20. We open at 7:00 on Saturdays and "
     "close at 14:00."),
    ("rb-02", "2026-01-05T06:11", "Assistant",
     "Got it: Millbrook Farms on Mondays, sourdough $7.50, croissants $3.75, baguettes $4.20, Saturdays 7:00 "
     "to 14:00. Would you like me to track your costs per loaf as well?"),
    ("rb-03", "2026-01-12T15:30", "Rosa",
     "Yes please, later. For now: I have 5 employees, two bakers and three at the counter, and the shop "
     "rent is $3,200 a month. Bean There, the cafe on the corner, orders 40 loaves a week. Gary from "
     "OvenTech services the deck oven every quarter."),
    ("rb-04", "2026-02-02T14:45", "Rosa",
     "January was good, sales up eight percent on last year. Bean There liked the new rye, and their order "
     "is 60 loaves a week starting in February. I'm thinking about opening earlier on Saturdays because "
     "people queue outside."),
    ("rb-05", "2026-02-02T14:46", "Assistant",
     "Nice growth. With 60 loaves a week for Bean There, the Monday flour delivery may need to grow too. "
     "If people queue before 7:00, an earlier Saturday opening could pay for itself."),
    ("rb-06", "2026-02-16T05:55", "Rosa",
     "Decided: on Saturdays we open at 6:30 from this weekend, closing time the same. Hired two more people "
     "for the weekend rush, so we're 7 employees in total. The croissant price stays $3.75."),
    ("rb-07", "2026-03-02T16:20", "Rosa",
     "Millbrook Farms had a bad harvest and the quality dropped, so I switched to Stonegate Mills. Their "
     "delivery day is Tuesday and the price is about the same. The sourdough tastes better already, "
     "customers noticed."),
    ("rb-08", "2026-03-16T13:05", "Rosa",
     "Costs went up across the board, so the sourdough loaf is $8.25 from Monday. Baguettes stay at $4.20 "
     "for now. I put a small sign up explaining why."),
    ("rb-09", "2026-03-16T13:06", "Assistant",
     "That's a reasonable increase; at $8.25 your sourdough is still below the two bakeries downtown. A "
     "short sign explaining higher flour and energy costs usually helps."),
    ("rb-10", "2026-04-06T18:40", "Rosa",
     "The landlord renewed the lease. The rent is $3,450 a month from May, with the same terms otherwise. "
     "He also agreed to repaint the front. Still 7 employees, everyone is doing well."),
    ("rb-11", "2026-04-20T07:30", "Rosa",
     "OvenTech sent a new technician because Gary retired. Lucia services the deck oven now, and she found "
     "a worn door seal that Gary had missed. The next service is in July."),
    ("rb-12", "2026-05-11T12:15", "Rosa",
     "Quick summary for my accountant: flour from Stonegate Mills, sourdough $8.25, croissants $3.75, rent "
     "$3,450. Bean There still takes 60 loaves a week. Saturdays we open at 6:30."),
    ("rb-13", "2026-06-22T17:00", "Rosa",
     "Summer is slower, so I cut one counter shift. We're back to 6 employees, which is enough until "
     "September. Lucia's July visit is booked for the 14th."),
]

FACTS = [
    {"id": "rb-flour-supplier", "subject": "flour supplier",
     "now": "Who supplies my flour?",
     "before": "Who supplied the flour before the switch?",
     "values": [("Millbrook", ["rb-01", "rb-02"]), ("Stonegate", ["rb-07", "rb-12"])]},
    {"id": "rb-sourdough-price", "subject": "sourdough loaf price",
     "now": "How much does the sourdough loaf cost?",
     "before": "How much did the sourdough loaf cost in January?",
     "values": [("$7.50", ["rb-01", "rb-02"]), ("$8.25", ["rb-08", "rb-09", "rb-12"])]},
    {"id": "rb-saturday-opening", "subject": "Saturday opening time",
     "now": "What time do we open on Saturdays?",
     "before": "What time did we open on Saturdays before the change?",
     "values": [("7:00", ["rb-01", "rb-02"]), ("6:30", ["rb-06", "rb-12"])]},
    {"id": "rb-employees", "subject": "number of employees",
     "now": "How many employees do I have?",
     "before": "How many employees did I have in the spring, before the summer cut?",
     "before_value": 1,
     "values": [("5 employees", ["rb-03"]), ("7 employees", ["rb-06", "rb-10"]), ("6 employees", ["rb-13"])]},
    {"id": "rb-rent", "subject": "shop rent",
     "now": "How much is the shop rent?",
     "before": "How much was the shop rent before the lease renewal?",
     "values": [("$3,200", ["rb-03"]), ("$3,450", ["rb-10", "rb-12"])]},
    {"id": "rb-bean-there", "subject": "Bean There weekly order",
     "now": "How many loaves does Bean There order a week?",
     "before": "How many loaves did Bean There order a week originally?",
     "values": [("40 loaves", ["rb-03"]), ("60 loaves", ["rb-04", "rb-05", "rb-12"])]},
    {"id": "rb-oven-technician", "subject": "oven service technician",
     "now": "Who services the deck oven?",
     "before": "Who serviced the deck oven before Lucia?",
     "values": [("Gary", ["rb-03"]), ("Lucia", ["rb-11"])]},
]

STABLE = ["croissant price $3.75 (rb-01, rb-06, rb-12)", "baguette price $4.20 (rb-01, rb-08)",
          "Saturday closing time 14:00 (rb-01, rb-06)"]
