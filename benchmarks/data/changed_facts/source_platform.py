"""Conversation "platform-team": a platform team's chat, January to June 2026 (written for this set)."""

ID = "platform-team"
TITLE = "#platform team chat"
SPLIT = "dev"

MESSAGES = [
    ("pt-01", "2026-01-12T09:14", "Dana",
     "Morning all, a few housekeeping notes for the new year. The staging database listens on port 5432 and the "
     "production database on 5433, so please stop hardcoding 5432 in the prod configs. Deploys happen in the "
     "Tuesday window, 14:00 to 16:00, and nothing goes out on Fridays. I'll pin this in the channel."),
    ("pt-02", "2026-01-12T09:31", "Marco",
     "Thanks Dana. For the record, Ben is the primary on-call this quarter and Priya is secondary. The nightly backup "
     "runs at 03:00 and takes about forty minutes, so don't schedule migrations before 04:00. If the pager goes "
     "off for disk space it is almost always the log volume."),
    ("pt-03", "2026-01-14T15:02", "Priya",
     "Quick update on the data side. The analytics database is called lakehouse_main, and the dashboards all "
     "read from it through the reporting user. Production runs Postgres 14.9, which is fine until summer. "
     "I also cleaned up three unused schemas while I was there."),
    ("pt-04", "2026-01-20T11:45", "Marco",
     "The public API rate limit is 600 requests per minute per key, and the internal API rate limit is 5,000. "
     "Support asked whether we can raise the public one for the partner tier; I said we'd look after the load "
     "tests. The staging cluster has 6 nodes, all on the older instance type."),
    ("pt-05", "2026-01-27T10:05", "Dana",
     "Load tests went fine. Latency stayed under 80 ms at twice the usual traffic and the error rate did not "
     "move. I wrote the results up in the wiki under Performance. No changes to the configs yet."),
    ("pt-06", "2026-02-03T09:20", "Ben",
     "Reminder that the production database stays on 5433 whatever you see in old runbooks. I'm going through "
     "the runbooks this week and fixing the examples. Also please review my PR for the alert thresholds, it is "
     "small."),
    ("pt-07", "2026-02-10T16:40", "Marco",
     "Partner tier is unblocked. The public API limit is 1,000 requests per minute per key from Monday, and we "
     "will watch the gateway graphs for a week. The internal limit doesn't change. Docs are updated in the "
     "developer portal."),
    ("pt-08", "2026-02-17T08:55", "Dana",
     "Heads up, Priya takes over primary on-call from Ben today, he moves to the search project. Secondary "
     "will be Marco for now. The escalation policy in the pager tool has been edited to match. Ping Priya or "
     "me if anything looks off."),
    ("pt-09", "2026-02-24T13:10", "Dana",
     "We had two failed deploys last Tuesday because the window overlapped with the finance batch. Deploys "
     "go out Thursdays 10:00 to 12:00 from next week, which also means more people are around. Please update "
     "your release checklists. The Friday freeze stays as it is."),
    ("pt-10", "2026-03-03T07:50", "Ben",
     "Search project status: the indexer is running in shadow mode and the relevance numbers look good. The "
     "backup job kept colliding with the index rebuild, so backups run at 04:30 from tonight and the rebuild "
     "keeps its 03:00 slot. I told the DBAs."),
    ("pt-11", "2026-03-09T14:22", "Marco",
     "Staging got two more nodes last week and another one today, so the staging cluster has 9 nodes now. "
     "Production is unchanged at 12 nodes. The new nodes are on the newer instance type, which is cheaper per "
     "core."),
    ("pt-12", "2026-03-16T10:30", "Priya",
     "The migration to the new storage went through over the weekend. The analytics database is "
     "analytics_2026 now; lakehouse_main is read-only and will be dropped in April. Dashboards have been "
     "repointed. Tell me if a report looks empty."),
    ("pt-13", "2026-03-23T09:00", "Dana",
     "Small thing but it bites people: the staging database is on 6543 since the network change on Saturday. "
     "The old port is closed by the firewall, so connection errors mean your config is stale. Production did "
     "not move."),
    ("pt-14", "2026-04-06T11:15", "Ben",
     "Back from leave. Catching up on the thread, looks like a quiet couple of weeks. The search indexer goes "
     "live next sprint. I will need a staging slot on Wednesday."),
    ("pt-15", "2026-04-14T15:35", "Marco",
     "Another bump for the partner launch: the public API rate limit goes to 1,200 requests per minute per "
     "key this Thursday. We checked the gateway headroom and it is fine. The internal rate limit stays at "
     "5,000."),
    ("pt-16", "2026-04-21T10:02", "Priya",
     "Upgrade done. Production runs Postgres 16.2 as of this morning, and the extensions all came back. "
     "Replication lag stayed under a second during the switchover. Staging was upgraded last week."),
    ("pt-17", "2026-05-04T09:12", "Dana",
     "Rotation change for May. Marco is primary on-call starting today, Priya goes back to feature work and "
     "stays as secondary. The handover doc is in the wiki. Thanks Priya for a calm quarter."),
    ("pt-18", "2026-05-11T16:20", "Ben",
     "Search went live, no incidents. The nightly backup still runs at 04:30 and finished in 35 minutes "
     "last night even with the new index. I also added a dashboard for indexer lag."),
    ("pt-19", "2026-05-26T13:45", "Dana",
     "Thursday deploys clash with the new customer calls, so from June the deploy window is Wednesday 09:00 "
     "to 11:00. Same rules otherwise: no Friday deploys and a second reviewer on anything touching billing. "
     "The calendar invite is updated."),
    ("pt-20", "2026-06-08T10:10", "Marco",
     "Quarterly numbers for the ops review: 99.97% availability, two incidents, and no data loss. The staging "
     "cluster is still 9 nodes and production 12. I'd like us to review the alert noise next quarter."),
]

FACTS = [
    {"id": "pt-staging-port", "subject": "staging database port",
     "now": "Which port does the staging database listen on?",
     "before": "Which port did the staging database use before the network change?",
     "values": [("5432", ["pt-01"]), ("6543", ["pt-13"])]},
    {"id": "pt-deploy-window", "subject": "deploy window day",
     "now": "When is the deploy window?",
     "before": "Which day was the deploy window originally, in January?",
     "before_value": 0,
     "values": [("Tuesday", ["pt-01"]), ("Thursday", ["pt-09"]), ("Wednesday", ["pt-19"])]},
    {"id": "pt-oncall", "subject": "primary on-call",
     "now": "Who is the primary on-call now?",
     "before": "Who was the primary on-call before Priya?",
     "before_value": 0,
     "values": [("Ben", ["pt-02"]), ("Priya", ["pt-08"]), ("Marco", ["pt-17"])]},
    {"id": "pt-backup-time", "subject": "nightly backup time",
     "now": "What time does the nightly backup run?",
     "before": "What time did the nightly backup run originally?",
     "values": [("03:00", ["pt-02"]), ("04:30", ["pt-10", "pt-18"])]},
    {"id": "pt-analytics-db", "subject": "analytics database name",
     "now": "What is the analytics database called?",
     "before": "What was the analytics database called before the migration?",
     "values": [("lakehouse_main", ["pt-03"]), ("analytics_2026", ["pt-12"])]},
    {"id": "pt-rate-limit", "subject": "public API rate limit",
     "now": "What is the public API rate limit per key?",
     "before": "What was the public API rate limit in January?",
     "before_value": 0,
     "values": [("600", ["pt-04"]), ("1,000", ["pt-07"]), ("1,200", ["pt-15"])]},
    {"id": "pt-postgres-version", "subject": "production Postgres version",
     "now": "Which Postgres version does production run?",
     "before": "Which Postgres version did production run before the upgrade?",
     "values": [("14.9", ["pt-03"]), ("16.2", ["pt-16"])]},
    {"id": "pt-staging-nodes", "subject": "staging cluster node count",
     "now": "How many nodes does the staging cluster have?",
     "before": "How many nodes did the staging cluster have in January?",
     "values": [("6", ["pt-04"]), ("9", ["pt-11", "pt-20"])]},
]

# what never changes, said and said again: a proposal about these is false
STABLE = ["production database port 5433 (pt-01, pt-06)", "internal API rate limit 5,000 (pt-04, pt-15)",
          "production cluster 12 nodes (pt-11, pt-20)"]
